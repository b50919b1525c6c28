"""`torch.distributed.checkpoint.metadata`: what a checkpoint says about its entries."""

from __future__ import annotations

import dataclasses
import enum
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


class _MEM_FORMAT_ENCODING(enum.Enum):  # noqa: N801 (PyTorch's name, pickled by it)
    """How `TensorProperties` pickles its memory format (PyTorch's encoding)."""

    TORCH_CONTIGUOUS_FORMAT = 0
    TORCH_CHANNELS_LAST = 1
    TORCH_PRESERVE_FORMAT = 2


def _memory_formats() -> dict:
    from ... import channels_last, contiguous_format, preserve_format

    return {
        _MEM_FORMAT_ENCODING.TORCH_CONTIGUOUS_FORMAT: contiguous_format,
        _MEM_FORMAT_ENCODING.TORCH_CHANNELS_LAST: channels_last,
        _MEM_FORMAT_ENCODING.TORCH_PRESERVE_FORMAT: preserve_format,
    }


@dataclasses.dataclass
class TensorProperties:
    """The properties a loaded tensor is made with."""

    dtype: Any = None
    layout: Any = None
    requires_grad: bool = False
    memory_format: Any = None
    pin_memory: bool = False

    def __getstate__(self):
        # PyTorch's pickled form: a tuple, the memory format by its encoding
        codes = {v: k for k, v in _memory_formats().items()}
        if self.memory_format not in codes:
            raise RuntimeError(f"Invalid torch.memory_format: {self.memory_format}")
        fmt = codes[self.memory_format]
        return (self.dtype, self.layout, self.requires_grad, fmt, self.pin_memory)

    def __setstate__(self, state) -> None:
        self.dtype, self.layout, self.requires_grad, fmt, self.pin_memory = state
        formats = _memory_formats()
        if fmt not in formats:
            raise RuntimeError(f"Invalid torch.memory_format encoding: {fmt}")
        self.memory_format = formats[fmt]

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

    def __init__(self, fqn: str, offset=None, index: int | None = None):
        from ..._tensor import Size

        object.__setattr__(self, "fqn", fqn)
        object.__setattr__(self, "offset", None if offset is None else Size(offset))
        object.__setattr__(self, "index", index)
