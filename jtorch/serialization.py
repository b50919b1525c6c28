"""`torch.save` / `torch.load` in PyTorch's own checkpoint formats (DESIGN 10).

The zip format (PyTorch >= 1.6): `<name>/data.pkl` is a protocol-2 pickle in
which each tensor is `torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, hooks)` and each storage is a persistent id
`('storage', torch.FloatStorage, key, location, numel)` whose bytes are the
entry `<name>/data/<key>`. Tensors that share a jtorch storage are written as
views of one storage, and load back as views of one storage. The legacy
(pre-1.6) format is read too.

jtorch writes the names PyTorch's pickles use (`torch._utils`, `torch.FloatStorage`)
without importing torch, through a pickler that emits those globals itself; it
reads them by mapping them to jtorch's own functions. `weights_only=True` (the
default) allows only tensors, containers, numbers, strings and the globals PyTorch
allows (plus `add_safe_globals`).
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import random
import struct

import zipfile

import jax
import jax.numpy as jnp
import numpy as np

from . import _device, _dtype, _misc
from ._tensor import Size, Tensor, wrap
from ._views import Strided, contiguous_strides

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "DEFAULT_PROTOCOL", "PyTorchFileReader"]

DEFAULT_PROTOCOL = 2
_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001

# torch.<X>Storage <-> dtype
_STORAGE_DTYPE = {
    "FloatStorage": _dtype.float32, "DoubleStorage": _dtype.float64,
    "HalfStorage": _dtype.float16, "BFloat16Storage": _dtype.bfloat16,
    "LongStorage": _dtype.int64, "IntStorage": _dtype.int32, "ShortStorage": _dtype.int16,
    "CharStorage": _dtype.int8, "ByteStorage": _dtype.uint8, "BoolStorage": _dtype.bool,
    "ComplexFloatStorage": _dtype.complex64, "ComplexDoubleStorage": _dtype.complex128,
}
for _name, _attr in (("UInt16Storage", "uint16"), ("UInt32Storage", "uint32"),
                     ("UInt64Storage", "uint64")):
    if hasattr(_dtype, _attr):
        _STORAGE_DTYPE[_name] = getattr(_dtype, _attr)
_DTYPE_STORAGE = {v: k for k, v in _STORAGE_DTYPE.items()}


# ---------------------------------------------------------------------------
# Safe globals


_safe_globals: list = []


def add_safe_globals(safe_globals: list) -> None:
    """Matches `torch.serialization.add_safe_globals`: allow these for weights_only loads."""
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list:
    return list(_safe_globals)


def clear_safe_globals() -> None:
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(globals_list: list):
    """Matches `torch.serialization.safe_globals`: allow these inside the `with` block."""
    n = len(_safe_globals)
    _safe_globals.extend(globals_list)
    try:
        yield
    finally:
        del _safe_globals[n:]


# ---------------------------------------------------------------------------
# Saving


class _Global:
    """A global written by name (`torch._utils._rebuild_tensor_v2`) without importing it."""

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name

    def __call__(self, *args, **kwargs):   # pickle requires a reduce function be callable
        raise TypeError(f"{self.module}.{self.name} is a name written into a pickle")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_ORDERED_DICT = collections.OrderedDict


class _StorageRef:
    def __init__(self, key: str, dtype, numel: int, location: str):
        self.key = key
        self.dtype = dtype
        self.numel = numel
        self.location = location


class _Pickler(pickle._Pickler):
    """Python's pickler, taught to write torch's globals and tensors' persistent storages."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol, storages):
        super().__init__(file, protocol)
        self._storages = storages
        self._globals: dict = {}

    def _save_torch_global(self, obj: _Global):
        key = (obj.module, obj.name)
        if key in self._globals:
            self.write(self.get(self._globals[key]))
            return
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)
        self._globals[key] = self.memo[id(obj)][0]

    dispatch[_Global] = _save_torch_global

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _Global("torch", _DTYPE_STORAGE[obj.dtype]), obj.key,
                    obj.location, obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return _reduce_tensor(obj, self._storages)
        if isinstance(obj, Size):
            return (_Global("torch", "Size"), (tuple(obj),))
        if isinstance(obj, _misc.layout):   # PyTorch's copyreg entry for layouts
            return (_GET_LAYOUT, (repr(obj),))
        if isinstance(obj, _device.device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_Global("torch", "device"), args)
        return NotImplemented


