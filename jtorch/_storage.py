"""Storage objects: what `Tensor.untyped_storage()` and `Tensor.storage()` return.

A jtorch storage is one jax array that its tensors' views index (`Storage`, below). These
classes are PyTorch's user-facing views of it: `UntypedStorage` counts bytes (a slice of
one, `storage[a:b]`, is a window onto the same storage), `TypedStorage` (deprecated in
PyTorch, as `Tensor.storage()` warns) counts elements of one dtype. Both share the
storage: what is written through them, tensors over it see.

`data_ptr()` is the address of the storage's jax buffer (host memory on CPU, device memory
on an accelerator), which libraries read through ctypes (safetensors). jax shares buffers
between equal immutable arrays; a storage asked for its address first gets a buffer of its
own, so that distinct storages have distinct addresses, as in PyTorch. Unlike PyTorch's,
the address changes when an in-place write rebinds the storage to a new buffer.
"""

from __future__ import annotations

import itertools
import operator
import warnings
import weakref

import numpy as np

from . import _device, _dtype, _meta

__all__ = ["UntypedStorage", "TypedStorage", "LEGACY_STORAGES", "address"]


_storage_ids = itertools.count(1)


class Storage:
    """The shared, rebindable home of a root array. `gen` counts writes, for view freshness."""

    __slots__ = ("value", "gen", "id", "shared", "__weakref__")

    def __init__(self, value):
        self.value = value
        self.gen = 0
        self.id = next(_storage_ids)
        self.shared = False  # share_memory_() was called (is_shared() reports it)


def _flat_view(st, np_dtype) -> np.ndarray:
    """The storage's elements, flat, reinterpreted as `np_dtype` (a host copy)."""
    return np.asarray(st.value).reshape(-1).view(np_dtype)


def _write_flat(st, flat: np.ndarray) -> None:
    """Rebinds the storage to `flat` reinterpreted as its own dtype and shape."""
    import jax.numpy as jnp

    value = st.value
    st.value = jnp.asarray(flat.view(value.dtype).reshape(value.shape))
    st.gen += 1  # views re-derive (PyTorch's storage writes bump no tensor's version)


def _device_of(st) -> _device.device:
    return _device.from_jax(next(iter(st.value.devices())))


def _nbytes(st) -> int:
    v = st.value
    return int(v.size) * v.dtype.itemsize


# -- addresses -----------------------------------------------------------------

# storage -> weak reference to the jax array whose buffer it owns (see `address`)
_owned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

_NO_DATA = (
    "Cannot access data pointer of Tensor (e.g. FakeTensor, FunctionalTensor). If "
    "you're using torch.compile/export/fx, it is likely that we are erroneously "
    "tracing into a custom kernel. To fix this, please wrap the custom kernel into an "
    "opaque custom op. Please see the following for details: "
    "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html"
)


def _pointer(value) -> int:
    import jax

    if isinstance(value, jax.core.Tracer):
        raise RuntimeError(_NO_DATA)
    try:
        return int(value.unsafe_buffer_pointer())
    except Exception as e:  # noqa: BLE001 - sharded or deleted arrays have no one buffer
        raise RuntimeError(
            f"data_ptr(): this tensor's data is not one buffer jtorch can address ({e})"
        ) from None


def address(st) -> int:
    """The address of storage `st`'s buffer: 0 when it holds no bytes or is on the meta
    device (as PyTorch).

    jax shares buffers between arrays freely (an op may return its input, `clone()` of an
    immutable array is the array), so a storage asked for its address first takes a copy of
    its array that no other storage holds, and keeps it until a write rebinds it.
    """
    if _nbytes(st) == 0 or _meta.is_meta(st.value):
        return 0
    value = st.value
    _pointer(value)  # a clean error for tracers and sharded arrays first
    ref = _owned.get(st)
    if ref is None or ref() is not value:
        value = st.value = value.copy()
        _owned[st] = weakref.ref(value)
    return _pointer(value)


def _new_root(arr):
    return Storage(arr)


