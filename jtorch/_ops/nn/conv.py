"""Convolutions (`conv1d`..`conv_transpose3d`) and im2col/col2im (`unfold`, `fold`).

Convolutions run through `jax.lax.conv_general_dilated` at HIGHEST precision, so float32
results match PyTorch's CPU kernels rather than TPU/GPU bf16 passes.
"""

import math

import jax
import jax.numpy as jnp

from ..._dtype import c10_name
from .._registry import NONE, T, op

_C10 = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long",
    "int32": "int",
    "int16": "short",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def expand_param(value, n: int, name: str) -> tuple:
    """`stride=2` or `stride=(2, 2)` as an n-tuple, with torch's error for a wrong length."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return tuple(value) * n
        if len(value) != n:
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {n} "
                f"values to match the convolution dimensions, but got "
                f"{name}={list(value)}"
            )
        return tuple(value)
    return (value,) * n


def _same_padding(kernel, dilation):
    """PyTorch's 'same': total padding d*(k-1), the odd element going to the end."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return pads


def _check_common(input, weight, bias, nd, name, stride, dilation, groups):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
            f"{name}, but got input of size: {list(input.shape)}"
        )
    if weight.ndim != nd + 2:
        raise RuntimeError(
            f"Expected {nd + 2}-dimensional input for {nd + 2}-dimensional weight "
            f"{list(weight.shape)}, but got {input.ndim}-dimensional input of "
            f"size {list(input.shape)} instead"
        )
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"Input type (torch.{c10_name(input.dtype)}Tensor) and weight type "
            f"(torch.{c10_name(weight.dtype)}Tensor) should be the same or "
            f"input should be a MKLDNN tensor and weight is a dense tensor"
        )
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(
            f"Input type ({_C10[input.dtype.name]}) and bias type "
            f"({_C10[bias.dtype.name]}) should be the same"
        )
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


def _dims(nd):
    sp = "DHW"[-nd:] if nd <= 3 else None
    return ("NC" + sp, "OI" + sp, "NC" + sp)


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    stride = expand_param(stride, nd, "stride")
    dilation = expand_param(dilation, nd, "dilation")
    _check_common(input, weight, bias, nd, name, stride, dilation, groups)
    kernel = weight.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = _same_padding(kernel, dilation)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = expand_param(padding, nd, "padding")
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
        pads = [(p, p) for p in padding]
    unbatched = input.ndim == nd + 1
    if unbatched:
        input = input[None]
    cin = input.shape[1]
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} "
            f"at dimension 0, but got weight of size {list(weight.shape)} instead"
        )
    if cin != weight.shape[1] * groups:
        shown = list(input.shape[1:]) if unbatched else list(input.shape)
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{shown} to have {weight.shape[1] * groups} channels, but got "
            f"{cin} channels instead"
        )
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be "
            f"1-dimensional with {weight.shape[0]} elements, but got bias of size "
            f"{list(bias.shape)} instead"
        )
    padded = [n + lo + hi for n, (lo, hi) in zip(input.shape[2:], pads)]
    eff = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(
            f"Calculated padded input size per channel: "
            f"({' x '.join(map(str, padded))}). Kernel size: "
            f"({' x '.join(map(str, eff))}). Kernel size can't be greater than "
            f"actual input size"
        )
    out = jax.lax.conv_general_dilated(
        input,
        weight,
        window_strides=stride,
        padding=pads,
        rhs_dilation=dilation,
        feature_group_count=groups,
        dimension_numbers=_dims(nd),
        precision=jax.lax.Precision.HIGHEST,
        preferred_element_type=input.dtype,
    )
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * nd)
    return out[0] if unbatched else out