def _save_dtype(self, obj):
    """A dtype pickles as the bare global `torch.float32`, as PyTorch's does."""
    self._save_torch_global(_Global("torch", str(obj)[len("torch."):]))


_Pickler.dispatch[_dtype.dtype] = _save_dtype

_GET_LAYOUT = _Global("torch.serialization", "_get_layout")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")


def _location(t: Tensor) -> str:
    dev = t.device
    return "cpu" if dev.type == "cpu" else str(dev)


def _reduce_tensor(t: Tensor, storages: dict):
    from .nn.parameter import Parameter
    if t.layout is not _misc.strided:    # PyTorch's `_rebuild_sparse_tensor(layout, data)`
        from .sparse._tensor import _reduce_args
        return (_REBUILD_SPARSE, _reduce_args(t))
    if isinstance(t, Parameter):
        plain = Tensor._make_subclass(Tensor, t)
        plain._rg = False
        return (_REBUILD_PARAMETER, (plain, t.requires_grad, _ORDERED_DICT()))
    if any(s.changes_dtype for s in t._chain) or isinstance(t._array, jax.core.Tracer):
        # A dtype-changing view: its strides do not index the storage's elements; save a copy.
        root_arr, offset, stride = t._array, 0, contiguous_strides(t.shape)
        st_id = ("copy", id(t))
    else:
        root_arr, offset, stride = t._storage.value, t.storage_offset(), t.stride()
        st_id = id(t._storage)
    entry = storages.get(st_id)
    if entry is None:
        ref = _StorageRef(str(len(storages)), _dtype.from_np(root_arr.dtype),
                          int(root_arr.size), _location(t))
        entry = storages[st_id] = (ref, root_arr)
    ref = entry[0]
    return (_REBUILD_TENSOR, (ref, int(offset), tuple(int(n) for n in t.shape),
                              tuple(int(s) for s in stride), bool(t.requires_grad),
                              _ORDERED_DICT()))


def _storage_bytes(arr) -> bytes:
    a = np.asarray(jax.device_get(arr))
    return np.ascontiguousarray(a.reshape(-1)).astype(a.dtype.newbyteorder("<")).tobytes()


