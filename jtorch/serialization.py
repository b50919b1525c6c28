"""`torch.save` / `torch.load` in PyTorch's own checkpoint formats (DESIGN 10).

The zip format (PyTorch >= 1.6): `<name>/data.pkl` is a protocol-2 pickle in
which each tensor is `torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, hooks)` and each storage is a persistent id
`('storage', torch.FloatStorage, key, location, numel)` whose bytes are the
entry `<name>/data/<key>`, aligned to 64 bytes in the file. Tensors that share a
jtorch storage are written as views of one storage, and load back as views of one
storage. The legacy (pre-1.6) format is read too.

jtorch writes the names PyTorch's pickles use (`torch._utils`, `torch.FloatStorage`)
without importing torch, through a pickler that emits those globals itself. Loading
checks every record against the bytes the file holds before it builds a tensor
(`_zip_reader`, `_rebuild`), and `weights_only=True` (the default) runs PyTorch's
restricted unpickler (`_weights_only`) over the globals PyTorch allows, plus
`add_safe_globals`. A save to a path writes a temporary file and renames it, so an
interrupted save never leaves a damaged checkpoint behind.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import random
import re
import struct
import sys
import types
import warnings
import zipfile

import jax
import numpy as np

from . import _device, _dtype, _layout, _rebuild, _weights_only, _zip_reader
from ._tensor import Size, Tensor
from ._views import contiguous_strides

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
    "DEFAULT_PROTOCOL",
    "PyTorchFileReader",
]

DEFAULT_PROTOCOL = 2
_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001
_DTYPE_STORAGE = {v: k for k, v in _rebuild.STORAGE_DTYPE.items()}


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

    def __call__(self, *args, **kwargs):  # pickle requires a reduce function be callable
        raise TypeError(f"{self.module}.{self.name} is a name written into a pickle")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_ORDERED_DICT = collections.OrderedDict


class _StorageRef:
    """A storage as data.pkl names it. A dtype with no `torch.<X>Storage` class (uint16,
    the float8s) is saved as PyTorch saves it: an untyped storage counted in bytes."""

    def __init__(self, key: str, dtype, numel: int, location: str):
        self.key = key
        self.dtype = dtype
        self.untyped = dtype not in _DTYPE_STORAGE
        self.numel = numel * dtype.itemsize if self.untyped else numel
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

    def save_global(self, obj, name=None):
        """A jtorch class or function is written under PyTorch's name (`torch.nn.modules.
        linear.Linear`), so PyTorch can load the pickle; jtorch reads `torch.*` names back
        as its own."""
        module = getattr(obj, "__module__", None) or ""
        if module == "jtorch" or module.startswith("jtorch."):
            qualname = name or getattr(obj, "__qualname__", None) or obj.__name__
            self._save_torch_global(_Global("torch" + module[len("jtorch") :], qualname))
            return
        super().save_global(obj, name)

    dispatch[types.FunctionType] = save_global

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            kind = (
                _Global("torch.storage", "UntypedStorage")
                if obj.untyped
                else _Global("torch", _DTYPE_STORAGE[obj.dtype])
            )
            return ("storage", kind, obj.key, obj.location, obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return _reduce_tensor(obj, self._storages)
        if isinstance(obj, Size):
            return (_Global("torch", "Size"), (tuple(obj),))
        if isinstance(obj, _layout.layout):  # PyTorch's copyreg entry for layouts
            return (_GET_LAYOUT, (repr(obj),))
        if isinstance(obj, _device.device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_Global("torch", "device"), args)
        return NotImplemented


def _save_dtype(self, obj):
    """A dtype pickles as the bare global `torch.float32`, as PyTorch's does."""
    self._save_torch_global(_Global("torch", str(obj)[len("torch.") :]))


_Pickler.dispatch[_dtype.dtype] = _save_dtype
# a memory format pickles as its global name (`torch.contiguous_format`), as PyTorch's does
_Pickler.dispatch[_layout.memory_format] = lambda self, obj: self._save_torch_global(
    _Global("torch", obj.name)
)

_GET_LAYOUT = _Global("torch.serialization", "_get_layout")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")


def _location(t: Tensor) -> str:
    dev = t.device
    return "cpu" if dev.type == "cpu" else str(dev)


def _reduce_tensor(t: Tensor, storages: dict):
    from .nn.parameter import Parameter

    if t.layout is not _layout.strided:  # PyTorch's `_rebuild_sparse_tensor(layout, data)`
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
        ref = _StorageRef(
            str(len(storages)), _dtype.from_np(root_arr.dtype), int(root_arr.size), _location(t)
        )
        entry = storages[st_id] = (ref, root_arr)
    ref = entry[0]
    layout = (
        ref,
        int(offset),
        tuple(int(n) for n in t.shape),
        tuple(int(s) for s in stride),
        bool(t.requires_grad),
        _ORDERED_DICT(),
    )
    if ref.untyped:
        return (_REBUILD_TENSOR_V3, layout + (ref.dtype,))
    return (_REBUILD_TENSOR, layout)


def _storage_bytes(arr) -> memoryview:
    """A storage's bytes, little-endian, copied from the device at most once."""
    a = np.asarray(jax.device_get(arr)).reshape(-1)
    a = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False))
    return memoryview(a.view(np.uint8))


def save(
    obj,
    f,
    pickle_module=pickle,
    pickle_protocol: int = DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Matches `torch.save`: PyTorch's zip checkpoint format (loadable by PyTorch).

    Saving to a path is atomic: the checkpoint is written next to it under a temporary
    name and renamed over it once complete.
    """
    storages: dict = {}
    buf = io.BytesIO()
    _Pickler(buf, pickle_protocol, storages).dump(obj)
    if not isinstance(f, (str, os.PathLike)):
        _write_zip(f, "archive", buf.getvalue(), storages)
        return
    path = os.fspath(f)
    name = os.path.splitext(os.path.basename(path))[0] or "archive"
    tmp = os.path.join(
        os.path.dirname(path) or ".",
        f".{os.path.basename(path)}.{os.getpid()}.{random.getrandbits(32):08x}.tmp",
    )
    try:
        with open(tmp, "xb") as fh:
            _write_zip(fh, name, buf.getvalue(), storages)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def dump_with_torch_names(obj, f, protocol: int = pickle.DEFAULT_PROTOCOL) -> None:
    """A plain pickle of `obj` (no tensors) with jtorch's classes written under PyTorch's
    names, as PyTorch writes it (DCP's `.metadata`)."""
    _Pickler(f, protocol, {}).dump(obj)


def load_with_torch_names(f):
    """Reads a plain pickle written by PyTorch (or `dump_with_torch_names`), `torch.*`
    names as jtorch's."""
    return _full_unpickler(pickle)(f).load()


_FB_EXTRA = b"FB"  # the extra-field id PyTorch pads local headers with


def _write_zip(fh, name, pkl, storages):
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as z:

        def put(path, data, align: bool = False):
            info = zipfile.ZipInfo(f"{name}/{path}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.file_size = len(data)
            if align and fh.seekable():
                # Pad the local header, as PyTorch does, so the bytes start at a multiple of
                # 64: a loader (or mmap) can then hand them to XLA without copying.
                zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT
                header = 30 + len(info.filename.encode("utf-8")) + (20 if zip64 else 0)
                pad = -(fh.tell() + header + 4) % _zip_reader.ALIGNMENT
                info.extra = _FB_EXTRA + struct.pack("<H", pad) + b"Z" * pad
            with z.open(info, "w") as out:
                out.write(data)

        put("data.pkl", pkl)
        put(".format_version", b"1")
        put(".storage_alignment", b"64")
        put("byteorder", b"little")
        for ref, arr in storages.values():
            put(f"data/{ref.key}", _storage_bytes(arr), align=True)
        put("version", b"3\n")
        put(".data/serialization_id", str(random.getrandbits(128)).encode())


# ---------------------------------------------------------------------------
# Loading

_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only if "
    "you got the file from a trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def _weights_only_message(message: str) -> str:
    """PyTorch's wording around an error of the weights-only unpickler."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the "
            f"checkpoint\033[0m. \n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
            "with `weights_only=True` please check the recommended steps in the following "
            "error message.\n\tWeightsUnpickler error: " + message + _DOCS_MESSAGE
        )
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {_UNSAFE_MESSAGE}\n"
    out = f"Weights only load failed. {_UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        out += (
            "Please file an issue with the following so that we can make `weights_only=True` "
            "compatible with your use case: WeightsUnpickler error: "
        )
    return out + "\n\n" + message + _DOCS_MESSAGE


def _decode(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


class _StorageForMapLocation:
    """What a `map_location` callable receives: a storage it may move (`.cuda()`, `.to()`)."""

    def __init__(self, location):
        self.device = _device.device("cpu")
        self.location = location

    def cpu(self):
        self.device = _device.device("cpu")
        return self

    def cuda(self, device=None):
        self.device = _device.device(
            "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
        )
        return self

    def to(self, device=None, *args, **kwargs):
        if device is not None:
            self.device = _device.device(device)
        return self


def _target_device(map_location, location: str):
    """Where a storage saved on `location` goes (None: the CPU)."""
    if map_location is None:
        target = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif isinstance(map_location, (str, bytes, _device.device)):
        target = _decode(map_location) if isinstance(map_location, bytes) else map_location
    elif callable(map_location):
        out = map_location(_StorageForMapLocation(location), location)
        target = out.device if isinstance(out, _StorageForMapLocation) else location
    else:
        raise ValueError(
            f"map_location should be a string, a device, a dict or a callable, "
            f"but got {type(map_location).__name__}"
        )
    d = _device.device(target)
    if d.type == "cpu":
        return None
    if d.type == "cuda" and not _device.accelerators("cuda"):
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
            "is False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU."
        )
    return d


class _Storages:
    """The checkpoint's storages by key, each read once, checked against what the pickle says.

    Args:
        read: key, claimed size in bytes -> the record's bytes (None: not read yet, for the
            legacy format, whose storages follow the pickle).
        map_location: `torch.load`'s argument.
        byteswap: the checkpoint is big-endian.
    """

    def __init__(self, read, map_location, byteswap: bool = False):
        self._read = read
        self._map_location = map_location
        self._byteswap = byteswap
        self.by_key: dict = {}

    def persistent_load(self, saved_id):
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        typename = _decode(saved_id[0])
        if typename != "storage":
            raise AssertionError(
                f"Unknown typename for persistent_load, expected 'storage' but got '{typename}'"
            )
        storage_type, key, location, numel = saved_id[1:]
        if not isinstance(storage_type, _rebuild.StorageType):
            raise AttributeError(f"'{type(storage_type).__name__}' object has no attribute 'dtype'")
        st = self.by_key.get(key)
        if st is not None:
            return st
        if not isinstance(numel, int):
            raise TypeError(f"a storage's element count must be an int, got {type(numel).__name__}")
        dtype = storage_type.dtype
        nbytes = numel * _rebuild.element_size(dtype)
        device = _target_device(self._map_location, _decode(location))
        if device is not None and device.type == "meta":
            # shapes only, as PyTorch's meta storages: the record is checked, never read
            self._read(key, nbytes, check_only=True)
            st = self.by_key[key] = _rebuild.LoadedStorage(dtype, nbytes, None, meta=True)
            return st
        data = self._read(key, nbytes)
        if data is not None and self._byteswap and dtype.itemsize > 1:
            swap = np.float16 if dtype == _dtype.complex32 else dtype.np
            data.view(swap).byteswap(inplace=True)
        st = self.by_key[key] = _rebuild.LoadedStorage(dtype, nbytes, _rebuild.placer(device), data)
        return st


def _unpickle(file, storages: _Storages, weights_only: bool, pickle_module, load_args):
    """The checkpoint's object, from its pickle (restricted as PyTorch's when weights_only)."""
    if weights_only:
        allowed = {**_user_allowed_globals(), **_rebuild.allowed_globals()}
        obj = _weights_only.Unpickler(
            file,
            allowed,
            storages.persistent_load,
            _rebuild.unavailable_globals(),
            load_args.get("encoding", "utf-8"),
        ).load()
    else:
        unpickler = _full_unpickler(pickle_module)(file, **load_args)
        unpickler.persistent_load = storages.persistent_load
        obj = unpickler.load()
    if any(not st.used for st in storages.by_key.values()):
        obj = _bare_storages(obj)
    return obj


def _user_allowed_globals() -> dict:
    out = {}
    for g in _safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(
                    f"Expected tuple of length 2 (global, str of callable full "
                    f"path), but got tuple of length: {len(g)}"
                )
            if type(g[1]) is not str:
                raise TypeError(
                    f"Expected second item in tuple to be str of callable full "
                    f"path, but got: {type(g[1])}"
                )
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
    return out


def _full_unpickler(pickle_module):
    """Python's unpickler (of `pickle_module`), reading torch's names as jtorch's."""

    class Unpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            module, name = _weights_only.python3_name(module, name)
            full = f"{module}.{name}"
            obj = _rebuild.allowed_globals().get(full)
            if obj is not None:
                return obj
            unavailable = _rebuild.unavailable_globals().get(full)
            if unavailable is not None:
                raise unavailable[0](unavailable[1])
            if module == "torch" or module.startswith("torch."):
                module = "jtorch" + module[len("torch") :]
            return super().find_class(module, name)

    return Unpickler


def _bare_storages(obj):
    """A storage saved by itself loads as a TypedStorage, as in PyTorch."""
    if isinstance(obj, _rebuild.LoadedStorage):
        return obj.typed_storage()
    if type(obj) in (dict, collections.OrderedDict):
        for k, v in obj.items():
            obj[k] = _bare_storages(v)
    elif type(obj) is list:
        obj[:] = [_bare_storages(v) for v in obj]
    elif type(obj) is tuple:
        obj = tuple(_bare_storages(v) for v in obj)
    return obj


def _is_zipfile(f) -> bool:
    """PyTorch's test: the file starts with a zip local header (not just contains one)."""
    start = f.tell()
    magic = f.read(4)
    f.seek(start)
    return magic == b"PK\x03\x04"


def load(
    f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args
):
    """Matches `torch.load` (zip and legacy formats; `weights_only=True` by default).

    Every record is checked against the bytes the file holds before a tensor is built.
    `mmap=True` maps the file and reads each storage from disk when it is first used.
    """
    weights_only_not_set = weights_only is None
    if weights_only_not_set:
        weights_only = pickle_module is None
    true_values = ("1", "y", "yes", "true")
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    if force and force_no:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
            "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set."
        )
    if force:
        weights_only = True
    elif force_no and weights_only_not_set:
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    opened = None
    if path is not None:
        opened = f = open(path, "rb")
    try:
        if not hasattr(f, "seek"):
            f = io.BytesIO(f.read())
        try:
            if _is_zipfile(f):
                if mmap and path is None:
                    raise ValueError("f must be a file path in order to use the mmap argument")
                reader = _zip_reader.ZipReader(f, path, bool(mmap))
                try:
                    return _load_zip(
                        reader, map_location, weights_only, pickle_module, pickle_load_args
                    )
                finally:
                    reader.close()
            if mmap:
                name = f"{path}, " if isinstance(f, str) else ""
                raise RuntimeError(
                    "mmap can only be used with files saved with `torch.save("
                    f"{name}_use_new_zipfile_serialization=True), please torch.save your "
                    "checkpoint with this option in order to use mmap."
                )
            return _load_legacy(f, map_location, weights_only, pickle_module, pickle_load_args)
        except pickle.UnpicklingError as e:
            if not weights_only:
                raise
            raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
    finally:
        if opened is not None:
            opened.close()