def _conv_transpose(
    input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name
):
    stride = expand_param(stride, nd, "stride")
    dilation = expand_param(dilation, nd, "dilation")
    padding = expand_param(padding, nd, "padding")
    output_padding = expand_param(output_padding, nd, "output_padding")
    _check_common(input, weight, bias, nd, name, stride, dilation, groups)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        axes = (
            ["height", "width"]
            if nd == 2
            else (["depth", "height", "width"] if nd == 3 else ["width"])
        )
        if nd == 1:
            detail = (
                f"output_padding: {output_padding[0]} stride: {stride[0]} dilation: {dilation[0]}"
            )
        else:
            detail = " ".join(
                [f"output_padding_{a}: {v}" for a, v in zip(axes, output_padding)]
                + [f"stride_{a}: {v}" for a, v in zip(axes, stride)]
                + [f"dilation_{a}: {v}" for a, v in zip(axes, dilation)]
            )
        raise RuntimeError(
            f"output padding must be smaller than either stride or dilation, but got {detail}"
        )
    unbatched = input.ndim == nd + 1
    if unbatched:
        input = input[None]
    cin = input.shape[1]
    if cin != weight.shape[0]:
        shown = list(input.shape[1:]) if unbatched else list(input.shape)
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"input{shown} to have {weight.shape[0]} channels, but got {cin} "
            f"channels instead"
        )
    if cin % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} "
            f"at dimension 0, but got weight of size {list(weight.shape)} instead"
        )
    cout = weight.shape[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != cout):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"bias to be 1-dimensional with {cout} elements, but got bias of size "
            f"{list(bias.shape)} instead"
        )
    kernel = weight.shape[2:]
    # The transposed convolution is the gradient of a convolution: dilate the input by the
    # stride, pad by d*(k-1)-p (plus output_padding at the end), and convolve with the
    # spatially flipped kernel whose in/out channels are swapped within each group.
    g, cin_g, cout_g = groups, cin // groups, weight.shape[1]
    w = weight.reshape((g, cin_g, cout_g) + kernel)
    w = jnp.swapaxes(w, 1, 2).reshape((g * cout_g, cin_g) + kernel)
    w = jnp.flip(w, axis=tuple(range(2, 2 + nd)))
    pads = [
        (d * (k - 1) - p, d * (k - 1) - p + o)
        for k, d, p, o in zip(kernel, dilation, padding, output_padding)
    ]
    out = jax.lax.conv_general_dilated(
        input,
        w,
        window_strides=(1,) * nd,
        padding=pads,
        lhs_dilation=stride,
        rhs_dilation=dilation,
        feature_group_count=groups,
        dimension_numbers=_dims(nd),
        precision=jax.lax.Precision.HIGHEST,
        preferred_element_type=input.dtype,
    )
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * nd)
    return out[0] if unbatched else out


def _conv_node(n: int):
    """PyTorch's node of an `n`-d convolution: ConvolutionBackward0, or SqueezeBackward1 for an
    unbatched input (PyTorch adds the batch dim, then squeezes it off)."""
    return lambda input: "SqueezeBackward1" if input.ndim == n + 1 else "ConvolutionBackward0"