def save(obj, f, pickle_module=pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Matches `torch.save`: PyTorch's zip checkpoint format (loadable by PyTorch)."""
    storages: dict = {}
    buf = io.BytesIO()
    _Pickler(buf, pickle_protocol, storages).dump(obj)
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        with open(f, "wb") as fh:
            _write_zip(fh, name, buf.getvalue(), storages)
    else:
        _write_zip(f, "archive", buf.getvalue(), storages)


def _write_zip(fh, name, pkl, storages):
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as z:
        def put(path, data):
            info = zipfile.ZipInfo(f"{name}/{path}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            z.writestr(info, data)
        put("data.pkl", pkl)
        put(".format_version", b"1")
        put(".storage_alignment", b"64")
        put("byteorder", b"little")
        for ref, arr in storages.values():
            put(f"data/{ref.key}", _storage_bytes(arr))
        put("version", b"3\n")
        put(".data/serialization_id", str(random.getrandbits(128)).encode())


# ---------------------------------------------------------------------------
# Loading


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    from .nn.parameter import Parameter
    p = Parameter(data, requires_grad)
    if state:
        p.__dict__.update(state)
    return p


def _torch_globals(weights_only: bool) -> dict:
    """What the names in PyTorch's pickles mean in jtorch."""
    from . import nn
    table = {
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("torch", "Size"): Size,
        ("torch", "device"): _device.device,
        ("torch.nn.parameter", "Parameter"): nn.Parameter,
        ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
        ("builtins", "bytearray"): bytearray, ("builtins", "slice"): slice,
        ("builtins", "complex"): complex,
        ("_codecs", "encode"): _codecs_encode,
    }
    for name in dir(_dtype):
        obj = getattr(_dtype, name)
        if isinstance(obj, _dtype.dtype):
            table[("torch", name)] = obj
    from .sparse import _rebuild_sparse_tensor
    table[("torch._utils", "_rebuild_sparse_tensor")] = _rebuild_sparse_tensor
    table[("torch.serialization", "_get_layout")] = _get_layout
    return table


def _get_layout(name: str):
    """`torch.serialization._get_layout`: a layout from its repr (`"torch.sparse_coo"`)."""
    layouts = {repr(v): v for v in vars(_misc).values() if isinstance(v, _misc.layout)}
    return layouts[name]


def _codecs_encode(text, encoding="latin1"):
    return text.encode(encoding)


_WEIGHTS_ONLY_HINT = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, "
    "\x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In "
    "PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please "
    "check the recommended steps in the following error message.\n\tWeightsUnpickler error: ")


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, weights_only, persistent_load, rebuild):
        super().__init__(file, encoding="utf-8")
        self._weights_only = weights_only
        self._table = _torch_globals(weights_only)
        self._persistent = persistent_load
        self._rebuild = rebuild

    def persistent_load(self, pid):
        return self._persistent(pid)

    counting = False

    def find_class(self, module, name):
        if (module, name) in (("torch._utils", "_rebuild_tensor_v2"),
                              ("torch._utils", "_rebuild_tensor")):
            return self._rebuild
        if self.counting and (module, name) in (("torch._utils", "_rebuild_parameter"), (
                "torch._utils", "_rebuild_parameter_with_state")):
            return _Placeholder
        if module == "torch" and name.endswith("Storage"):
            return _StorageType(name)
        obj = self._table.get((module, name))
        if obj is not None:
            return obj
        for g in _safe_globals:
            g_obj, g_name = (g if isinstance(g, tuple) else (g, None))
            if g_name is None:
                g_name = f"{getattr(g_obj, '__module__', '')}.{getattr(g_obj, '__qualname__', '')}"
            if g_name == f"{module}.{name}":
                return g_obj
        if self._weights_only:
            raise pickle.UnpicklingError(
                _WEIGHTS_ONLY_HINT + f"Unsupported global: GLOBAL {module}.{name} was not an "
                f"allowed global by default. Please use `torch.serialization.add_safe_globals("
                f"[{name}])` or the `torch.serialization.safe_globals([{name}])` context "
                "manager to allowlist this global if you trust this class/function.")
        if module == "torch" or module.startswith("torch."):
            module = "jtorch" + module[len("torch"):]
        return super().find_class(module, name)


class _StorageType:
    def __init__(self, name):
        self.name = name
        self.dtype = _STORAGE_DTYPE.get(name)
        if self.dtype is None:
            raise pickle.UnpicklingError(f"unsupported storage type torch.{name}")


class _LoadedStorage:
    """What a `map_location` callable receives: a storage it may move (`.cuda()`, `.to()`)."""

    def __init__(self, location):
        self.device = _device.device("cpu")
        self.location = location

    def cpu(self):
        self.device = _device.device("cpu")
        return self

    def cuda(self, device=None):
        self.device = _device.device("cuda" if device is None else
                                     (f"cuda:{device}" if isinstance(device, int) else device))
        return self

    def to(self, device=None, *args, **kwargs):
        if device is not None:
            self.device = _device.device(device)
        return self


def _target_device(map_location, location):
    if map_location is None:
        return None if location == "cpu" else _device.device(location)
    if isinstance(map_location, dict):
        loc = map_location.get(location, location)
        return None if loc == "cpu" else _device.device(loc)
    if isinstance(map_location, (str, _device.device)):
        d = _device.device(map_location)
        return None if d.type == "cpu" else d
    if callable(map_location):
        out = map_location(_LoadedStorage(location), location)
        if isinstance(out, _LoadedStorage):
            return None if out.device.type == "cpu" else out.device
        return None
    raise ValueError(f"map_location should be a string, a device, a dict or a callable, "
                     f"but got {type(map_location).__name__}")


