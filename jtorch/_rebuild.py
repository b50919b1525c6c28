"""What the names in PyTorch's checkpoint pickles mean in jtorch, and the checks they get.

A checkpoint's pickle builds tensors by calling `torch._utils._rebuild_tensor_v2(storage,
offset, size, stride, ...)` on storages it names by persistent id. PyTorch builds each
tensor with `Tensor.set_`, which refuses a layout that does not fit the storage the file
actually holds; `check_layout` repeats those checks (in PyTorch's order, with its
messages) before any jtorch tensor exists, so a lying header never becomes an
allocation. `allowed_globals()` is the table of every global PyTorch's weights-only
unpickler accepts, mapped to jtorch's object for it.
"""

from __future__ import annotations

import codecs
import collections
import functools
import pickle

import jax
import numpy as np

from . import _device, _dtype, _meta
from ._tensor import Size, Tensor, _rebuild_from_type_v2, _set_obj_state, wrap
from ._views import Strided, contiguous_strides

__all__ = [
    "StorageType",
    "LoadedStorage",
    "allowed_globals",
    "unavailable_globals",
    "check_layout",
    "rebuild_tensor_v2",
]

_U64 = 2**64
_I64_MAX = 2**63 - 1

# torch.<X>Storage <-> dtype
STORAGE_DTYPE = {
    "FloatStorage": _dtype.float32,
    "DoubleStorage": _dtype.float64,
    "HalfStorage": _dtype.float16,
    "BFloat16Storage": _dtype.bfloat16,
    "LongStorage": _dtype.int64,
    "IntStorage": _dtype.int32,
    "ShortStorage": _dtype.int16,
    "CharStorage": _dtype.int8,
    "ByteStorage": _dtype.uint8,
    "BoolStorage": _dtype.bool,
    "ComplexFloatStorage": _dtype.complex64,
    "ComplexDoubleStorage": _dtype.complex128,
}
_QUANTIZED_STORAGES = (
    "QInt32Storage",
    "QInt8Storage",
    "QUInt2x4Storage",
    "QUInt4x2Storage",
    "QUInt8Storage",
)
# dtypes PyTorch's allowlist names that jtorch has no tensors of
_FOREIGN_DTYPES = (
    "bits16",
    "bits1x8",
    "bits2x4",
    "bits4x2",
    "bits8",
    "float4_e2m1fn_x2",
    "qint32",
    "qint8",
    "quint2x4",
    "quint4x2",
    "quint8",
    *(f"uint{n}" for n in range(1, 8)),
    *(f"int{n}" for n in range(1, 8)),
)
_QSCHEMES = (
    "per_tensor_affine",
    "per_tensor_symmetric",
    "per_channel_affine",
    "per_channel_symmetric",
    "per_channel_affine_float_qparams",
)
_LEGACY_TENSOR_TYPES = (
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
)


class StorageType:
    """`torch.FloatStorage` & co. as a checkpoint names them: which dtype a storage holds."""

    def __init__(self, name: str, dtype):
        self.name = name
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


_UNTYPED = StorageType("UntypedStorage", _dtype.uint8)  # bytes; a v3 tensor gives the dtype


# ---------------------------------------------------------------------------
# Storages