@op(
    name="nn.functional.conv1d",
    aliases=("conv1d",),
    promote=NONE,
    method=False,
    out=False,
    node=_conv_node(1),
)
def conv1d(input: T, weight: T, bias: T = None, stride=1, padding=0, dilation=1, groups=1):
    """Matches `torch.nn.functional.conv1d`."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@op(
    name="nn.functional.conv2d",
    aliases=("conv2d",),
    promote=NONE,
    method=False,
    out=False,
    node=_conv_node(2),
)
def conv2d(input: T, weight: T, bias: T = None, stride=1, padding=0, dilation=1, groups=1):
    """Matches `torch.nn.functional.conv2d`."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@op(
    name="nn.functional.conv3d",
    aliases=("conv3d",),
    promote=NONE,
    method=False,
    out=False,
    node=_conv_node(3),
)
def conv3d(input: T, weight: T, bias: T = None, stride=1, padding=0, dilation=1, groups=1):
    """Matches `torch.nn.functional.conv3d`."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


@op(
    name="nn.functional.conv_transpose1d",
    aliases=("conv_transpose1d",),
    promote=NONE,
    method=False,
    out=False,
    node=_conv_node(1),
)
def conv_transpose1d(
    input: T, weight: T, bias: T = None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """Matches `torch.nn.functional.conv_transpose1d`."""
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        1,
        "conv_transpose1d",
    )


@op(
    name="nn.functional.conv_transpose2d",
    aliases=("conv_transpose2d",),
    promote=NONE,
    method=False,
    out=False,
    node=_conv_node(2),
)
def conv_transpose2d(
    input: T, weight: T, bias: T = None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """Matches `torch.nn.functional.conv_transpose2d`."""
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        2,
        "conv_transpose2d",
    )


@op(
    name="nn.functional.conv_transpose3d",
    aliases=("conv_transpose3d",),
    promote=NONE,
    method=False,
    out=False,
    node=_conv_node(3),
)
def conv_transpose3d(
    input: T, weight: T, bias: T = None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """Matches `torch.nn.functional.conv_transpose3d`."""
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        3,
        "conv_transpose3d",
    )


# ---------------------------------------------------------------------------
# im2col / col2im


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _check_float(input, kernel_name):
    if not (
        jnp.issubdtype(input.dtype, jnp.floating)
        or jnp.issubdtype(input.dtype, jnp.complexfloating)
    ):
        raise NotImplementedError(
            f"\"{kernel_name}\" not implemented for '{c10_name(input.dtype)}'"
        )


@op(name="nn.functional.unfold", promote=NONE, method=False, out=False, node="Im2ColBackward0")
def unfold(input: T, kernel_size, dilation=1, padding=0, stride=1):
    """Matches `torch.nn.functional.unfold` (im2col): (N, C*kh*kw, L) column blocks."""
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got: [{', '.join(map(str, input.shape))}]"
        )
    if input.dtype != jnp.bool_:  # PyTorch's im2col takes bool, but not integers
        _check_float(input, "im2col_out_cpu")
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    unbatched = input.ndim == 3
    x = input[None] if unbatched else input
    n, c, h, w = x.shape
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, "
            f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
            f"calculated shape of the array of sliding blocks as ({oh}, {ow}), but "
            f"its components must be at least one."
        )
    x = jnp.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    blocks = [
        x[
            :,
            :,
            i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0],
            j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1],
        ]
        for i in range(k[0])
        for j in range(k[1])
    ]
    out = jnp.stack(blocks, axis=2).reshape(n, c * k[0] * k[1], oh * ow)
    return out[0] if unbatched else out


@op(name="nn.functional.fold", promote=NONE, method=False, out=False)
def fold(input: T, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Matches `torch.nn.functional.fold` (col2im): overlapping blocks are summed."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got: [{', '.join(map(str, input.shape))}]"
        )
    _check_float(input, "col2im_out_cpu")
    o, k, d = _pair(output_size), _pair(kernel_size), _pair(dilation)
    p, s = _pair(padding), _pair(stride)
    unbatched = input.ndim == 2
    x = input[None] if unbatched else input
    n, ck, length = x.shape
    kk = k[0] * k[1]
    if ck % kk:
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product "
            f"of kernel_size, but got input.size(1)={ck} and "
            f"kernel_size=({k[0]}, {k[1]})."
        )
    bh = (o[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    bw = (o[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if bh * bw != length:
        raise RuntimeError(
            f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
            f"stride=({s[0]}, {s[1]}), expected size of input's dimension 2 to "
            f"match the calculated number of sliding blocks {bh} * {bw} = "
            f"{bh * bw}, but got input.size(2)={length}."
        )
    c = ck // kk
    cols = x.reshape(n, c, k[0], k[1], bh, bw)
    out = jnp.zeros((n, c, o[0] + 2 * p[0], o[1] + 2 * p[1]), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out = out.at[
                :,
                :,
                i * d[0] : i * d[0] + s[0] * (bh - 1) + 1 : s[0],
                j * d[1] : j * d[1] + s[1] * (bw - 1) + 1 : s[1],
            ].add(cols[:, :, i, j])
    out = out[:, :, p[0] : p[0] + o[0], p[1] : p[1] + o[1]]
    return out[0] if unbatched else out


def conv_output_size(size, kernel, stride, padding, dilation):
    """Spatial output length of a convolution or pooling window (floor mode)."""
    return math.floor((size + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1