def _load_zip(reader: _zip_reader.ZipReader, map_location, weights_only, pickle_module, load_args):
    if reader.has_record("constants.pkl"):
        if weights_only:
            raise RuntimeError(
                "Cannot use ``weights_only=True`` with TorchScript archives "
                "passed to ``torch.load``. " + _UNSAFE_MESSAGE
            )
        raise RuntimeError(
            "This is a TorchScript archive (torch.jit.save), which jtorch cannot load"
        )
    # The records PyTorch reads before data.pkl, in its order (each may be damaged).
    if reader.has_record(".format_version"):
        reader.get_record(".format_version")
    byteorder = b"little"
    if reader.has_record("byteorder"):
        byteorder = reader.get_record("byteorder")
        if byteorder not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + byteorder.decode())
    if reader.has_record(".storage_alignment"):
        int(reader.get_record(".storage_alignment"))

    def read(key, nbytes: int, check_only: bool = False):
        name = f"data/{key}"
        size = reader.record_size(name)
        if size != nbytes:
            raise RuntimeError(
                f"record size ({size} bytes) does not match expected size "
                f"({nbytes} bytes = {nbytes} elements * 1 bytes/element) for "
                "dtype Byte"
            )
        return None if check_only else reader.read_storage(name)

    storages = _Storages(read, map_location, byteswap=byteorder != sys.byteorder.encode())
    return _unpickle(
        io.BytesIO(reader.get_record("data.pkl")), storages, weights_only, pickle_module, load_args
    )