class _Storages:
    """Loaded storages by key, as numpy arrays, shared by every tensor that views them."""

    def __init__(self, read, map_location):
        self._read = read
        self._map_location = map_location
        self._cache: dict = {}
        self.roots: dict = {}

    def get(self, key, dtype, location, numel):
        arr = self._cache.get(key)
        if arr is None:
            raw = self._read(key)
            arr = np.frombuffer(raw, dtype=dtype.np.newbyteorder("<"))[:numel]
            arr = arr.astype(dtype.np)
            self._cache[key] = arr
        return arr

    def place(self, arr, location):
        value = jnp.asarray(arr)
        dev = _target_device(self._map_location, location)
        if dev is not None:
            value = jax.device_put(value, _device.to_jax(dev))
        return value

    def root(self, key, arr, location):
        t = self.roots.get(key)
        if t is None:
            t = self.roots[key] = wrap(self.place(arr, location))
        return t


def _unpickle(data: bytes, weights_only, storages: _Storages):
    """Two passes: first count how tensors use each storage, then build them.

    A storage used by one tensor that covers it contiguously becomes that tensor's own
    root; otherwise its tensors are views of one root, as they were in PyTorch.
    """
    uses: dict = collections.defaultdict(list)

    def pid_count(pid):
        return _PersistentStorage(pid)

    def count(storage, offset, size, stride, *rest):
        uses[storage.key].append((offset, tuple(size), tuple(stride)))
        return _Placeholder()

    try:
        counter = _Unpickler(io.BytesIO(data), weights_only, pid_count, count)
        counter.counting = True
        counter.load()
    except pickle.UnpicklingError:
        raise
    except Exception:  # noqa: BLE001 - an object that cannot hold placeholders: all views
        uses = collections.defaultdict(lambda: [None, None])

    def pid(p):
        return _PersistentStorage(p)

    def rebuild(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
        arr = storages.get(storage.key, storage.dtype, storage.location, storage.numel)
        size, stride = tuple(size), tuple(stride)
        whole = (offset == 0 and int(np.prod(size)) == arr.size
                 and stride == contiguous_strides(size))
        if whole and len(uses[storage.key]) == 1:
            t = wrap(storages.place(arr, storage.location).reshape(size))
        else:
            root = storages.root(storage.key, arr, storage.location)
            t = root._make_view(Strided(size, stride, offset))
        if requires_grad:
            t.requires_grad_(True)
        return t

    return _Unpickler(io.BytesIO(data), weights_only, pid, rebuild).load()


class _Placeholder:
    """Stands for a tensor while the first pass only counts storage uses."""

    def __init__(self, *args, **kwargs):
        pass


class _PersistentStorage:
    def __init__(self, pid):
        kind = pid[0].decode() if isinstance(pid[0], bytes) else pid[0]
        if kind != "storage":
            raise pickle.UnpicklingError(f"Unknown saved id type: {pid[0]}")
        storage_type, key, location, numel = pid[1], pid[2], pid[3], pid[4]
        self.dtype = storage_type.dtype
        self.key = str(key)
        self.location = location.decode() if isinstance(location, bytes) else location
        self.numel = int(numel)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Matches `torch.load` (zip and legacy formats; `weights_only=True` by default)."""
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") not in (
            "1", "y", "yes", "true")
    if pickle_module is not None and weights_only:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    opened = None
    if isinstance(f, (str, os.PathLike)):
        opened = f = open(f, "rb")
    try:
        if not hasattr(f, "seek"):
            f = io.BytesIO(f.read())
        start = f.tell()
        if zipfile.is_zipfile(f):
            f.seek(start)
            return _load_zip(f, map_location, weights_only)
        f.seek(start)
        return _load_legacy(f, map_location, weights_only)
    finally:
        if opened is not None:
            opened.close()


def _load_zip(f, map_location, weights_only):
    with zipfile.ZipFile(f) as z:
        names = z.namelist()
        pkl = next((n for n in names if n.endswith("data.pkl")), None)
        if pkl is None:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not "
                               "found")
        prefix = pkl[:-len("data.pkl")]
        byteorder = prefix + "byteorder"
        if byteorder in names and z.read(byteorder) != b"little":
            raise RuntimeError("jtorch reads little-endian checkpoints only")
        storages = _Storages(lambda key: z.read(f"{prefix}data/{key}"), map_location)
        return _unpickle(z.read(pkl), weights_only, storages)


class PyTorchFileReader:
    """Matches `torch.PyTorchFileReader`: the records of a `torch.save` zip archive by name
    (relative to the archive's folder, as `data.pkl` and `data/0`)."""

    def __init__(self, file_or_buffer):
        self._zip = zipfile.ZipFile(file_or_buffer)
        names = self._zip.namelist()
        pkl = next((n for n in names if n.endswith("data.pkl")), None)
        self._prefix = pkl[:-len("data.pkl")] if pkl is not None else ""
        self._names = [n[len(self._prefix):] for n in names if n.startswith(self._prefix)]

    def get_all_records(self) -> list:
        return list(self._names)

    def has_record(self, name: str) -> bool:
        return name in self._names

    def get_record(self, name: str) -> bytes:
        if name not in self._names:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               f"found")
        return self._zip.read(self._prefix + name)

    def get_record_offset(self, name: str) -> int:
        info = self._zip.getinfo(self._prefix + name)
        # The local header is 30 bytes plus the name and the extra field.
        self._zip.fp.seek(info.header_offset + 26)
        name_len, extra_len = struct.unpack("<HH", self._zip.fp.read(4))
        return info.header_offset + 30 + name_len + extra_len

    def get_storage_from_record(self, name: str, numel: int, dtype) -> Tensor:
        """The record's first `numel` elements of `dtype` as a 1-d tensor (a storage class
        for `dtype` means bytes). PyTorch returns a tensor over the storage; jtorch's tensor
        holds the elements directly."""
        if not isinstance(dtype, _dtype.dtype):
            dtype = _dtype.uint8
        data = np.frombuffer(self.get_record(name), dtype=dtype.np, count=numel)
        return wrap(_device.from_host(data))

    def serialization_id(self) -> str:
        name = ".data/serialization_id"
        return self.get_record(name).decode() if name in self._names else ""


def _load_legacy(f, map_location, weights_only):
    """PyTorch's pre-1.6 format: magic, protocol, sys info, the pickle, then raw storages."""
    def read_pickle():
        return _Unpickler(f, weights_only, lambda p: p, lambda *a, **k: None).load()

    if read_pickle() != _MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = read_pickle()
    if protocol != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    read_pickle()   # sys_info
    start = f.tell()
    refs: dict = {}

    def note(pid):
        ref = _LegacyRef(pid)
        refs.setdefault(ref.key, ref)
        return ref

    _Unpickler(f, weights_only, note, lambda *a, **k: None).load()
    end = f.tell()
    raw = {}
    for key in read_pickle():
        (n,) = struct.unpack("<q", f.read(8))
        raw[str(key)] = f.read(n * refs[str(key)].dtype.itemsize)
    after = f.tell()
    f.seek(start)
    data = f.read(end - start)
    f.seek(after)
    storages = _Storages(lambda key: raw[key], map_location)

    def rebuild(ref, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
        if ref.view is not None:
            _, view_offset, _ = ref.view
            offset += int(view_offset)
        arr = storages.get(ref.key, ref.dtype, ref.location, ref.numel)
        root = storages.root(ref.key, arr, ref.location)
        t = root._make_view(Strided(tuple(size), tuple(stride), offset))
        if requires_grad:
            t.requires_grad_(True)
        return t

    return _Unpickler(io.BytesIO(data), weights_only, _LegacyRef, rebuild).load()


class _LegacyRef:
    """A legacy persistent id: ('storage', type, key, location, numel[, view metadata])."""

    def __init__(self, pid):
        self.dtype = pid[1].dtype
        self.key = str(pid[2])
        self.location = pid[3]
        self.numel = int(pid[4])
        self.view = pid[5] if len(pid) > 5 else None
