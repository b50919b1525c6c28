"""FSDP2 (`fully_shard`), see `_fully_shard`."""

from ._fsdp_api import (  # noqa: F401
    CPUOffloadPolicy, DataParallelMeshDims, MixedPrecisionPolicy, OffloadPolicy,
)
from ._fully_shard import (  # noqa: F401
    FSDPModule, UnshardHandle, fully_shard, register_fsdp_forward_method, share_comm_ctx,
)