class LoadedStorage:
    """One storage of a checkpoint, its size checked, shared by the tensors over it.

    Args:
        dtype: the dtype the checkpoint declares for it (uint8 for an untyped storage).
        nbytes: its size, as the pickle gives it and the record was checked to have.
        place: numpy array -> jax array where the storage's tensors belong.
        meta: the storage is loaded onto the meta device (no data is read).
        data: its bytes (an aligned uint8 array nothing else references). The legacy
            format stores them after the pickle: until `fill` gives them, tensors are built
            over a shape-only stand-in, and nothing reads them before the load returns.
    """

    def __init__(
        self, dtype, nbytes: int, place, data: np.ndarray | None = None, meta: bool = False
    ):
        self.dtype = dtype
        self.nbytes = nbytes
        self.data = data
        self.meta = meta  # map_location="meta": shapes only, for good
        self.used = False  # a tensor was built over it
        self._place = place
        self._root: Tensor | None = None
        self._root_dtype = None  # the dtype its tensors read it as (set by the first)

    def _value(self, dtype, shape: tuple | None = None):
        """The storage as a jax array of `dtype` (flat, or of `shape` when that covers it)."""
        itemsize = element_size(dtype)
        if self.nbytes % itemsize:
            raise RuntimeError(
                f"Trying to view a storage of {self.nbytes} bytes as "
                f"{dtype}, whose elements have {itemsize} bytes"
            )
        shape = (self.nbytes // itemsize,) if shape is None else shape
        if self.meta:
            return _meta.MetaArray(shape, dtype.np)
        if self.data is None:
            return jax.ShapeDtypeStruct(shape, dtype.np)
        if dtype == _dtype.bool:
            arr = self.data != 0  # any nonzero byte reads as True, as in PyTorch
        elif dtype == _dtype.complex32:
            # jtorch keeps complex32 tensors as complex64 (jax has no complex half)
            arr = self.data.view(np.float16).astype(np.float32).view(np.complex64)
        else:
            arr = self.data.view(dtype.np)
        return self._place(arr.reshape(shape))

    def fill(self, data: np.ndarray) -> None:
        """Gives a legacy storage its bytes, once the tensors over it exist."""
        self.data = data
        if self._root is not None:
            st = self._root._storage
            st.value = self._value(self._root_dtype, tuple(st.value.shape))
            st.gen += 1

    def tensor(self, dtype, offset: int, size: tuple, stride: tuple) -> Tensor:
        """A tensor over this storage (its layout already passed `check_layout`)."""
        self.used = True
        root = self._root
        if root is None:
            self._root_dtype = dtype
            if (
                offset == 0
                and stride == contiguous_strides(size)
                and _numel(size) * element_size(dtype) == self.nbytes
            ):
                # The usual case, one tensor covering its storage: that tensor is the root,
                # and a later tensor over the same storage becomes a view of it.
                self._root = wrap(self._value(dtype, size))
                return self._root
            root = self._root = wrap(self._value(dtype))
        if root.dtype != dtype:
            raise RuntimeError(
                f"Cannot load tensors of dtypes {root.dtype} and {dtype} that view one storage"
            )
        return root._make_view(Strided(size, stride, offset))

    def typed_storage(self):
        """The storage itself, for a checkpoint that saved a bare storage."""
        from ._storage import TypedStorage

        if self._root is None:
            self._root, self._root_dtype = wrap(self._value(self.dtype)), self.dtype
        return TypedStorage(self._root._storage, self._root.dtype)


def element_size(dtype) -> int:
    """Bytes per element in a checkpoint (PyTorch's complex32 is two float16s)."""
    return 4 if dtype == _dtype.complex32 else dtype.itemsize


def _numel(size) -> int:
    n = 1
    for d in size:
        n *= d
    return n


# ---------------------------------------------------------------------------
# Tensors: PyTorch's checks of `set_(storage, offset, size, stride)`


def _ints(name: str, values) -> tuple:
    if not isinstance(values, (tuple, list)):
        raise TypeError(
            f"set_(): argument '{name}' must be tuple of ints, not {type(values).__name__}"
        )
    for i, v in enumerate(values):
        if not isinstance(v, int):
            raise TypeError(
                f"set_(): argument '{name}' must be tuple of ints, but found "
                f"element of type {type(v).__name__} at pos {i}"
            )
        if not -(2**63) <= v <= _I64_MAX:
            raise TypeError(
                f"set_(): argument '{name}' failed to unpack the object at pos "
                f'{i} with error "Overflow when unpacking long long"'
            )
    return tuple(int(v) for v in values)


def check_layout(storage_nbytes: int, itemsize: int, offset, size, stride) -> tuple:
    """PyTorch's checks of a tensor over a storage of `storage_nbytes`; returns the layout.

    Sizes, strides and the offset are 64-bit in PyTorch, and its arithmetic on them is
    unsigned with overflow checks: a negative size or stride wraps to a huge value, so it
    fails as an overflow, except where another size is 0 or the dimension has one element.
    """
    if not isinstance(offset, int):
        raise TypeError(
            f"set_(): argument 'storage_offset' must be int, not {type(offset).__name__}"
        )
    size, stride = _ints("size", size), _ints("stride", stride)
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    numel, overflow = 1, False
    for n in size:
        numel *= n % _U64
        overflow |= numel >= _U64
        numel %= _U64
    if overflow or numel > _I64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    if any(n < 0 for n in size):
        # PyTorch lets a negative size through when another is 0; jax has no such arrays.
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(size)}: {list(size)}"
        )
    if _storage_nbytes(size, stride, itemsize, offset) > storage_nbytes:
        raise RuntimeError("Trying to resize storage that is not resizable")
    return offset, size, stride


