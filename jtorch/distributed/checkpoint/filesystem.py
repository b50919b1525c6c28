"""`torch.distributed.checkpoint.filesystem`: checkpoints kept in a directory, in PyTorch's layout.

A checkpoint directory holds `.metadata` (the pickled `Metadata`, written with PyTorch's class
names) and `__<rank>_<n>.distcp` files in which every entry is a `torch.save` record at an
offset, named by the metadata's `storage_data` ({`MetadataIndex`: `_StorageInfo(file, offset,
length)`}); a non-tensor entry is its `torch.save` bytes. jtorch writes one file from the
process that holds the gathered entries (rank 0), each tensor as one chunk; it reads what
PyTorch writes too: a tensor saved in chunks by several ranks is put together from them.
Checkpoints move between PyTorch and jtorch in both directions.
"""

from __future__ import annotations

import dataclasses
import io
import os
from typing import Sequence

import numpy as np

from .metadata import BytesStorageMetadata, Metadata, MetadataIndex, StorageMeta
from .storage import StorageReader, StorageWriter

__all__ = ["FileSystemReader", "FileSystemWriter"]

_METADATA = ".metadata"
_DATA = "__0_0.distcp"
DEFAULT_SUFFIX = ".distcp"
CURRENT_DCP_VERSION = "1.0.0"


@dataclasses.dataclass
class _StorageInfo:
    """Matches PyTorch's per-entry storage record: which file, where, how long."""

    relative_path: str
    offset: int
    length: int
    transform_descriptors: Sequence[str] | None = None

    def __getstate__(self):  # as PyTorch's: absent fields are left out
        return {k: v for k, v in self.__dict__.items() if v is not None}


def _record(value) -> bytes:
    from ... import save

    buf = io.BytesIO()
    save(value, buf)
    return buf.getvalue()


class FileSystemWriter(StorageWriter):
    """Matches `torch.distributed.checkpoint.FileSystemWriter` (see the module doc)."""

    def __init__(
        self,
        path,
        single_file_per_rank: bool = True,
        sync_files: bool = True,
        thread_count: int = 1,
        per_thread_copy_ahead: int = 10_000_000,
        cache_staged_state_dict: bool = False,
        overwrite: bool = True,
        _extensions=None,
        serialization_format=None,
    ):
        self.path = os.fspath(path)
        self.sync_files = sync_files
        self.overwrite = overwrite

    def reset(self, checkpoint_id=None) -> None:
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike))

    def storage_meta(self) -> StorageMeta:
        return StorageMeta(checkpoint_id=self.path)

    def write_entries(self, flat: dict, metadata: Metadata) -> None:
        from ...serialization import dump_with_torch_names

        os.makedirs(self.path, exist_ok=True)
        meta_path = os.path.join(self.path, _METADATA)
        if not self.overwrite and os.path.exists(meta_path):
            raise RuntimeError(f"Checkpoint already exists and {self.overwrite=}.")
        storage_data = {}
        with open(os.path.join(self.path, _DATA), "wb") as f:
            for key, value in flat.items():
                md = metadata.state_dict_metadata[key]
                if isinstance(md, BytesStorageMetadata):
                    index = MetadataIndex(key)
                else:
                    index = MetadataIndex(key, md.chunks[0].offsets)
                    value = value.contiguous()
                offset = f.tell()
                f.write(_record(value))
                storage_data[index] = _StorageInfo(_DATA, offset, f.tell() - offset)
            _sync(f, self.sync_files)
        metadata.storage_data = storage_data
        metadata.version = CURRENT_DCP_VERSION
        tmp = meta_path + ".tmp"
        with open(tmp, "wb") as f:
            dump_with_torch_names(metadata, f)
            _sync(f, self.sync_files)
        os.replace(tmp, meta_path)  # the metadata last: its presence marks a whole save


def _sync(f, sync: bool) -> None:
    if sync:
        f.flush()
        os.fsync(f.fileno())


class FileSystemReader(StorageReader):
    """Matches `torch.distributed.checkpoint.FileSystemReader` (see the module doc)."""

    def __init__(self, path, _extension_registry=None):
        self.path = os.fspath(path)
        self._metadata = None

    def reset(self, checkpoint_id=None) -> None:
        self._metadata = None
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike)) and os.path.isdir(checkpoint_id)

    def read_metadata(self) -> Metadata:
        from ...serialization import load_with_torch_names

        with open(os.path.join(self.path, _METADATA), "rb") as f:
            self._metadata = load_with_torch_names(f)
        return self._metadata

    def _read(self, info: _StorageInfo) -> io.BytesIO:
        if info.transform_descriptors:
            raise RuntimeError(
                f"checkpoint entry transforms {list(info.transform_descriptors)} (e.g. "
                f"compression) are not supported by jtorch"
            )
        with open(os.path.join(self.path, info.relative_path), "rb") as f:
            f.seek(info.offset)
            return io.BytesIO(f.read(info.length))

    def read_entries(self, keys: list) -> dict:
        from ... import load, tensor

        metadata = self._metadata or self.read_metadata()
        storage = metadata.storage_data
        if storage and all(isinstance(v, str) for v in storage.values()):
            # jtorch's layout before 2026-11-26: one torch.save archive of every entry
            entries = load(os.path.join(self.path, _DATA), weights_only=False)
            return {k: entries[k] for k in keys}
        out = {}
        for key in keys:
            md = metadata.state_dict_metadata[key]
            if isinstance(md, BytesStorageMetadata):
                out[key] = load(self._read(storage[MetadataIndex(key)]), weights_only=False)
                continue
            chunks = [
                (
                    c,
                    load(
                        self._read(storage[MetadataIndex(key, tuple(c.offsets))]), weights_only=True
                    ),
                )
                for c in md.chunks
            ]
            if len(chunks) == 1 and tuple(chunks[0][1].shape) == tuple(md.size):
                out[key] = chunks[0][1]
                continue
            # A tensor saved in pieces (the chunks of several ranks): put it together.
            whole = np.zeros(tuple(md.size), chunks[0][1].numpy().dtype)
            for c, piece in chunks:
                where = tuple(slice(o, o + n) for o, n in zip(c.offsets, c.sizes))
                whole[where] = piece.numpy()
            out[key] = tensor(whole, dtype=chunks[0][1].dtype)
        return out