def _load_legacy(f, map_location, weights_only, pickle_module, load_args):
    """PyTorch's pre-1.6 format: magic, protocol, sys info, the pickle, then raw storages.

    The storages follow the pickle, so tensors are built over storages whose bytes come
    later; each storage's size is checked against the bytes left in the file before it is
    read.
    """

    def read_small():
        return _unpickle(f, _Storages(None, None), weights_only, pickle_module, load_args)

    if read_small() != _MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = read_small()
    if protocol != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    read_small()  # sys_info
    storages = _LegacyStorages(map_location)
    result = _unpickle(f, storages, weights_only, pickle_module, load_args)
    for key in read_small():
        st = storages.by_key.get(key)
        if st is None:
            raise AssertionError(f"storage key {key!r} not found in deserialized_objects")
        (n,) = struct.unpack("<q", _read_exact(f, 8))
        itemsize = _rebuild.element_size(st.dtype)
        if n * itemsize != st.nbytes:
            raise RuntimeError(
                f"storage has wrong byte size: expected {st.nbytes // itemsize} got {n}"
            )
        # The size was checked against the pickle, not the file: read no more than is there.
        data = _zip_reader.aligned_empty(min(st.nbytes, _bytes_left(f)))
        got = f.readinto(memoryview(data)) if data.size else 0
        if got != st.nbytes:
            raise RuntimeError(
                f"unexpected EOF, expected {st.nbytes - got} more bytes. The "
                "file might be corrupted."
            )
        st.fill(data)
    for st in storages.by_key.values():
        if st.data is None:
            raise RuntimeError("The checkpoint ends before all its storages")
    return result