def _storage_nbytes(size, stride, itemsize: int, offset: int) -> int:
    """PyTorch's `computeStorageNbytes`: the bytes a layout reaches, in uint64 arithmetic."""
    overflow = False
    end = offset + 1
    for n, s in zip(size, stride):
        if n == 0:
            return 0
        reach = (s % _U64) * ((n - 1) % _U64)
        overflow |= reach >= _U64
        end += reach % _U64
        overflow |= end >= _U64
        end %= _U64
    end *= itemsize
    if overflow or end > _I64_MAX:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(size)} and "
            f"strides={list(stride)}"
        )
    return end


def _storage_of(storage) -> LoadedStorage:
    if not isinstance(storage, LoadedStorage):
        raise TypeError(f"set_(): argument 'source' must be Storage, not {type(storage).__name__}")
    return storage


def _rebuild_tensor(storage, storage_offset, size, stride, dtype=None) -> Tensor:
    storage = _storage_of(storage)
    dtype = storage.dtype if dtype is None else dtype
    offset, size, stride = check_layout(
        storage.nbytes, element_size(dtype), storage_offset, size, stride
    )
    return storage.tensor(dtype, offset, size, stride)


def rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None
) -> Tensor:
    """Matches `torch._utils._rebuild_tensor_v2`."""
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
) -> Tensor:
    """Matches `torch._utils._rebuild_tensor_v3`: an untyped storage and the tensor's dtype."""
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"expected a dtype, got {type(dtype).__name__}")
    t = _rebuild_tensor(storage, storage_offset, size, stride, dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from .nn import Parameter

    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    from ._ops import creation

    return creation.empty_strided(
        size, stride, dtype=dtype, device="meta", requires_grad=requires_grad
    )


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    t = data.to(dtype=dtype, device=device)
    t.requires_grad = requires_grad
    return t


def _rebuild_device_tensor_from_numpy(data, dtype, device, requires_grad):
    from ._ops import creation

    t = creation.tensor(data, dtype=dtype, device=device)
    t.requires_grad = requires_grad
    return t


def _get_layout(name: str):
    """`torch.serialization._get_layout`: a layout from its repr (`"torch.sparse_coo"`)."""
    from . import _layout

    layouts = {repr(v): v for v in vars(_layout).values() if isinstance(v, _layout.layout)}
    if name not in layouts:
        raise RuntimeError(f"jtorch does not support tensors of layout {name}")
    return layouts[name]


def _rebuild_sparse_tensor(layout, data):
    from .sparse import _rebuild_sparse_tensor as rebuild

    return rebuild(layout, data)


def _unsupported(what: str):
    def rebuild(*args, **kwargs):
        raise RuntimeError(f"This checkpoint holds {what}, which jtorch does not support")

    rebuild.__name__ = f"rebuild {what}"
    return rebuild


@functools.lru_cache(maxsize=1)
def allowed_globals() -> dict:
    """Every global PyTorch's weights-only unpickler accepts, as jtorch's object for it."""
    from . import _legacy_types, _storage, nn

    rc = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": nn.Parameter,
        "torch.serialization._get_layout": _get_layout,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _device.device,
        "_codecs.encode": codecs.encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.storage.UntypedStorage": _UNTYPED,
        "torch.storage.TypedStorage": _storage.TypedStorage,
    }
    for name in dir(_dtype):
        obj = getattr(_dtype, name)
        if isinstance(obj, _dtype.dtype) and str(obj) == f"torch.{name}":
            rc[str(obj)] = obj
    for name, dt in STORAGE_DTYPE.items():
        rc[f"torch.{name}"] = rc[f"torch.cuda.{name}"] = StorageType(name, dt)
    for name in _LEGACY_TENSOR_TYPES:
        rc[f"torch.{name}"] = _legacy_types.CPU_TYPES[name]
        rc[f"torch.cuda.{name}"] = _legacy_types.CUDA_TYPES[name]
    rebuilds = {
        "_rebuild_tensor": _rebuild_tensor,
        "_rebuild_tensor_v2": rebuild_tensor_v2,
        "_rebuild_tensor_v3": _rebuild_tensor_v3,
        "_rebuild_parameter": _rebuild_parameter,
        "_rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "_rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
        "_rebuild_device_tensor_from_cpu_tensor": _rebuild_device_tensor_from_cpu_tensor,
        "_rebuild_device_tensor_from_numpy": _rebuild_device_tensor_from_numpy,
        "_rebuild_qtensor": _unsupported("a quantized tensor"),
        "_rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "_rebuild_nested_tensor": _unsupported("a nested tensor"),
        "_rebuild_wrapper_subclass": _unsupported("a wrapper tensor subclass"),
    }
    for name, fn in rebuilds.items():
        rc[f"torch._utils.{name}"] = fn
    return rc


