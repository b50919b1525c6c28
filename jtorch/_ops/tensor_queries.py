"""Torch-level functions that answer questions about tensors, dtypes and shapes:
`is_tensor`, `is_floating_point`, `numel`, `typename`, `result_type`, `broadcast_shapes`,
`is_same_size`, ... (plain functions, not registry ops: they compute no array)."""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._storage import TypedStorage, UntypedStorage
from .._tensor import Size, Tensor
from ._registry import broadcast_error


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_storage(obj) -> bool:
    """Matches `torch.is_storage`: True for `TypedStorage`/`UntypedStorage` objects."""
    return isinstance(obj, (TypedStorage, UntypedStorage))


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    return input.dtype.is_complex


def is_nonzero(input: Tensor) -> bool:
    """Matches `torch.is_nonzero` (`Tensor.is_nonzero`, with its errors)."""
    return input.is_nonzero()


def numel(input: Tensor) -> int:
    return input.numel()


def typename(obj) -> str:
    if isinstance(obj, Tensor):
        return obj.type()  # PyTorch's typename is `Tensor.type()` for tensors
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
    norm = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in shapes]
    out = ()
    for s in norm:
        err = broadcast_error(out, s)
        if err is not None:
            raise RuntimeError(
                f"Shape mismatch: objects cannot be broadcast to a single shape.  "
                f"Mismatch is between arg 0 and arg {norm.index(s)}."
            )
        out = tuple(np.broadcast_shapes(out, s))
    return Size(out)


def _require_tensor(fn: str, arg: str, pos: int, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}"
        )


def is_same_size(input: Tensor, other: Tensor) -> bool:
    _require_tensor("is_same_size", "input", 1, input)
    _require_tensor("is_same_size", "other", 2, other)
    return input.shape == other.shape


def is_signed(input: Tensor) -> bool:
    _require_tensor("is_signed", "input", 1, input)
    return input.dtype.is_signed


def get_device(input: Tensor) -> int:
    """Matches `torch.get_device`: the device index, -1 on the CPU."""
    _require_tensor("get_device", "input", 1, input)
    return input.get_device()


def is_inference(input: Tensor) -> bool:
    """Matches `torch.is_inference`: made under `inference_mode()` (see Tensor.is_inference)."""
    _require_tensor("is_inference", "input", 1, input)
    return input.is_inference()


def is_distributed(input: Tensor) -> bool:
    """Matches `torch.is_distributed`: False (a tensor is never a legacy distributed one)."""
    return False


def cudnn_is_acceptable(input: Tensor) -> bool:
    """Matches `torch.cudnn_is_acceptable`: False (jtorch never runs cuDNN kernels itself)."""
    return False
