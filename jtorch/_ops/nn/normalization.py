"""Normalization kernels: layer, group, batch, instance and RMS norm, LRN, `normalize`.

Statistics are computed in float32 for half types and results come back in the
input's dtype, as PyTorch's CPU kernels do. Variances are biased for the
normalization itself; the running variance of batch/instance norm is updated
with the unbiased one (PyTorch's rule). Running statistics are written in
place into the given tensors after the kernel returns their new values.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np

from ..._dtype import c10_name
from ..._tensor import wrap_dim
from .. import _derivatives, _registry
from .._kernel_helpers import accumulate, need_float, private_op
from .._registry import INT_TO_FLOAT, NONE, T, composite, op
from .._rows import Rows

norm_op = lambda promote=NONE, **kw: op(promote=promote, method=False, out=False, **kw)  # noqa: E731


def _shape_list(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _normalized_shape(normalized_shape) -> tuple:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(n) for n in normalized_shape)


def _stats(x, axes):
    """Mean and biased variance over `axes` (kept), in the computation dtype."""
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    return mean, var


def _check_affine(name, t, shape) -> None:
    if t is not None and tuple(t.shape) != tuple(shape):
        raise RuntimeError(
            f"Expected {name} to be of same shape as normalized_shape, but got "
            f"{name} of shape {_shape_list(t.shape)} and normalized_shape = "
            f"{_shape_list(shape)}"
        )


# ---------------------------------------------------------------------------
# Layer norm and RMS norm


def _layer_norm(input, normalized_shape, weight, bias, eps):
    shape = _normalized_shape(normalized_shape)
    if not shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., "
            "containing at least one element, but got normalized_shape = []"
        )
    _check_affine("weight", weight, shape)
    _check_affine("bias", bias, shape)
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={_shape_list(shape)}, expected input with "
            f"shape [*, {', '.join(str(n) for n in shape)}], but got input of "
            f"size{_shape_list(input.shape)}"
        )
    need_float("LayerNormKernelImpl", input)
    x = accumulate(input)
    axes = tuple(range(input.ndim - k, input.ndim))
    mean, var = _stats(x, axes)
    rstd = jax.lax.rsqrt(var + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * accumulate(weight)
    if bias is not None:
        out = out + accumulate(bias)
    return out.astype(input.dtype), mean.astype(input.dtype), rstd.astype(input.dtype)


@norm_op()
def native_layer_norm(input: T, normalized_shape, weight: T, bias: T, eps):
    return _layer_norm(input, normalized_shape, weight, bias, eps)


# A norm over the last dims: each row of the dim before them is its own.
_NORM_ROWS = Rows(
    ("input",), dim=lambda normalized_shape: -1 - len(_normalized_shape(normalized_shape))
)


@norm_op(name="nn.functional.layer_norm", node="NativeLayerNormBackward0", rows=_NORM_ROWS)
def layer_norm(input: T, normalized_shape, weight: T = None, bias: T = None, eps=1e-5):
    return _layer_norm(input, normalized_shape, weight, bias, eps)[0]


@composite(name="layer_norm", method=False)
def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """Matches `torch.layer_norm`."""
    return layer_norm(input, normalized_shape, weight, bias, eps)


@norm_op(name="nn.functional.rms_norm", aliases=("rms_norm",), node="MulBackward0", rows=_NORM_ROWS)
def rms_norm(input: T, normalized_shape, weight: T = None, eps=None):
    shape = _normalized_shape(normalized_shape)
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={_shape_list(shape)}, expected input with "
            f"shape [*{', '.join(str(n) for n in shape)}], but got input of "
            f"size{_shape_list(input.shape)}"
        )
    _check_affine("weight", weight, shape)
    x = accumulate(input)
    if eps is None:
        # PyTorch's default: the machine epsilon of the computation dtype.
        eps = float(jnp.finfo(x.dtype).eps)
    axes = tuple(range(input.ndim - k, input.ndim))
    ms = jnp.mean(x * x if not jnp.iscomplexobj(x) else jnp.abs(x) ** 2, axis=axes, keepdims=True)
    out = (x * jax.lax.rsqrt(ms + eps)).astype(input.dtype)
    if weight is not None:
        out = out * weight
    return out.astype(input.dtype)


# ---------------------------------------------------------------------------
# Group norm


def _group_norm(input, weight, bias, n, c, hxw, group, eps):
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    if c % group:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, "
            f"but got input of shape {_shape_list(input.shape)} and "
            f"num_groups={group}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of "
                f"channels in input, but got {name} of shape "
                f"{_shape_list(t.shape)} and input of shape "
                f"{_shape_list(input.shape)}"
            )
    need_float("GroupNormKernelImpl", input)
    x = accumulate(input).reshape(n, group, (c // group) * hxw)
    mean, var = _stats(x, (2,))
    rstd = jax.lax.rsqrt(var + eps)
    out = ((x - mean) * rstd).reshape(input.shape)
    bshape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * accumulate(weight).reshape(bshape)
    if bias is not None:
        out = out + accumulate(bias).reshape(bshape)
    dt = input.dtype
    return out.astype(dt), mean.reshape(n, group).astype(dt), rstd.reshape(n, group).astype(dt)


@norm_op()
def native_group_norm(input: T, weight: T, bias: T, N, C, HxW, group, eps):
    return _group_norm(input, weight, bias, N, C, HxW, group, eps)


@norm_op(name="group_norm", node="NativeGroupNormBackward0")
def _torch_group_norm(
    input: T, num_groups, weight: T = None, bias: T = None, eps=1e-5, cudnn_enabled=True
):
    """Matches `torch.group_norm`."""
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    n, c = input.shape[0], input.shape[1]
    return _group_norm(input, weight, bias, n, c, math.prod(input.shape[2:]), num_groups, eps)[0]


def _verify_batch_size(size) -> None:
    if size[0] * math.prod(size[2:]) == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


@composite(name="nn.functional.group_norm", method=False)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Matches `torch.nn.functional.group_norm`."""
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    # PyTorch checks, before the kernel, that each group has more than one value.
    _verify_batch_size(
        type(input.shape)(
            [input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:])
        )
    )
    return _torch_group_norm(input, num_groups, weight, bias, eps)


