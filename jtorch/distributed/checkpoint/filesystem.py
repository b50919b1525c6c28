"""`torch.distributed.checkpoint.filesystem`: checkpoints kept in a directory.

A checkpoint directory holds `.metadata` (the pickled `Metadata`) and `__0_0.distcp`, the
entries of rank 0 as one `torch.save` archive (PyTorch writes each entry as its own
`torch.save` record at an offset of that file; jtorch's layout differs, so a DCP directory
moves between jtorch runs, not to PyTorch: convert with `format_utils.dcp_to_torch_save`).
"""

from __future__ import annotations

import os
import pickle

from .metadata import Metadata, StorageMeta
from .storage import StorageReader, StorageWriter

__all__ = ["FileSystemReader", "FileSystemWriter"]

_METADATA = ".metadata"
_DATA = "__0_0.distcp"


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
        from ... import save

        os.makedirs(self.path, exist_ok=True)
        meta_path = os.path.join(self.path, _METADATA)
        if not self.overwrite and os.path.exists(meta_path):
            raise RuntimeError(f"Checkpoint already exists and {self.overwrite=}.")
        metadata.storage_data = {key: _DATA for key in flat}
        save(flat, os.path.join(self.path, _DATA))
        tmp = meta_path + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(metadata, f)
            if self.sync_files:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, meta_path)  # the metadata last: its presence marks a whole save


class FileSystemReader(StorageReader):
    """Matches `torch.distributed.checkpoint.FileSystemReader` (see the module doc)."""

    def __init__(self, path, _extension_registry=None):
        self.path = os.fspath(path)
        self._entries = None

    def reset(self, checkpoint_id=None) -> None:
        self._entries = None
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike)) and os.path.isdir(checkpoint_id)

    def read_metadata(self) -> Metadata:
        with open(os.path.join(self.path, _METADATA), "rb") as f:
            return pickle.load(f)

    def read_entries(self, keys: list) -> dict:
        from ... import load

        if self._entries is None:
            # The checkpoint's own entries, written by `write_entries` (objects included).
            self._entries = load(os.path.join(self.path, _DATA), weights_only=False)
        return {k: self._entries[k] for k in keys}
