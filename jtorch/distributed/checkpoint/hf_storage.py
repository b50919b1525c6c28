"""`torch.distributed.checkpoint.hf_storage`: checkpoints as Hugging Face safetensors files.

The writer puts tensor entries into `model-0000i-of-0000n.safetensors` files (the file of
each key from `fqn_to_index_mapping`, else one file); the reader reads every `.safetensors`
file of the directory. Only tensors can be stored, as in PyTorch.
"""

from __future__ import annotations

import glob
import os

from ..._tensor import Tensor
from .metadata import (
    ChunkStorageMetadata,
    Metadata,
    StorageMeta,
    TensorProperties,
    TensorStorageMetadata,
)
from .storage import StorageReader, StorageWriter

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


def _file_name(index: int, largest: int) -> str:
    return f"model-{index:05d}-of-{largest:05d}.safetensors"


class HuggingFaceStorageWriter(StorageWriter):
    """Matches `torch.distributed.checkpoint.HuggingFaceStorageWriter` (see the module doc)."""

    def __init__(
        self,
        path: str,
        fqn_to_index_mapping: dict | None = None,
        thread_count: int = 1,
        save_distributed: bool = False,
        enable_consolidation: bool = False,
        thread_count_consolidation: int = 1,
    ):
        self.path = os.fspath(path)
        self.fqn_to_index_mapping = fqn_to_index_mapping

    def reset(self, checkpoint_id=None) -> None:
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    def storage_meta(self) -> StorageMeta:
        return StorageMeta(checkpoint_id=self.path)

    def write_entries(self, flat: dict, metadata: Metadata) -> None:
        from ...interop import safetensors

        for key, value in flat.items():
            if not isinstance(value, Tensor):
                raise ValueError(
                    f"HuggingFaceStorageWriter stores tensors only, but {key!r} is "
                    f"a {type(value).__name__}"
                )
        mapping = self.fqn_to_index_mapping or {key: 1 for key in flat}
        largest = max(mapping.values(), default=1)
        files: dict = {}
        for key, value in flat.items():
            files.setdefault(mapping.get(key, 1), {})[key] = value.detach().contiguous()
        os.makedirs(self.path, exist_ok=True)
        for index, tensors in files.items():
            safetensors.save_file(
                tensors,
                os.path.join(self.path, _file_name(index, largest)),
                metadata={"format": "pt"},
            )


class HuggingFaceStorageReader(StorageReader):
    """Matches `torch.distributed.checkpoint.HuggingFaceStorageReader` (see the module doc)."""

    def __init__(self, path: str, thread_count: int = 1):
        self.path = os.fspath(path)

    def reset(self, checkpoint_id=None) -> None:
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    def _files(self) -> list:
        return sorted(glob.glob(os.path.join(self.path, "*.safetensors")))

    def _all(self) -> dict:
        from ...interop import safetensors

        out: dict = {}
        for f in self._files():
            out.update(safetensors.load_file(f))
        return out

    def read_metadata(self) -> Metadata:
        entries = {}
        for key, t in self._all().items():
            size = tuple(t.shape)
            entries[key] = TensorStorageMetadata(
                TensorProperties.create_from_tensor(t),
                size,
                [ChunkStorageMetadata((0,) * len(size), size)],
            )
        return Metadata(state_dict_metadata=entries)

    def read_entries(self, keys: list) -> dict:
        entries = self._all()
        return {k: entries[k] for k in keys}
