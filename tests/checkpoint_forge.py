"""Writes PyTorch-format checkpoints by hand, lying ones included, without torch or jtorch.

The serialization tests feed these bytes to `jtorch.load` (tests/) and to both `torch.load`
and `jtorch.load` (compat/): a checkpoint is a zip of `<prefix>/data.pkl` (a protocol-2
pickle whose tensors are `torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, hooks)` and whose storages are persistent ids `('storage', torch.FloatStorage,
key, location, numel)`) and `<prefix>/data/<key>` records holding each storage's bytes.
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
import zipfile


class Storage:
    """A storage reference as it appears in data.pkl (what it claims, not what it holds)."""

    def __init__(
        self,
        key: str,
        numel: int,
        storage_type: str = "FloatStorage",
        location: str = "cpu",
        legacy: bool = False,
    ):
        self.key, self.numel, self.storage_type, self.location = key, numel, storage_type, location
        self.legacy = legacy  # the pre-1.6 format's id has a sixth field (a storage view)


class Tensor:
    """A `_rebuild_tensor_v2(storage, offset, size, stride, ...)` call in data.pkl."""

    def __init__(self, storage: Storage, offset: int, size: tuple, stride: tuple):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride


class Global:
    """A bare global (`GLOBAL module\\nname`) written by name."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce wants a callable; this one is a name
        raise TypeError(f"{self.module}.{self.name} is only written into a pickle")


class Call:
    """`Global(*args)` through pickle's REDUCE."""

    def __init__(self, func: Global, *args):
        self.func, self.args = func, args


class _Pickler(pickle._Pickler):
    dispatch = pickle._Pickler.dispatch.copy()

    def _save_global(self, obj: Global):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())

    dispatch[Global] = _save_global

    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            pid = ("storage", Global("torch", obj.storage_type), obj.key, obj.location, obj.numel)
            return pid + (None,) if obj.legacy else pid
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return (
                Global("torch._utils", "_rebuild_tensor_v2"),
                (
                    obj.storage,
                    obj.offset,
                    tuple(obj.size),
                    tuple(obj.stride),
                    False,
                    collections.OrderedDict(),
                ),
            )
        if isinstance(obj, Call):
            return (obj.func, obj.args)
        return NotImplemented


def data_pkl(obj) -> bytes:
    """`obj` pickled at protocol 2, with `Tensor`, `Storage`, `Global` and `Call` as torch's."""
    buf = io.BytesIO()
    _Pickler(buf, 2).dump(obj)
    return buf.getvalue()


def checkpoint(
    obj, records: dict[str, bytes], prefix: str = "archive", data_pkl_bytes: bytes | None = None
) -> bytes:
    """A zip checkpoint holding `obj` as data.pkl and `records` (key -> bytes) as data/<key>."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(
            f"{prefix}/data.pkl", data_pkl(obj) if data_pkl_bytes is None else data_pkl_bytes
        )
        z.writestr(f"{prefix}/byteorder", b"little")
        for key, data in records.items():
            z.writestr(f"{prefix}/data/{key}", data)
        z.writestr(f"{prefix}/version", b"3\n")
    return buf.getvalue()


def stored_zip(entries: list[tuple[str, bytes]]) -> bytes:
    """A zip of `(name, bytes)` entries, stored uncompressed, in this order."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in entries:
            z.writestr(name, data)
    return buf.getvalue()


def with_entry_size(data: bytes, name: str, size: int) -> bytes:
    """`data` (a zip) with the central directory claiming `size` bytes for entry `name`."""
    out = bytearray(data)
    pos = out.find(b"PK\x01\x02")
    while pos >= 0:
        name_len = struct.unpack("<H", out[pos + 28 : pos + 30])[0]
        if out[pos + 46 : pos + 46 + name_len].decode() == name:
            out[pos + 20 : pos + 28] = struct.pack("<II", size, size)  # compressed, plain
        pos = out.find(b"PK\x01\x02", pos + 1)
    return bytes(out)


FOUR_FLOATS = b"".join(struct.pack("<f", v) for v in (0.0, 1.0, 2.0, 3.0))


def _one(storage_numel=4, offset=0, size=(4,), stride=(1,), records=None) -> bytes:
    """A checkpoint `{"x": tensor}` over one float32 storage holding 0, 1, 2, 3."""
    return checkpoint(
        {"x": Tensor(Storage("0", storage_numel), offset, size, stride)},
        {"0": FOUR_FLOATS} if records is None else records,
    )


def _lying_headers() -> dict:
    good = _one()
    return {
        "entry reaches past the archive": with_entry_size(good, "archive/data/0", 2**30),
        "data.pkl reaches past the archive": with_entry_size(good, "archive/data.pkl", 2**31),
    }


