"""The safetensors format, read and written without the `safetensors` package.

A file is an 8-byte little-endian header length, a JSON header mapping each
name to `{"dtype", "shape", "data_offsets"}` (plus optional `__metadata__` of
strings), then the raw little-endian bytes. The format is small and fixed, so
jtorch implements it directly rather than taking a dependency (the package's
own `safetensors.torch` would import PyTorch). The functions mirror
`safetensors.torch`: `save_file`, `load_file`, `save`, `load`.
"""

from __future__ import annotations

import json
import os
import struct

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap

__all__ = ["save_file", "load_file", "save", "load"]

_CODES = {
    "F64": _dtype.float64,
    "F32": _dtype.float32,
    "F16": _dtype.float16,
    "BF16": _dtype.bfloat16,
    "I64": _dtype.int64,
    "I32": _dtype.int32,
    "I16": _dtype.int16,
    "I8": _dtype.int8,
    "U8": _dtype.uint8,
    "BOOL": _dtype.bool,
    "C64": _dtype.complex64,
    "C128": _dtype.complex128,
}
_NAMES = {v: k for k, v in _CODES.items()}


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of a flat `{name: Tensor}` dict."""
    header, chunks, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name in sorted(tensors):
        t = tensors[name]
        if not isinstance(t, Tensor):
            raise ValueError(
                f"Key `{name}` is invalid, expected torch.Tensor but received {type(t)}"
            )
        code = _NAMES.get(t.dtype)
        if code is None:
            raise ValueError(f"safetensors does not support dtype {t.dtype}")
        arr = np.asarray(t.detach()._array)
        data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {
            "dtype": code,
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def load(data: bytes) -> dict:
    """`{name: Tensor}` from safetensors bytes."""
    if len(data) < 8:
        raise ValueError("Error while deserializing header: HeaderTooSmall")
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n].decode("utf-8"))
    body = memoryview(data)[8 + n :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dt = _CODES.get(info["dtype"])
        if dt is None:
            raise ValueError(f"unsupported safetensors dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        arr = np.frombuffer(body[begin:end], dtype=dt.np.newbyteorder("<")).astype(dt.np)
        out[name] = wrap(jnp.asarray(arr.reshape(info["shape"])))
    return out


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    with open(filename, "wb") as f:
        f.write(save(tensors, metadata))


def load_file(filename, device="cpu") -> dict:
    with open(os.fspath(filename), "rb") as f:
        out = load(f.read())
    if str(device) != "cpu":
        out = {k: v.to(device) for k, v in out.items()}
    return out


def metadata(filename) -> dict | None:
    """The `__metadata__` strings of a safetensors file."""
    with open(os.fspath(filename), "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n).decode("utf-8")).get("__metadata__")
