"""`torch.types`: the type aliases PyTorch's annotations use."""

from __future__ import annotations

import os
from typing import IO, Union

from . import _device, _dtype
from ._checks import SymBool, SymFloat, SymInt
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Size, Tensor

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors = Union[Tensor, tuple]
_int, _float, _bool, _complex = int, float, bool, complex
_dtype = _dtype.dtype
_device = _device.device
_size = Union[Size, list, tuple]
_layout = object
_dispatchkey = str
IntLikeType = Union[int, SymInt]
FloatLikeType = Union[float, SymFloat]
BoolLikeType = Union[bool, SymBool]
py_sym_types = (SymInt, SymFloat, SymBool)
PySymType = Union[SymInt, SymFloat, SymBool]
Number = Union[int, float, bool]
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
Storage = Union[TypedStorage, UntypedStorage]