def _bytes_left(f) -> int:
    here = f.tell()
    end = f.seek(0, os.SEEK_END)
    f.seek(here)
    return end - here


def _read_exact(f, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise RuntimeError(
            f"unexpected EOF, expected {n - len(data)} more bytes. The file might be corrupted."
        )
    return data


class _LegacyStorages(_Storages):
    """Storages of the legacy format, which come after the pickle, and its storage views."""

    def __init__(self, map_location):
        super().__init__(lambda key, nbytes, check_only=False: None, map_location)

    def persistent_load(self, saved_id):
        if isinstance(saved_id, tuple) and _decode(saved_id[0]) == "module":
            return saved_id[1]
        st = super().persistent_load(saved_id[:5])
        view = saved_id[5] if len(saved_id) > 5 else None
        if view is not None:
            raise RuntimeError(
                "This legacy checkpoint holds storage views (written before "
                "PyTorch 1.0), which jtorch does not load"
            )
        return st


class PyTorchFileReader:
    """Matches `torch.PyTorchFileReader`: the records of a `torch.save` zip archive by name
    (relative to the archive's folder, as `data.pkl` and `data/0`), read as `torch.load`
    reads them."""

    def __init__(self, file_or_buffer):
        if isinstance(file_or_buffer, (str, os.PathLike)):
            with open(file_or_buffer, "rb") as f:
                file_or_buffer = io.BytesIO(f.read())
        self._reader = _zip_reader.ZipReader(file_or_buffer)

    def get_all_records(self) -> list:
        return self._reader.all_records()

    def has_record(self, name: str) -> bool:
        return self._reader.has_record(name)

    def get_record(self, name: str) -> bytes:
        return self._reader.get_record(name)

    def get_record_offset(self, name: str) -> int:
        return self._reader.record_offset(name)

    def get_storage_from_record(self, name: str, numel: int, dtype) -> Tensor:
        """The record's first `numel` elements of `dtype` as a 1-d tensor (a storage class
        for `dtype` means bytes). PyTorch returns a tensor over the storage; jtorch's tensor
        holds the elements directly."""
        from ._tensor import wrap

        if not isinstance(dtype, _dtype.dtype):
            dtype = _dtype.uint8
        nbytes = numel * dtype.itemsize
        size = self._reader.record_size(name)
        if size != nbytes:
            raise RuntimeError(
                f"record size ({size} bytes) does not match expected size "
                f"({nbytes} bytes = {nbytes} elements * 1 bytes/element) for "
                "dtype Byte"
            )
        data = self._reader.read_storage(name).view(dtype.np)
        return wrap(_rebuild.placer(None)(data))

    def serialization_id(self) -> str:
        name = ".data/serialization_id"
        return self._reader.get_record(name).decode() if self.has_record(name) else ""