# ---------------------------------------------------------------------------
# Batch norm (and instance norm, which is batch norm over N*C channels)


def _save_dtype(input, *params):
    """PyTorch keeps saved statistics in float32 only for a half input with float32 params."""
    if input.dtype in (jnp.float16, jnp.bfloat16) and any(
        p is not None and p.dtype == jnp.float32 for p in params
    ):
        return jnp.float32
    return input.dtype


def _batch_norm_kernel(
    input: T, weight: T, bias: T, running_mean: T, running_var: T, training, momentum, eps, node
):
    """(out, save_mean, save_invstd, new_running_mean, new_running_var); `node` is the
    autograd node's name (the ATen op PyTorch's caller reaches)."""
    if input.ndim < 2 and input.size == 0:
        # PyTorch lets an empty 1-D batch through unchanged.
        empty = jnp.zeros((0,), input.dtype)
        return input, empty, empty, running_mean, running_var
    if input.ndim < 2:
        raise RuntimeError(f"Expected 2D or higher input to batch_norm, got {input.ndim}D")
    c = input.shape[1]
    # PyTorch's order: running stats first, then the affine parameters.
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if t is not None and t.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.size}")
    need_float("batch_norm_cpu", input)
    x = accumulate(input)
    bshape = (1, c) + (1,) * (input.ndim - 2)
    axes = (0,) + tuple(range(2, input.ndim))
    new_rm, new_rv = running_mean, running_var
    if training:
        mean, var = _stats(x, axes)
        mean, var = mean.reshape(c), var.reshape(c)
        invstd = jax.lax.rsqrt(var + eps)
        n = input.size // c
        if running_mean is not None:
            new_rm = (momentum * mean + (1 - momentum) * running_mean).astype(running_mean.dtype)
        if running_var is not None:
            # The running variance is the unbiased one.
            unbiased = var * (n / (n - 1)) if n > 1 else var * jnp.inf
            new_rv = (momentum * unbiased + (1 - momentum) * running_var).astype(running_var.dtype)
        save_mean, save_invstd = (
            mean.astype(_save_dtype(input, weight, bias, running_mean, running_var)),
            invstd,
        )
        save_invstd = save_invstd.astype(save_mean.dtype)
    else:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
        mean = accumulate(running_mean.astype(x.dtype)).reshape(c)
        invstd = 1 / jnp.sqrt(accumulate(running_var.astype(x.dtype)).reshape(c) + eps)
        save_mean = save_invstd = jnp.zeros(
            (0,), _save_dtype(input, weight, bias, running_mean, running_var)
        )
    out = (x - mean.reshape(bshape)) * invstd.reshape(bshape)
    if weight is not None:
        out = out * accumulate(weight).reshape(bshape)
    if bias is not None:
        out = out + accumulate(bias).reshape(bshape)
    return out.astype(input.dtype), save_mean, save_invstd, new_rm, new_rv


