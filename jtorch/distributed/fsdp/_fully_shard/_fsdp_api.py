"""FSDP2's policies: mixed precision, offloading and data-parallel mesh dimensions."""

from __future__ import annotations

import dataclasses

__all__ = ["CPUOffloadPolicy", "DataParallelMeshDims", "MixedPrecisionPolicy", "OffloadPolicy"]


@dataclasses.dataclass(frozen=True)
class MixedPrecisionPolicy:
    """Matches `torch.distributed.fsdp.MixedPrecisionPolicy`.

    `param_dtype`: the dtype parameters are cast to for forward and backward; `reduce_dtype`:
    the dtype gradients are reduced in (default: `param_dtype`); `output_dtype`: the dtype a
    module's floating outputs are cast to; `cast_forward_inputs`: cast floating inputs to
    `param_dtype`.
    """

    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclasses.dataclass
class OffloadPolicy:
    """Matches `torch.distributed.fsdp.OffloadPolicy`: no offloading."""


@dataclasses.dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Matches `torch.distributed.fsdp.CPUOffloadPolicy`: sharded state kept on the CPU."""

    pin_memory: bool = True


@dataclasses.dataclass
class DataParallelMeshDims:
    """Matches `torch.distributed.fsdp.DataParallelMeshDims`: which dimensions of a larger
    mesh shard (FSDP) and which replicate (DDP)."""

    shard: str | tuple | None = None
    replicate: str | tuple | None = None

    def __post_init__(self):
        if self.shard is None and self.replicate is None:
            raise ValueError("At least one of shard or replicate must be specified")
