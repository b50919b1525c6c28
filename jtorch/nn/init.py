"""`torch.nn.init`: PyTorch's initialisers, with its fan and gain computations.

Every initialiser writes in place under `no_grad` and returns the tensor, as
PyTorch's do. Random streams are jtorch's (seeded by `manual_seed`); the
distributions are PyTorch's.
"""

from __future__ import annotations

import inspect
import math
import warnings

from .. import _torch_function
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
]


def calculate_gain(nonlinearity: str, param=None) -> float:
    """Matches `torch.nn.init.calculate_gain`."""
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _no_grad(fn):
    def wrapper(*args, **kwargs):
        with grad_mode.no_grad():
            return fn(*args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn  # inspect.signature shows fn's
    return wrapper


def _overridable(fn):
    """As PyTorch's `uniform_`, `normal_`, `constant_` and `kaiming_uniform_` do, the call
    goes to `__torch_function__` (modes, tensor subclasses) first, every argument passed
    by keyword."""
    signature = inspect.signature(fn)

    def wrapper(*args, **kwargs):
        if _torch_function.active:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            tensor = bound.arguments["tensor"]
            if _torch_function.wants((tensor,)):
                return _torch_function.handle_torch_function(wrapper, (tensor,), **bound.arguments)
        return fn(*args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


@_overridable
@_no_grad
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Matches `torch.nn.init.uniform_`."""
    return tensor.uniform_(a, b, generator=generator)


@_overridable
@_no_grad
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Matches `torch.nn.init.normal_`."""
    return tensor.normal_(mean, std, generator=generator)


@_no_grad
def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator=None,
) -> Tensor:
    """Matches `torch.nn.init.trunc_normal_`: inverse-CDF sampling of the truncated normal."""

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
            "distribution of values may be incorrect.",
            stacklevel=2,
        )
    lo = norm_cdf((a - mean) / std)
    hi = norm_cdf((b - mean) / std)
    tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
    tensor.erfinv_()
    tensor.mul_(std * math.sqrt(2.0))
    tensor.add_(mean)
    tensor.clamp_(min=a, max=b)
    return tensor


@_overridable
@_no_grad
def constant_(tensor: Tensor, val: float) -> Tensor:
    return tensor.fill_(val)


@_no_grad
def ones_(tensor: Tensor) -> Tensor:
    return tensor.fill_(1.0)


@_no_grad
def zeros_(tensor: Tensor) -> Tensor:
    return tensor.zero_()


@_no_grad
def eye_(tensor: Tensor) -> Tensor:
    """Matches `torch.nn.init.eye_` (2-D tensors only)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .. import eye

    return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype))


@_no_grad
def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Matches `torch.nn.init.dirac_` (3, 4 or 5-D tensors)."""
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    tensor.zero_()
    for g in range(groups):
        for d in range(min_dim):
            centre = tuple(s // 2 for s in tensor.shape[2:])
            tensor[(g * out_chans_per_grp + d, d) + centre] = 1
    return tensor


@_no_grad
def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return tensor.uniform_(-a, a, generator=generator)


@_no_grad
def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return tensor.normal_(0.0, std, generator=generator)


@_overridable
@_no_grad
def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """Matches `torch.nn.init.kaiming_uniform_`."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return tensor.uniform_(-bound, bound, generator=generator)


@_no_grad
def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """Matches `torch.nn.init.kaiming_normal_`."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return tensor.normal_(0, gain / math.sqrt(fan), generator=generator)


@_no_grad
def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Matches `torch.nn.init.orthogonal_`: QR of a normal matrix, signs fixed by diag(R)."""
    from .. import linalg

    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    if rows < cols:
        flattened = flattened.t()
    q, r = linalg.qr(flattened)
    d = r.diagonal()
    q = q * d.sign()
    if rows < cols:
        q = q.t()
    tensor.view_as(q).copy_(q)
    tensor.mul_(gain)
    return tensor


@_no_grad
def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Matches `torch.nn.init.sparse_`: a fraction of each column's rows set to zero."""
    from .. import randperm

    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    tensor.normal_(0, std, generator=generator)
    for col_idx in range(cols):
        row_indices = randperm(rows, generator=generator)
        zero_indices = row_indices[:num_zeros]
        tensor[zero_indices, col_idx] = 0
    return tensor


# PyTorch's deprecated non-underscore names.
def _deprecated(fn):
    def wrapper(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{fn.__name__[:-1]}` is now deprecated in favor of `nn.init.{fn.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return fn(*args, **kwargs)

    return wrapper


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
