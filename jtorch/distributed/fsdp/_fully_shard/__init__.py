"""FSDP2 (`fully_shard`), see `_fully_shard`."""

from ._fsdp_api import CPUOffloadPolicy, DataParallelMeshDims, MixedPrecisionPolicy, OffloadPolicy  # noqa: F401
from ._fully_shard import (  # noqa: F401
    FSDPModule,
    UnshardHandle,
    fully_shard,
    register_fsdp_forward_method,
    share_comm_ctx,
)