# named by its caller (native_batch_norm, _native_batch_norm_legit, ...): its `node` argument
_batch_norm_call, _ = private_op(_batch_norm_kernel, promote=NONE, node=lambda node: node)


def _update_running(running_mean, running_var, new_rm, new_rv) -> None:
    if running_mean is not None:
        running_mean._write(new_rm._array)
    if running_var is not None:
        running_var._write(new_rv._array)


def _batch_norm(
    input,
    weight,
    bias,
    running_mean,
    running_var,
    training,
    momentum,
    eps,
    node="NativeBatchNormBackward0",
):
    out, save_mean, save_invstd, new_rm, new_rv = _batch_norm_call(
        input,
        weight,
        bias,
        running_mean,
        running_var,
        bool(training),
        float(momentum),
        float(eps),
        node,
    )
    if training:
        _update_running(running_mean, running_var, new_rm, new_rv)
    return out, save_mean, save_invstd


@composite(method=False)
def native_batch_norm(
    input, weight, bias, running_mean, running_var, training, momentum, eps, *, out=None
):
    """Matches `torch.native_batch_norm`: (output, save_mean, save_invstd)."""
    res = _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
    return res if out is None else _registry.write_out(res, tuple(out))


@composite(method=False, publish=True)
def _native_batch_norm_legit(input, weight, bias, *args):
    """Matches `torch._native_batch_norm_legit`.

    Its two overloads: (..., running_mean, running_var, training, momentum, eps) and, without
    running statistics, (..., training, momentum, eps).
    """
    if len(args) == 3:
        return _batch_norm(
            input, weight, bias, None, None, *args, node="NativeBatchNormLegitBackward1"
        )
    if len(args) != 5:
        raise TypeError(
            f"_native_batch_norm_legit() takes 6 or 8 arguments ({3 + len(args)} given)"
        )
    return _batch_norm(input, weight, bias, *args, node="NativeBatchNormLegitBackward0")


@composite(method=False, publish=True)
def _native_batch_norm_legit_no_training(
    input, weight, bias, running_mean, running_var, momentum, eps
):
    """Matches `torch._native_batch_norm_legit_no_training`."""
    return _batch_norm(
        input,
        weight,
        bias,
        running_mean,
        running_var,
        False,
        momentum,
        eps,
        node="NativeBatchNormLegitNoTrainingBackward0",
    )


@composite(method=False, publish=True)
def _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """Matches `torch.ops.aten._batch_norm_with_update`: training-mode batch norm that updates
    the running statistics; (output, save_mean, save_invstd, reserve). The reserve is cuDNN's
    workspace, empty on every other backend."""
    import jtorch

    res = _batch_norm(
        input,
        weight,
        bias,
        running_mean,
        running_var,
        True,
        momentum,
        eps,
        "BatchNormWithUpdateBackward0",
    )
    return (*res, jtorch.empty(0, dtype=jtorch.uint8, device=input.device))


@composite(name="batch_norm", method=False)
def _torch_batch_norm(
    input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True
):
    """Matches `torch.batch_norm`."""
    node = _batch_norm_node(input, weight, bias)
    return _batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps, node
    )[0]


def _batch_norm_node(input, weight, bias) -> str:
    """torch.batch_norm's node: native_batch_norm's, or on an empty batch the last op of
    `input.clone() (* weight) (+ bias)`, which PyTorch runs instead."""
    if input.numel():
        return "NativeBatchNormBackward0"
    return (
        "AddBackward0"
        if bias is not None
        else "MulBackward0"
        if weight is not None
        else "CloneBackward0"
    )


@composite(name="nn.functional.batch_norm", method=False)
def batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    """Matches `torch.nn.functional.batch_norm`."""
    if training:
        _verify_batch_size(input.shape)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    node = _batch_norm_node(input, weight, bias)
    return _batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps, node
    )[0]


