"""`torch.distributed.checkpoint.metadata`: what a checkpoint says about its entries."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = [
    "BytesStorageMetadata",
    "ChunkStorageMetadata",
    "Metadata",
    "MetadataIndex",
    "StorageMeta",
    "TensorProperties",
    "TensorStorageMetadata",
]


@dataclasses.dataclass
class ChunkStorageMetadata:
    """Where one chunk of a tensor lies in the global tensor."""

    offsets: tuple
    sizes: tuple


@dataclasses.dataclass
class TensorProperties:
    """The properties a loaded tensor is made with."""

    dtype: Any = None
    layout: Any = None
    requires_grad: bool = False
    memory_format: Any = None
    pin_memory: bool = False

    @staticmethod
    def create_from_tensor(tensor) -> TensorProperties:
        from ... import contiguous_format, strided

        return TensorProperties(
            tensor.dtype, strided, tensor.requires_grad, contiguous_format, False
        )


@dataclasses.dataclass
class TensorStorageMetadata:
    """A tensor entry: its properties, global size and chunks."""

    properties: TensorProperties
    size: tuple
    chunks: list


@dataclasses.dataclass
class BytesStorageMetadata:
    """A non-tensor entry (pickled)."""


@dataclasses.dataclass
class StorageMeta:
    checkpoint_id: Any = None
    save_id: str | None = None
    load_id: str | None = None
    modules: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Metadata:
    """Matches `torch.distributed.checkpoint.metadata.Metadata`: one entry per flat key."""

    state_dict_metadata: dict
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: StorageMeta | None = None
    version: str | None = None


@dataclasses.dataclass(frozen=True)
class MetadataIndex:
    """Names an entry (and, for a sharded tensor, the chunk at `offset`)."""

    fqn: str
    offset: tuple | None = None
    index: int | None = dataclasses.field(hash=False, compare=False, default=None)