_MINIZ = "This is an internal miniz error"
_RECORD = "record size \\(16 bytes\\) does not match expected size"

# name -> (file bytes, exception type, regex of the message), as PyTorch 2.13 raises them;
# compat/test_serialization_faults.py checks each one against real PyTorch.
LYING = {
    "storage claims more elements": (
        _one(storage_numel=1000),
        RuntimeError,
        _RECORD + " \\(4000 bytes = 4000 elements",
    ),
    "storage claims 2**40 elements": (_one(storage_numel=2**40), RuntimeError, _RECORD),
    "storage claims fewer elements": (_one(storage_numel=2), RuntimeError, _RECORD),
    "tensor reaches past its storage": (
        _one(size=(1000,)),
        RuntimeError,
        "Trying to resize storage that is not resizable",
    ),
    "offset reaches past the storage": (
        _one(offset=3, size=(2,)),
        RuntimeError,
        "Trying to resize storage that is not resizable",
    ),
    "huge tensor over a small storage": (
        _one(size=(2**31, 2**31), stride=(1, 1)),
        RuntimeError,
        "not resizable",
    ),
    "negative size": (_one(size=(-1,)), RuntimeError, "numel: integer multiplication overflow"),
    "overflowing sizes": (
        _one(size=(2**62, 2**62), stride=(1, 1)),
        RuntimeError,
        "numel: integer multiplication overflow",
    ),
    "size beyond int64": (_one(size=(2**64,)), TypeError, "Overflow when unpacking long long"),
    "negative stride": (
        _one(offset=3, size=(2,), stride=(-1,)),
        RuntimeError,
        "Storage size calculation overflowed with sizes=\\[2\\] and strides=\\[-1\\]",
    ),
    "overflowing stride": (
        _one(size=(3,), stride=(2**62,)),
        RuntimeError,
        "Storage size calculation overflowed",
    ),
    "negative offset": (
        _one(offset=-1, size=(2,)),
        RuntimeError,
        "Tensor: invalid storage offset -1",
    ),
    "huge offset": (
        _one(offset=2**62, size=(1,)),
        RuntimeError,
        "Storage size calculation overflowed",
    ),
    "size and stride lengths differ": (
        _one(size=(2, 2)),
        RuntimeError,
        "unequal size length \\(2\\) and stride length \\(1\\)",
    ),
    "float size": (_one(size=(2.0,)), TypeError, "set_\\(\\)"),
    "missing storage record": (
        _one(records={}),
        RuntimeError,
        "PytorchStreamReader failed locating file data/0: file not found. " + _MINIZ,
    ),
    "no data.pkl": (
        stored_zip([("archive/version", b"3\n")]),
        RuntimeError,
        "PytorchStreamReader failed locating file data.pkl: file not found",
    ),
    "no version record": (
        stored_zip([("archive/data.pkl", data_pkl({}))]),
        RuntimeError,
        'Expected hasRecord\\("version"\\) to be true',
    ),
    "version from the future": (
        stored_zip([("archive/data.pkl", data_pkl({})), ("archive/version", b"99\n")]),
        RuntimeError,
        "Attempted to read a PyTorch file with version 99",
    ),
    "records outside a folder": (
        stored_zip([("data.pkl", data_pkl({})), ("version", b"3\n")]),
        RuntimeError,
        "file in archive is not in a subdirectory: data.pkl",
    ),
    "unknown byte order": (
        stored_zip(
            [
                ("archive/data.pkl", data_pkl({})),
                ("archive/byteorder", b"middle"),
                ("archive/version", b"3\n"),
            ]
        ),
        ValueError,
        "Unknown endianness type: middle",
    ),
    **{
        name: (
            data,
            RuntimeError,
            "PytorchStreamReader failed reading zip archive: invalid "
            "header or archive is corrupted. " + _MINIZ,
        )
        for name, data in _lying_headers().items()
    },
}


def truncations(data: bytes) -> dict:
    """`data` cut short at a few places: name -> (bytes, exception type, message regex)."""
    out = {}
    cuts = {
        "last byte cut": len(data) - 1,
        "last 30 bytes cut": len(data) - 30,
        "cut in half": len(data) // 2,
        "cut to 40 bytes": 40,
    }
    for name, n in cuts.items():
        out[name] = (
            data[:n],
            RuntimeError,
            "PytorchStreamReader failed reading zip archive: "
            "failed finding central directory. " + _MINIZ,
        )
    out["cut to 10 bytes"] = (
        data[:10],
        RuntimeError,
        "PytorchStreamReader failed reading zip archive: not a ZIP archive. " + _MINIZ,
    )
    return out
