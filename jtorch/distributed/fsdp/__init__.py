"""`torch.distributed.fsdp`: FSDP2's `fully_shard` and FSDP1's configuration names."""

from ._fully_shard import (  # noqa: F401
    CPUOffloadPolicy, DataParallelMeshDims, FSDPModule, MixedPrecisionPolicy, OffloadPolicy,
    UnshardHandle, fully_shard, register_fsdp_forward_method, share_comm_ctx,
)
from .fully_sharded_data_parallel import (  # noqa: F401
    BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,
    FullyShardedDataParallel, LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision,
    OptimStateDictConfig, OptimStateKeyType, ShardedOptimStateDictConfig, ShardedStateDictConfig,
    ShardingStrategy, StateDictConfig, StateDictSettings, StateDictType,
)

__all__ = [
    "BackwardPrefetch", "CPUOffload", "FullOptimStateDictConfig", "FullStateDictConfig",
    "FullyShardedDataParallel", "LocalOptimStateDictConfig", "LocalStateDictConfig",
    "MixedPrecision", "OptimStateDictConfig", "OptimStateKeyType", "ShardedOptimStateDictConfig",
    "ShardedStateDictConfig", "ShardingStrategy", "StateDictConfig", "StateDictSettings",
    "StateDictType", "CPUOffloadPolicy", "DataParallelMeshDims", "FSDPModule", "fully_shard",
    "MixedPrecisionPolicy", "OffloadPolicy", "register_fsdp_forward_method", "UnshardHandle",
    "share_comm_ctx",
]
