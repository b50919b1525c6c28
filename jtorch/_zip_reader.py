"""Reads the records of a zip checkpoint as PyTorch's `PytorchStreamReader` does.

PyTorch reads checkpoints with miniz, so this reader parses the zip the way miniz does and
refuses what miniz refuses, with PyTorch's messages: an end record or central directory
that does not fit the file, an entry whose data would reach past the end of the archive
(checked when the archive is opened, before anything is allocated), a damaged local header,
a compression method other than stored or deflate. Like PyTorch it does not check
CRC-32s (PyTorch loads a checkpoint whose tensor bytes were altered), looks names up
without regard to case, and reads names as UTF-8.

A storage record is read straight from the file into a 64-byte aligned numpy buffer: one
copy, and jax's CPU backend can take such a buffer as it is. With `mmap=True` a record is
a window of a private (copy-on-write) mapping of the file, read from disk when first used.
"""

from __future__ import annotations

import mmap as _mmap
import os
import re
import struct
import zlib

import numpy as np

__all__ = ["ZipReader", "zip_error", "aligned_empty", "ALIGNMENT"]

ALIGNMENT = 64  # PyTorch aligns storage records to 64 bytes; XLA's CPU client wants 64 too
_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record (22 bytes)
_EOCD64_LOCATOR = struct.Struct("<4sLQL")  # zip64 end of central directory locator (20)
_EOCD64 = struct.Struct("<4sQ2H2L4Q")  # zip64 end of central directory record (56)
_CENTRAL = struct.Struct("<4s6H3L5H2L")  # central directory file header (46)
_LOCAL = struct.Struct("<4s5H3L2H")  # local file header (30)
_U16, _U32 = 0xFFFF, 0xFFFFFFFF
_MIN_VERSION, _MAX_VERSION = 1, 10  # caffe2's supported file format versions
_MINIZ_HINT = (
    ". This is an internal miniz error. If you are seeing this error, there is a high likelihood "
    "that your checkpoint file is corrupted. This can happen if the checkpoint was not saved "
    "properly, was transferred incorrectly, or the file was modified after saving."
)


def zip_error(what: str) -> RuntimeError:
    """PyTorch's error for a damaged archive (`what`: the step, then miniz's words)."""
    return RuntimeError(f"PytorchStreamReader failed {what}{_MINIZ_HINT}")


def _archive_error(reason: str) -> RuntimeError:
    return zip_error(f"reading zip archive: {reason}")


_CORRUPT = "invalid header or archive is corrupted"


class _Entry:
    __slots__ = ("name", "method", "flags", "comp_size", "size", "header_offset")

    def __init__(
        self, name: bytes, method: int, flags: int, comp_size: int, size: int, header_offset: int
    ):
        self.name, self.method, self.flags = name, method, flags
        self.comp_size, self.size, self.header_offset = comp_size, size, header_offset