def _from_bytes(data: np.ndarray, device=None):
    """A new storage holding `data` (uint8) on `device`."""
    import jax
    import jax.numpy as jnp

    arr = jnp.asarray(np.ascontiguousarray(data, dtype=np.uint8))
    if device is not None and _device.device(device).type != "cpu":
        arr = jax.device_put(arr, _device.to_jax(device))
    return _new_root(arr)


def _index(i, n: int) -> int:
    i = operator.index(i)
    if not -n <= i < n:
        raise IndexError(f"index {i} out of range for storage of size {n}")
    return i + n if i < 0 else i


# -- UntypedStorage ---------------------------------------------------------------


class UntypedStorage:
    """Matches `torch.UntypedStorage`: the bytes of a storage (or of a window onto one).

    `UntypedStorage(n)` holds n bytes, `UntypedStorage(sequence)` those bytes.
    """

    is_sparse = False
    is_sparse_csr = False

    def __init__(self, *args, device=None, _offset: int = 0, _nbytes: int | None = None):
        if len(args) == 1 and hasattr(args[0], "gen"):  # jtorch's own Storage
            self._storage = args[0]
        elif not args:
            self._storage = _from_bytes(np.zeros(0, np.uint8), device)
        elif len(args) == 1 and isinstance(args[0], (int, np.integer)):
            if args[0] < 0:
                raise RuntimeError(f"Storage size must be non-negative, got {args[0]}")
            self._storage = _from_bytes(np.zeros(int(args[0]), np.uint8), device)
        elif len(args) == 1 and isinstance(args[0], (list, tuple)):
            self._storage = _from_bytes(np.asarray(args[0], dtype=np.uint8), device)
        else:
            raise TypeError(
                f"UntypedStorage(): unsupported arguments "
                f"({', '.join(type(a).__name__ for a in args)})"
            )
        self._offset = _offset
        self._window = _nbytes

    # -- bytes --

    def _bytes(self) -> np.ndarray:
        flat = _flat_view(self._storage, np.uint8)
        end = None if self._window is None else self._offset + self._window
        return flat[self._offset : end]

    def _write_bytes(self, data: np.ndarray) -> None:
        flat = _flat_view(self._storage, np.uint8).copy()
        flat[self._offset : self._offset + len(data)] = data
        _write_flat(self._storage, flat)

    def data_ptr(self) -> int:
        if self.nbytes() == 0:
            return 0
        return address(self._storage) + self._offset

    def nbytes(self) -> int:
        return _nbytes(self._storage) - self._offset if self._window is None else self._window

    def size(self) -> int:
        return self.nbytes()

    __len__ = size

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> _device.device:
        return _device_of(self._storage)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def get_device(self) -> int:
        d = self.device
        return -1 if d.type == "cpu" else (d.index or 0)

    @property
    def filename(self):
        return None

    def type(self, dtype=None, non_blocking: bool = False):
        if dtype is None:
            return "torch.storage.UntypedStorage"
        raise NotImplementedError("UntypedStorage.type(dtype) conversion is not supported")

    def tolist(self) -> list:
        return self._bytes().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, i):
        n = self.nbytes()
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1:
                raise RuntimeError(
                    f"Trying to slice with a step of {step}, but only a step of 1 is supported"
                )
            return UntypedStorage(
                self._storage, _offset=self._offset + start, _nbytes=max(stop - start, 0)
            )
        return int(self._bytes()[_index(i, n)])

    def __setitem__(self, i, value) -> None:
        data = self._bytes().copy()
        if isinstance(i, slice):
            data[i] = value
        else:
            data[_index(i, len(data))] = value
        self._write_bytes(data)

    def fill_(self, value):
        self[:] = value
        return self

    def copy_(self, src, non_blocking: bool = False):
        other = src._untyped_storage if isinstance(src, TypedStorage) else src
        if other.nbytes() != self.nbytes():
            raise RuntimeError(f"size mismatch, {self.nbytes()} vs {other.nbytes()}")
        self._write_bytes(other._bytes())
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage(_from_bytes(self._bytes(), self.device))

    def cpu(self) -> UntypedStorage:
        return self if self.device.type == "cpu" else self.to(device="cpu")

    def to(self, *, device=None, non_blocking: bool = False) -> UntypedStorage:
        if device is None or _device.device(device) == self.device:
            return self
        return UntypedStorage(_from_bytes(self._bytes(), device))

    def untyped(self) -> UntypedStorage:
        return self

    def resize_(self, size: int):
        if int(size) == self.nbytes():
            return self
        raise RuntimeError(
            "Trying to resize storage that is not resizable (jtorch storages have a fixed size)"
        )

    def resizable(self) -> bool:
        return False

    def is_pinned(self, device="cuda") -> bool:
        return False

    def is_shared(self) -> bool:
        return self._storage.shared

    def share_memory_(self):
        self._storage.shared = True
        return self

    def __eq__(self, other):
        return (
            isinstance(other, UntypedStorage)
            and other._storage is self._storage
            and other._offset == self._offset
            and other._window == self._window
        )

    def __hash__(self):
        return hash((self._storage.id, self._offset))

    def __repr__(self) -> str:
        info = f"[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]"
        return (
            " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info
            if len(self)
            else (f"[torch.storage.UntypedStorage(device={self.device}) of size 0]")
        )

    __str__ = __repr__

    @classmethod
    def from_buffer(
        cls,
        buffer,
        byte_order: str = "native",
        count: int = -1,
        offset: int = 0,
        *,
        dtype=None,
        device=None,
    ) -> UntypedStorage:
        """Matches `torch.UntypedStorage.from_buffer`: a copy of the buffer's bytes."""
        dt = _dtype.uint8 if dtype is None else dtype
        if dt.itemsize > 1 and byte_order not in ("native", "little", "big"):
            raise ValueError(f"byte_order must be 'native', 'little' or 'big', got {byte_order!r}")
        raw = np.frombuffer(memoryview(buffer), dtype=np.uint8)[offset:]
        if count >= 0:
            raw = raw[: count * dt.itemsize]
        if dt.itemsize > 1 and byte_order == ("big" if np.little_endian else "little"):
            raw = raw.view(dt.np).byteswap().view(np.uint8)
        return cls(_from_bytes(raw, device))

    @classmethod
    def from_file(cls, filename: str, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """Matches `torch.UntypedStorage.from_file` with `shared=False`: the file's first
        `nbytes` bytes (a copy; a shared mapping that writes back to the file is not
        available in jtorch)."""
        if shared:
            raise NotImplementedError(
                "UntypedStorage.from_file(shared=True): jtorch storages "
                "are jax arrays and cannot map a file for writing; use "
                "shared=False for a copy of its bytes"
            )
        with open(filename, "rb") as f:
            data = f.read(nbytes) if nbytes else f.read()
        if nbytes and len(data) < nbytes:
            raise RuntimeError(f"unexpected EOF, expected {nbytes} bytes, got {len(data)}")
        return cls(_from_bytes(np.frombuffer(data, dtype=np.uint8)))


# -- TypedStorage -------------------------------------------------------------------

_warned = [False]


def warn_typed_storage_removal() -> None:
    """PyTorch's once-per-process deprecation warning for `TypedStorage`."""
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and "
            "UntypedStorage will be the only storage class. This should only matter "
            "to you if you are using storages directly.  To access UntypedStorage "
            "directly, use tensor.untyped_storage() instead of tensor.storage()",
            UserWarning,
            stacklevel=3,
        )


