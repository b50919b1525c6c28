"""Storage objects: what `Tensor.untyped_storage()` and `Tensor.storage()` return.

A jtorch storage is one jax array that its tensors' views index (`_tensor.Storage`). These
classes are PyTorch's user-facing views of it: `UntypedStorage` counts bytes,
`TypedStorage` (deprecated in PyTorch, as `Tensor.storage()` warns) counts elements of one
dtype. Both share the storage: what is written through them, tensors over it see.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _device, _dtype

__all__ = ["UntypedStorage", "TypedStorage", "LEGACY_STORAGES"]


def _flat_view(st, np_dtype) -> np.ndarray:
    """The storage's elements, flat, reinterpreted as `np_dtype` (a host copy)."""
    return np.asarray(st.value).reshape(-1).view(np_dtype)


def _write_flat(st, flat: np.ndarray) -> None:
    """Rebinds the storage to `flat` reinterpreted as its own dtype and shape."""
    import jax.numpy as jnp
    value = st.value
    st.value = jnp.asarray(flat.view(value.dtype).reshape(value.shape))
    st.gen += 1     # views re-derive (PyTorch's storage writes bump no tensor's version)


def _device_of(st) -> _device.device:
    return _device.from_jax(next(iter(st.value.devices())))


class UntypedStorage:
    """Matches `torch.UntypedStorage` as `Tensor.untyped_storage()` returns it: bytes."""

    def __init__(self, storage):
        self._storage = storage

    def data_ptr(self) -> int:
        return self._storage.id << 24

    def nbytes(self) -> int:
        v = self._storage.value
        return int(v.size) * v.dtype.itemsize

    def size(self) -> int:
        return self.nbytes()

    __len__ = size

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> _device.device:
        return _device_of(self._storage)

    def tolist(self) -> list:
        return _flat_view(self._storage, np.uint8).tolist()

    def __getitem__(self, i):
        return _flat_view(self._storage, np.uint8)[i].tolist()

    def is_shared(self) -> bool:
        return self._storage.shared

    def share_memory_(self):
        self._storage.shared = True
        return self

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and other._storage is self._storage

    def __hash__(self):
        return hash(self._storage.id)


_warned = [False]


def warn_typed_storage_removal() -> None:
    """PyTorch's once-per-process deprecation warning for `TypedStorage`."""
    if not _warned[0]:
        _warned[0] = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=3)


class TypedStorage:
    """Matches `torch.TypedStorage` as `Tensor.storage()` returns it: elements of `dtype`."""

    is_sparse = False

    def __init__(self, storage, dtype: _dtype.dtype):
        self._storage = storage
        self.dtype = dtype

    @property
    def _untyped_storage(self) -> UntypedStorage:
        return UntypedStorage(self._storage)

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    @property
    def device(self) -> _device.device:
        return _device_of(self._storage)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def _values(self) -> np.ndarray:
        return _flat_view(self._storage, self.dtype.np)

    def size(self) -> int:
        v = self._storage.value
        return int(v.size) * v.dtype.itemsize // self.dtype.itemsize

    __len__ = size

    def nbytes(self) -> int:
        return self.size() * self.dtype.itemsize

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        return self._storage.id << 24

    def tolist(self) -> list:
        values = self._values()
        if self.dtype is _dtype.bfloat16:
            values = values.astype(np.float32)
        return values.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, i):
        if not isinstance(i, (int, np.integer)):
            raise RuntimeError(f"can't index a {type(self)} with {type(i)}")
        n = self.size()
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return self.tolist()[i]

    def __setitem__(self, i, value) -> None:
        if isinstance(value, _dtype.dtype) or not isinstance(i, (int, np.integer, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(i)}")
        flat = self._values().copy()
        flat[i] = value
        _write_flat(self._storage, flat)

    def fill_(self, value):
        self[:] = value
        return self

    def is_shared(self) -> bool:
        return self._storage.shared

    def share_memory_(self):
        self._storage.shared = True
        return self

    def type(self, dtype=None):
        if dtype is None:
            return "torch." + LEGACY_STORAGES[self.dtype].__name__
        raise NotImplementedError("TypedStorage.type(dtype) conversion is not supported")

    def __eq__(self, other):
        return (isinstance(other, TypedStorage) and other._storage is self._storage
                and other.dtype == self.dtype)

    def __hash__(self):
        return hash((self._storage.id, self.dtype))

    def __repr__(self) -> str:
        info = (f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of "
                f"size {len(self)}]")
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __str__ = __repr__


# torch.FloatStorage, ...: what `Tensor.storage_type()` returns.
LEGACY_STORAGES = {}
for _name, _dt in (("Float", "float32"), ("Double", "float64"), ("Half", "float16"),
                   ("BFloat16", "bfloat16"), ("Long", "int64"), ("Int", "int32"),
                   ("Short", "int16"), ("Char", "int8"), ("Byte", "uint8"), ("Bool", "bool"),
                   ("ComplexFloat", "complex64"), ("ComplexDouble", "complex128")):
    _d = getattr(_dtype, _dt)
    LEGACY_STORAGES[_d] = type(_name + "Storage", (TypedStorage,), {
        "__doc__": f"Matches `torch.{_name}Storage` (a TypedStorage of {_d}).",
        "__module__": __name__})
