"""`torch._C._nn`: argument parsing PyTorch exposes there, and its nn kernels by name."""

from __future__ import annotations

from .. import _layout
from .._ops.conversion import _parse_to as _parse_tensor_to


def _parse_to(*args, **kwargs) -> tuple:
    """Matches `torch._C._nn._parse_to`: `Tensor.to`'s arguments as
    (device, dtype, non_blocking, memory_format)."""
    kwargs = dict(kwargs)
    memory_format = kwargs.pop("memory_format", None)
    if memory_format is not None and not isinstance(memory_format, _layout.memory_format):
        raise TypeError(
            f"to() received an invalid combination of arguments - got "
            f"memory_format={type(memory_format).__name__}"
        )
    device, dtype, non_blocking, copy = _parse_tensor_to(args, kwargs)
    if copy or "copy" in kwargs:
        raise RuntimeError(".to() does not accept copy argument")
    return device, dtype, non_blocking, memory_format


def __getattr__(name: str):
    # PyTorch's `_C._nn` holds its nn kernels (`gelu`, `linear`, `pad`...), the functions
    # `torch.nn.functional` calls: they are the same functions here.
    if name in _KERNELS:
        from ..nn import functional

        return getattr(functional, name)
    raise AttributeError(f"module 'torch._C._nn' has no attribute '{name}'")


# Those whose signature is F's (PyTorch's `_C._nn` losses take reduction as an enum int,
# its `elu` other parameters: those are not offered).
_KERNELS = frozenset(
    {
        "adaptive_avg_pool2d",
        "adaptive_avg_pool3d",
        "avg_pool2d",
        "avg_pool3d",
        "gelu",
        "glu",
        "hardsigmoid",
        "hardswish",
        "hardtanh",
        "leaky_relu",
        "linear",
        "mish",
        "one_hot",
        "pad",
        "relu6",
        "scaled_dot_product_attention",
        "silu",
        "softplus",
        "softshrink",
    }
)
