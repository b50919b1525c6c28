"""Top-level torch functions that are not ops: predicates, result_type, layouts, knobs."""

from __future__ import annotations

import os

import numpy as np

from . import _dtype
from ._alias import install_as_torch  # noqa: F401
from ._tensor import Size, Tensor
from .autograd.grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_storage(obj) -> bool:
    return False


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    return input.dtype.is_complex


def is_nonzero(input: Tensor) -> bool:
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def numel(input: Tensor) -> int:
    return input.numel()


def typename(obj) -> str:
    if isinstance(obj, Tensor):
        names = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                 "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                 "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
                 "complex128": "ComplexDoubleTensor"}
        return "torch." + names.get(obj.dtype._name, "Tensor")
    return type(obj).__module__ + "." + type(obj).__qualname__


def result_type(tensor1, tensor2) -> _dtype.dtype:
    """Matches `torch.result_type`."""
    dims, zeros, scalars = [], [], []
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            (dims if x.ndim else zeros).append(x.dtype)
        else:
            scalars.append(x)
    return _dtype.result_type_of(dims, zeros, scalars)


def broadcast_shapes(*shapes) -> Size:
    """Matches `torch.broadcast_shapes`."""
    from ._ops._registry import broadcast_error
    norm = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in shapes]
    out = ()
    for s in norm:
        err = broadcast_error(out, s)
        if err is not None:
            raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  "
                               f"Mismatch is between arg 0 and arg {norm.index(s)}.")
        out = tuple(np.broadcast_shapes(out, s))
    return Size(out)


def set_printoptions(*args, **kwargs) -> None:
    from ._tensor_str import set_printoptions as impl
    impl(*args, **kwargs)


def get_printoptions() -> dict:
    from ._tensor_str import get_printoptions as impl
    return impl()


class layout:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


class memory_format:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
preserve_format = memory_format("preserve_format")

_knobs = {"deterministic": False, "threads": os.cpu_count() or 1, "matmul": "highest"}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted: XLA's kernels are deterministic on CPU; the flag is recorded."""
    _knobs["deterministic"] = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    return _knobs["deterministic"]


def set_num_threads(n: int) -> None:
    _knobs["threads"] = int(n)


def get_num_threads() -> int:
    return _knobs["threads"]


def set_float32_matmul_precision(precision: str) -> None:
    """Matches `torch.set_float32_matmul_precision`, mapped onto jax's default matmul precision."""
    import jax
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision}")
    _knobs["matmul"] = precision
    jax.config.update("jax_default_matmul_precision",
                      {"highest": "highest", "high": "high", "medium": "bfloat16"}[precision])


def get_float32_matmul_precision() -> str:
    return _knobs["matmul"]