class ZipReader:
    """A checkpoint's records by name (`data.pkl`, `data/0`, ...), inside its archive folder.

    Args:
        f: a seekable binary file positioned at the checkpoint's first byte.
        path: the file's path when it has one (needed by `use_mmap`).
        use_mmap: map the file instead of reading storages into memory.
    """

    def __init__(self, f, path: str | None = None, use_mmap: bool = False):
        self._f = f
        self._mmap = None
        self._base = f.tell()
        self._size = f.seek(0, os.SEEK_END) - self._base
        if self._size < _EOCD.size:
            raise _archive_error("not a ZIP archive")
        entries = self._central_directory()
        if not entries:
            raise RuntimeError("archive does not contain any files")
        self._entries = {e.name.lower(): e for e in reversed(entries)}  # first one wins
        first = entries[0].name.decode("utf-8", "replace")
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self.prefix = first[: first.index("/") + 1]
        if self.has_record(".data/serialization_id"):
            self.get_record(".data/serialization_id")
        self._check_version()
        # What PyTorch's `get_all_records` does next: every name as UTF-8, in the folder.
        for e in entries:
            name = e.name.decode("utf-8")
            if not name.startswith(self.prefix):
                raise RuntimeError(
                    f"file in archive is not in a subdirectory {self.prefix}: {name}"
                )
        if use_mmap:
            with open(path, "rb") as fh:
                self._mmap = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)

    # -- the central directory, as miniz reads it ----------------------------

    def _read_at(self, offset: int, n: int) -> bytes:
        self._f.seek(self._base + offset)
        return self._f.read(n)

    def _central_directory(self) -> list[_Entry]:
        tail_start = max(0, self._size - (_EOCD.size + _U16))
        tail = self._read_at(tail_start, self._size - tail_start)
        pos = tail.rfind(b"PK\x05\x06", 0, len(tail) - _EOCD.size + 4)
        if pos < 0:
            raise _archive_error("failed finding central directory")
        eocd_at = tail_start + pos
        (_, disk, cd_disk, here, total, cd_size, cd_offset, _) = _EOCD.unpack_from(tail, pos)
        loc = (
            self._read_at(eocd_at - _EOCD64_LOCATOR.size, _EOCD64_LOCATOR.size)
            if (eocd_at >= _EOCD64_LOCATOR.size + _EOCD64.size)
            else b""
        )
        if loc[:4] == b"PK\x06\x07":
            _, _, rec_at, disks = _EOCD64_LOCATOR.unpack(loc)
            if rec_at > self._size - _EOCD64.size:
                raise _archive_error("not a ZIP archive")
            rec = self._read_at(rec_at, _EOCD64.size)
            # miniz reads a zip64 end record only when its signature is right; otherwise it
            # goes on with the 32-bit one
            if rec[:4] == b"PK\x06\x06":
                (_, rec_size, _, _, disk, cd_disk, here, total, cd_size, cd_offset) = (
                    _EOCD64.unpack(rec)
                )
                if rec_size < _EOCD64.size - 12:
                    raise _archive_error(_CORRUPT)
                if disks != 1:
                    raise _archive_error("unsupported multidisk archive")
                if total > _U32 or here > _U32:
                    raise _archive_error("too many files")
                if cd_size > _U32:
                    raise _archive_error("unsupported central directory size")
        if total != here or (disk | cd_disk) and (disk != 1 or cd_disk != 1):
            raise _archive_error("unsupported multidisk archive")
        if cd_size < total * _CENTRAL.size or cd_offset + cd_size > self._size:
            raise _archive_error(_CORRUPT)
        cd = self._read_at(cd_offset, cd_size)
        entries, p = [], 0
        for _ in range(total):
            if p + _CENTRAL.size > len(cd) or cd[p : p + 4] != b"PK\x01\x02":
                raise _archive_error(_CORRUPT)
            (
                _,
                _,
                _,
                flags,
                method,
                mod_time,
                _,
                _,
                comp_size,
                size,
                name_len,
                extra_len,
                comment_len,
                entry_disk,
                _,
                _,
                header_offset,
            ) = _CENTRAL.unpack_from(cd, p)
            end = p + _CENTRAL.size + name_len + extra_len + comment_len
            if end > len(cd):
                raise _archive_error(_CORRUPT)
            name = cd[p + _CENTRAL.size : p + _CENTRAL.size + name_len]
            extra = cd[p + _CENTRAL.size + name_len : p + _CENTRAL.size + name_len + extra_len]
            if _U32 in (comp_size, size, header_offset):
                size, comp_size, header_offset = _zip64_sizes(extra, size, comp_size, header_offset)
            # miniz reads the method as 32 bits here, the modification time with it, so
            # sizes that disagree pass when the time is not 0 (PyTorch writes 0)
            if (not method | mod_time << 16 and size != comp_size) or (size and not comp_size):
                raise _archive_error(_CORRUPT)
            if entry_disk == _U16 or (entry_disk != disk and entry_disk != 1):
                raise _archive_error("unsupported multidisk archive")
            if header_offset + _LOCAL.size + comp_size > self._size:
                raise _archive_error(_CORRUPT)
            if flags & 0x2000:
                raise _archive_error("unsupported encryption")
            entries.append(_Entry(name, method, flags, comp_size, size, header_offset))
            p = end
        return entries

    def _check_version(self) -> None:
        name = ".data/version" if self.has_record(".data/version") else "version"
        if not self.has_record(name):
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.')
        text = self.get_record(name)
        # std::stoull: leading blanks, a sign, digits; a minus sign wraps around
        m = re.match(rb"\s*([+-]?)(\d+)", text)
        if m is None:
            raise RuntimeError(f"Couldn't parse the version {text.decode('latin1')} as Long Long.")
        version = int(m.group(2))
        if m.group(1) == b"-" and version:
            version = 2**64 - version
        if version < _MIN_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {version}, but the minimum "
                f"supported version for reading is {_MIN_VERSION}. Your PyTorch script module "
                "file is too old. Please regenerate it with latest version of PyTorch to "
                "mitigate this issue."
            )
        if version > _MAX_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {version}, but the maximum "
                f"supported version for reading is {_MAX_VERSION}. The version of your PyTorch "
                "installation may be too old, please upgrade PyTorch to latest version to "
                "mitigate this issue."
            )

    def close(self) -> None:
        """Forgets the file (a mapping stays alive while arrays use it)."""
        self._f = None

    # -- records -----------------------------------------------------------

    def all_records(self) -> list[str]:
        """Every record's name inside the archive folder, in the archive's order."""
        names = sorted(self._entries.values(), key=lambda e: e.header_offset)
        return [e.name.decode("utf-8")[len(self.prefix) :] for e in names]

    def record_offset(self, name: str) -> int:
        """Where a stored record's bytes start in the file."""
        return self._base + self._data_offset(name, self._entry(name))

    def has_record(self, name: str) -> bool:
        return (self.prefix + name).encode("utf-8").lower() in self._entries

    def _entry(self, name: str) -> _Entry:
        e = self._entries.get((self.prefix + name).encode("utf-8").lower())
        if e is None:
            raise zip_error(f"locating file {name}: file not found")
        # miniz's order: the method, encryption, then "compressed patched data"
        if e.method not in (0, 8):
            raise zip_error(f"retrieving file meta-data for {name}: unsupported method")
        if e.flags & 0x41:
            raise zip_error(f"retrieving file meta-data for {name}: unsupported encryption")
        if e.flags & 0x20:
            raise zip_error(f"retrieving file meta-data for {name}: unsupported feature")
        return e

    def record_size(self, name: str) -> int:
        """The record's size in bytes, as the central directory gives it."""
        return self._entry(name).size

    def _data_offset(self, name: str, e: _Entry) -> int:
        """Where a record's bytes start, from its local header (as miniz finds them)."""
        header = self._read_at(e.header_offset, _LOCAL.size)
        if len(header) != _LOCAL.size or header[:4] != b"PK\x03\x04":
            raise zip_error(f"reading file {name}: {_CORRUPT}")
        name_len, extra_len = _LOCAL.unpack(header)[-2:]
        offset = e.header_offset + _LOCAL.size + name_len + extra_len
        if offset + e.comp_size > self._size:
            raise zip_error(f"reading file {name}: {_CORRUPT}")
        return offset

    def _read(self, name: str, aligned: bool) -> np.ndarray:
        e = self._entry(name)
        offset = self._data_offset(name, e)
        if e.method == 8:
            data = _inflate(self._read_at(offset, e.comp_size), e.size, name)
            buf = aligned_empty(e.size) if aligned else np.empty(e.size, np.uint8)
            buf[:] = np.frombuffer(data, np.uint8)
            return buf
        if offset + e.size > self._size:
            # a stored entry whose two sizes disagree: miniz reads the larger one
            raise zip_error(f"reading file {name}: file read failed")
        if self._mmap is not None and aligned:
            return np.frombuffer(self._mmap, np.uint8, count=e.size, offset=self._base + offset)
        buf = aligned_empty(e.size) if aligned else np.empty(e.size, np.uint8)
        self._f.seek(self._base + offset)
        readinto = getattr(self._f, "readinto", None)
        if readinto is not None:
            got = readinto(memoryview(buf)) if e.size else 0
        else:  # a file-like object with read() only
            data = self._f.read(e.size)
            got = len(data)
            buf[:got] = np.frombuffer(data, np.uint8)
        if got != e.size:
            raise zip_error(f"reading file {name}: file read failed")
        return buf

    def get_record(self, name: str) -> bytes:
        """A small record's bytes (data.pkl, version, byteorder)."""
        return self._read(name, aligned=False).tobytes()

    def read_storage(self, name: str) -> np.ndarray:
        """A storage record's bytes as an aligned uint8 array that nothing else references."""
        return self._read(name, aligned=True)


