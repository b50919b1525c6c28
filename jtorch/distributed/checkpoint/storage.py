"""`torch.distributed.checkpoint.storage`: where a checkpoint's entries are kept.

jtorch's checkpoints are written by one process (rank 0 of several, holding the gathered
entries; every rank reads them and keeps its piece), so a storage here is two calls: a writer's
`write_entries(flat, metadata)` keeps every flat entry and the metadata, and a reader's
`read_metadata()`/`read_entries(keys)` give them back. (PyTorch's writers and readers follow
a plan/item protocol made for many ranks writing shards, which jtorch does not run.)
"""

from __future__ import annotations

import abc

from .metadata import Metadata, StorageMeta

__all__ = ["StorageReader", "StorageWriter"]


class StorageWriter(abc.ABC):
    """The base of checkpoint writers."""

    def reset(self, checkpoint_id=None) -> None:  # noqa: B027 - optional, as in PyTorch
        """Points the writer at a new checkpoint (`checkpoint_id`, when given)."""

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return True

    def storage_meta(self) -> StorageMeta | None:
        return None

    @abc.abstractmethod
    def write_entries(self, flat: dict, metadata: Metadata) -> None:
        """Keeps every `{flat key: tensor or object}` entry and the checkpoint's metadata."""


class StorageReader(abc.ABC):
    """The base of checkpoint readers."""

    def reset(self, checkpoint_id=None) -> None:  # noqa: B027 - optional, as in PyTorch
        """Points the reader at another checkpoint (`checkpoint_id`, when given)."""

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return True

    @abc.abstractmethod
    def read_metadata(self) -> Metadata:
        """The checkpoint's metadata: one entry per flat key."""

    @abc.abstractmethod
    def read_entries(self, keys: list) -> dict:
        """`{key: tensor or object}` for the given flat keys."""