def _instance_norm_kernel(
    input: T, weight: T, bias: T, running_mean: T, running_var: T, use_input_stats, momentum, eps
):
    """(out, new_running_mean, new_running_var): batch norm of each (sample, channel)."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected 2D or higher input to instance_norm, got {input.ndim}D")
    b, c = input.shape[0], input.shape[1]
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    need_float("batch_norm_cpu", input)
    x = accumulate(input)
    bshape = (1, c) + (1,) * (input.ndim - 2)
    new_rm, new_rv = running_mean, running_var
    if use_input_stats:
        axes = tuple(range(2, input.ndim))
        mean, var = _stats(x, axes)
        out = (x - mean) * jax.lax.rsqrt(var + eps)
        n = math.prod(input.shape[2:])
        if running_mean is not None:
            m = jnp.mean(mean.reshape(b, c), axis=0)
            new_rm = (momentum * m + (1 - momentum) * running_mean).astype(running_mean.dtype)
        if running_var is not None:
            v = jnp.mean(var.reshape(b, c), axis=0) * (n / (n - 1) if n > 1 else jnp.inf)
            new_rv = (momentum * v + (1 - momentum) * running_var).astype(running_var.dtype)
    else:
        mean = accumulate(running_mean.astype(x.dtype)).reshape(bshape)
        var = accumulate(running_var.astype(x.dtype)).reshape(bshape)
        out = (x - mean) / jnp.sqrt(var + eps)
    if weight is not None:
        out = out * accumulate(weight).reshape(bshape)
    if bias is not None:
        out = out + accumulate(bias).reshape(bshape)
    return out.astype(input.dtype), new_rm, new_rv


_instance_norm_call, _ = private_op(_instance_norm_kernel, promote=NONE)


@composite(name="instance_norm", method=False)
def _torch_instance_norm(
    input,
    weight,
    bias,
    running_mean,
    running_var,
    use_input_stats,
    momentum,
    eps,
    cudnn_enabled=True,
):
    """Matches `torch.instance_norm`."""
    out, new_rm, new_rv = _instance_norm_call(
        input,
        weight,
        bias,
        running_mean,
        running_var,
        bool(use_input_stats),
        float(momentum),
        float(eps),
    )
    if use_input_stats:
        _update_running(running_mean, running_var, new_rm, new_rv)
    return out


@composite(name="nn.functional.instance_norm", method=False)
def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """Matches `torch.nn.functional.instance_norm`."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {input.shape}"
        )
    return _torch_instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps
    )


# ---------------------------------------------------------------------------
# Local response norm and normalize


def _lrn_window_mean(input: T, size):
    """The mean of squares over `size` neighbouring channels, zero-padded as PyTorch pads."""
    sq = input * input
    pad = [(0, 0)] * input.ndim
    pad[1] = (size // 2, (size - 1) // 2)
    sq = jnp.pad(sq, pad)
    window = (1, size) + (1,) * (input.ndim - 2)
    s = jax.lax.reduce_window(
        sq, np.zeros((), sq.dtype), jax.lax.add, window, (1,) * input.ndim, "VALID"
    )
    # PyTorch averages with avg_pool, which divides integer tensors with truncation.
    return s // size if jnp.issubdtype(s.dtype, jnp.integer) else s / size


def _lrn_scale(input: T, mean_sq: T, alpha, beta, k):
    return input / jnp.power(mean_sq * alpha + k, beta)


_lrn_mean_call, _ = private_op(_lrn_window_mean, promote=NONE)
_lrn_scale_call, _ = private_op(_lrn_scale, promote=INT_TO_FLOAT, node="DivBackward0")


@composite(name="nn.functional.local_response_norm", method=False)
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Matches `torch.nn.functional.local_response_norm`."""
    if input.ndim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input "
            f"(got {input.ndim} dimensions)"
        )
    if input.numel() == 0:
        return input
    return _lrn_scale_call(
        input, _lrn_mean_call(input, int(size)), float(alpha), float(beta), float(k)
    )


def vector_norm(x, p, axis, keepdim):
    """`torch.linalg.vector_norm` along `axis` for a float p (used by several kernels), with
    PyTorch's gradient at the singular points (`_derivatives.vector_norm`)."""

    def forward(x):
        a = jnp.abs(x)
        if p == math.inf:
            return jnp.max(a, axis=axis, keepdims=keepdim)
        if p == -math.inf:
            return jnp.min(a, axis=axis, keepdims=keepdim)
        if p == 0:
            return jnp.sum((a != 0).astype(a.dtype), axis=axis, keepdims=keepdim)
        if p == 1:
            return jnp.sum(a, axis=axis, keepdims=keepdim)
        if p == 2:
            return jnp.sqrt(jnp.sum(a * a, axis=axis, keepdims=keepdim))
        return jnp.sum(a**p, axis=axis, keepdims=keepdim) ** (1.0 / p)

    axes = (
        None
        if axis is None or not x.ndim
        else tuple(sorted(d % x.ndim for d in ((axis,) if isinstance(axis, int) else axis)))
    )
    return _derivatives.vector_norm(x, float(p), axes, keepdim, forward)


@op(name="nn.functional.normalize", method=False, promote=NONE)
def normalize(input: T, p=2.0, dim=1, eps=1e-12):
    if not (
        jnp.issubdtype(input.dtype, jnp.floating)
        or jnp.issubdtype(input.dtype, jnp.complexfloating)
    ):
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {c10_name(input.dtype)}"
        )
    d = wrap_dim(dim, input.ndim)
    x = accumulate(input)
    denom = jnp.maximum(vector_norm(x, float(p), d if input.ndim else None, True), eps)
    return (x / denom).astype(input.dtype)