def _zip64_sizes(extra: bytes, size: int, comp_size: int, header_offset: int):
    """The 64-bit sizes of the zip64 extra field, for those the entry marks 0xFFFFFFFF."""
    p = 0
    while p + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, p)
        if tag == 1:
            field = extra[p + 4 : p + 4 + n]
            values, q = [], 0
            for v in (size, comp_size, header_offset):
                if v == _U32:
                    if q + 8 > len(field):
                        raise _archive_error(_CORRUPT)
                    v = struct.unpack_from("<Q", field, q)[0]
                    q += 8
                values.append(v)
            return tuple(values)
        p += 4 + n
    raise _archive_error(_CORRUPT)


def _inflate(data: bytes, size: int, name: str) -> bytes:
    """A deflated record, never inflated past the size its entry declares."""
    d = zlib.decompressobj(-15)
    try:
        out = d.decompress(data, size)
    except zlib.error:
        raise zip_error(f"reading file {name}: decompression failed") from None
    if len(out) != size or d.unconsumed_tail:
        raise zip_error(f"reading file {name}: unexpected decompressed size")
    return out


try:
    from numpy._core.multiarray import _set_madvise_hugepage
except ImportError:  # numpy 1.x
    try:
        from numpy.core.multiarray import _set_madvise_hugepage
    except ImportError:
        _set_madvise_hugepage = None


def aligned_empty(n: int) -> np.ndarray:
    """An uninitialised uint8 array of `n` bytes starting at a multiple of 64.

    numpy asks the kernel for huge pages for a large array; where memory is fragmented the
    kernel then compacts it before the first read lands (seconds for a checkpoint of a few
    GiB). Storages are read once, front to back, so they take ordinary pages, as PyTorch's
    allocator does.
    """
    prev = _set_madvise_hugepage(False) if _set_madvise_hugepage is not None else None
    try:
        raw = np.empty(n + ALIGNMENT, np.uint8)
    finally:
        if prev is not None:
            _set_madvise_hugepage(prev)
    skip = -raw.ctypes.data % ALIGNMENT
    return raw[skip : skip + n]