@functools.lru_cache(maxsize=1)
def unavailable_globals() -> dict:
    """Globals PyTorch knows and jtorch cannot load: (exception type, message) for each."""
    out = {}
    for name in _FOREIGN_DTYPES:
        out[f"torch.{name}"] = (
            RuntimeError,
            f"This checkpoint holds a tensor of dtype torch.{name}, which jtorch does not have",
        )
    for name in _QUANTIZED_STORAGES + _QSCHEMES:
        out[f"torch.{name}"] = (
            RuntimeError,
            f"This checkpoint holds quantized tensors "
            f"(torch.{name}), which jtorch does not support",
        )
    for name in _LEGACY_TENSOR_TYPES:
        for prefix in ("torch.sparse.", "torch.cuda.sparse."):
            out[prefix + name] = (
                RuntimeError,
                f"This checkpoint holds sparse tensors "
                f"({prefix}{name}), which jtorch does not "
                "support",
            )
    # PyTorch's own refusals, which name the import that would make them loadable there
    for path in (
        "torch.nested._internal.nested_tensor.NestedTensor",
        "torch.nested._internal.nested_tensor._rebuild_njt",
        "torch._dynamo.decorators._DimRange",
    ):
        out[path] = (
            pickle.UnpicklingError,
            "``torch.nested`` and ``torch._dynamo`` must be "
            "imported to load nested jagged tensors (NJTs)",
        )
    for path in (
        "torch.distributed.device_mesh.DeviceMesh",
        "torch.distributed.tensor._dtensor_spec.DTensorSpec",
        "torch.distributed.tensor._dtensor_spec.TensorMeta",
        "torch.distributed.tensor.DTensor",
        "torch.distributed.tensor.placement_types.Partial",
        "torch.distributed.tensor.placement_types.Replicate",
        "torch.distributed.tensor.placement_types.Shard",
    ):
        out[path] = (
            pickle.UnpicklingError,
            "``torch.distributed.tensor`` must be imported to load DTensors",
        )
    return out


def placer(device):
    """numpy array -> jax array on `device` (None: this process's CPU), without a copy where
    jax can.

    jax's CPU client takes a 64-byte aligned numpy buffer as it is; the loader hands it
    buffers nobody else holds, so sharing them is safe.
    """
    jdev = _device.to_jax(device) if device is not None else jax.local_devices(backend="cpu")[0]
    return lambda arr: jax.device_put(arr, jdev)