def _norm_except_dim(v, pow, dim):
    if dim == -1:  # PyTorch: -1 means the norm of the whole tensor, not the last dim
        return vector_norm(v, float(pow), None, False)
    d = wrap_dim(dim, v.ndim)
    return vector_norm(v, float(pow), tuple(i for i in range(v.ndim) if i != d), True)


@op(method=False, out=False, promote=NONE)
def norm_except_dim(v: T, pow=2, dim=0):
    """Matches `torch.norm_except_dim`: the p-norm over every dim but `dim` (kept, size 1)."""
    return _norm_except_dim(v, pow, dim)


@op(name="_weight_norm", method=False, out=False, promote=NONE, publish=True)
def _weight_norm(v: T, g: T, dim=0):
    """Matches `torch._weight_norm`: `v * (g / norm_except_dim(v, 2, dim))`."""
    return v * (g / _norm_except_dim(v, 2, dim))


# ---------------------------------------------------------------------------
# Legacy cross-map LRN (`torch.nn.CrossMapLRN2d`)


def _cross_map_windows(c, size):
    """The channel windows of PyTorch's CrossMapLRN2d as 0/1 matrices (forward, backward).

    The forward window comes from PyTorch's running-sum loop, which (for c == pre_pad) keeps
    one channel too many; the backward is its own hand-written formula, not the exact
    gradient of that forward. Both are reproduced on purpose.
    """
    pre_pad = int((size - 1) / 2 + 1)
    fwd = np.zeros((c, c))
    fwd[0, : min(pre_pad, c)] = 1
    for i in range(1, c):
        fwd[i] = fwd[i - 1]
        if i < c - pre_pad + 1:
            fwd[i, i + pre_pad - 1] += 1
        if i > pre_pad:
            fwd[i, i - pre_pad] -= 1
    inv = int(size - (size - 1) / 2)
    bwd = np.zeros((c, c))
    for i in range(c):
        lo, hi = max(i - inv, 0), min(i + size - 1 - inv, c - 1)
        bwd[i, lo : hi + 1] = 1
    return fwd, bwd


def _cross_map_lrn2d_kernel(input: T, size, alpha, beta, k):
    need_float("CrossMapLRN2d", input)
    fwd, bwd = _cross_map_windows(input.shape[1], size)
    # numpy constants: a custom_vjp rule must not close over traced values.
    fwd, bwd = fwd.astype(input.dtype), bwd.astype(input.dtype)

    def scale_of(x):
        return jnp.einsum("cj,njhw->nchw", fwd, x * x) * (alpha / size) + k

    @jax.custom_vjp
    def lrn(x):
        return x * scale_of(x) ** -beta

    def lrn_fwd(x):
        scale = scale_of(x)
        out = x * scale**-beta
        return out, (x, out, scale)

    def lrn_bwd(res, g):
        x, out, scale = res
        acc = jnp.einsum("cj,njhw->nchw", bwd, g * out / scale)
        return (scale**-beta * g - (2 * alpha * beta / size) * x * acc,)

    lrn.defvjp(lrn_fwd, lrn_bwd)
    return lrn(input)


_cross_map_lrn2d_call, _ = private_op(_cross_map_lrn2d_kernel, promote=NONE)


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """The kernel behind `torch.nn.CrossMapLRN2d` (PyTorch has no functional form)."""
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    return _cross_map_lrn2d_call(input, int(size), float(alpha), float(beta), float(k))