class TypedStorage:
    """Matches `torch.TypedStorage`: a storage's elements of `dtype`.

    `TypedStorage(wrap_storage=untyped, dtype=d)` views an UntypedStorage;
    `TypedStorage(n, dtype=d)` / `TypedStorage(sequence, dtype=d)` make a new one.
    """

    is_sparse = False
    _fixed_dtype = None  # the legacy classes' (FloatStorage...)

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal: bool = False):
        if len(args) == 2 and hasattr(args[0], "gen"):  # jtorch's (Storage, dtype)
            storage, dtype = args
            self._storage, self.dtype, self._offset = storage, dtype, 0
            return
        if not _internal:
            warn_typed_storage_removal()
        dtype = self._fixed_dtype or dtype or _dtype.get_default_dtype()
        if device is not None and _device.device(device).type == "meta":
            raise NotImplementedError("TypedStorage on the meta device is not supported by jtorch")
        if wrap_storage is not None:
            if args:
                raise RuntimeError(
                    "No positional arguments should be given when using `wrap_storage`"
                )
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(
                    f"expected wrap_storage to be an UntypedStorage, but got {type(wrap_storage)}"
                )
            self._storage, self._offset = wrap_storage._storage, wrap_storage._offset
        elif not args or isinstance(args[0], (int, np.integer)):
            n = int(args[0]) if args else 0
            self._storage = _from_bytes(np.zeros(n * dtype.itemsize, np.uint8), device)
            self._offset = 0
        elif isinstance(args[0], (list, tuple)):
            arr = np.asarray(args[0], dtype=np.float32 if dtype is _dtype.bfloat16 else dtype.np)
            if dtype is _dtype.bfloat16:
                import jax.numpy as jnp

                arr = np.asarray(jnp.asarray(arr, jnp.bfloat16))
            self._storage = _from_bytes(arr.reshape(-1).view(np.uint8), device)
            self._offset = 0
        else:
            raise TypeError(
                f"TypedStorage(): unsupported arguments "
                f"({', '.join(type(a).__name__ for a in args)})"
            )
        self.dtype = dtype
        if self._offset % dtype.itemsize:
            raise RuntimeError("the storage's byte offset is not a multiple of the element size")
        self._window = wrap_storage._window if wrap_storage is not None else None

    _window = None

    @property
    def _untyped_storage(self) -> UntypedStorage:
        return UntypedStorage(self._storage, _offset=self._offset, _nbytes=self._window)

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    @property
    def device(self) -> _device.device:
        return _device_of(self._storage)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def _values(self) -> np.ndarray:
        return self._untyped_storage._bytes().view(self.dtype.np)

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    __len__ = size

    def _size(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self.size() * self.dtype.itemsize

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

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
        return self.tolist()[_index(i, self.size())]

    def __setitem__(self, i, value) -> None:
        if isinstance(value, _dtype.dtype) or not isinstance(i, (int, np.integer, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(i)}")
        flat = self._values().copy()
        flat[i] = value
        self._untyped_storage._write_bytes(flat.view(np.uint8))

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

    def pickle_storage_type(self) -> str:
        return LEGACY_STORAGES[self.dtype].__name__

    @classmethod
    def _from_buffer(cls, *args, dtype=None, device=None, **kwargs):
        """Matches `TypedStorage._from_buffer` (`torch.ByteStorage._from_buffer(b"...")`)."""
        warn_typed_storage_removal()
        dt = cls._fixed_dtype or dtype
        if dt is None:
            raise RuntimeError("from_buffer: must specify a dtype")
        untyped = UntypedStorage.from_buffer(*args, dtype=dt, device=device, **kwargs)
        return TypedStorage(wrap_storage=untyped, dtype=dt, _internal=True)

    def __eq__(self, other):
        return (
            isinstance(other, TypedStorage)
            and other._storage is self._storage
            and other.dtype == self.dtype
            and other._offset == self._offset
        )

    def __hash__(self):
        return hash((self._storage.id, self.dtype))

    def __repr__(self) -> str:
        info = (
            f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of "
            f"size {len(self)}]"
        )
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __str__ = __repr__


# torch.FloatStorage, ...: what `Tensor.storage_type()` returns.
LEGACY_STORAGES = {}
for _name, _dt in (
    ("Float", "float32"),
    ("Double", "float64"),
    ("Half", "float16"),
    ("BFloat16", "bfloat16"),
    ("Long", "int64"),
    ("Int", "int32"),
    ("Short", "int16"),
    ("Char", "int8"),
    ("Byte", "uint8"),
    ("Bool", "bool"),
    ("ComplexFloat", "complex64"),
    ("ComplexDouble", "complex128"),
):
    _d = getattr(_dtype, _dt)
    LEGACY_STORAGES[_d] = type(
        _name + "Storage",
        (TypedStorage,),
        {
            "__doc__": f"Matches `torch.{_name}Storage` (a TypedStorage of {_d}).",
            "__module__": __name__,
            "_fixed_dtype": _d,
        },
    )
