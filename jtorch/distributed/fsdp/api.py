"""`torch.distributed.fsdp.api`: FSDP1's configuration enums and state-dict settings."""

from __future__ import annotations

import dataclasses
from enum import Enum, auto

__all__ = [
    "BackwardPrefetch",
    "CPUOffload",
    "FullOptimStateDictConfig",
    "FullStateDictConfig",
    "LocalOptimStateDictConfig",
    "LocalStateDictConfig",
    "MixedPrecision",
    "OptimStateDictConfig",
    "ShardedOptimStateDictConfig",
    "ShardedStateDictConfig",
    "ShardingStrategy",
    "StateDictConfig",
    "StateDictSettings",
    "StateDictType",
]


class ShardingStrategy(Enum):
    """Matches `torch.distributed.fsdp.ShardingStrategy`."""

    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    """Matches `torch.distributed.fsdp.BackwardPrefetch`."""

    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


@dataclasses.dataclass
class MixedPrecision:
    """Matches `torch.distributed.fsdp.MixedPrecision` (FSDP1's precision settings)."""

    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = dataclasses.field(default_factory=lambda: _batch_norm())


def _batch_norm() -> tuple:
    from ...nn.modules.batchnorm import _BatchNorm

    return (_BatchNorm,)


@dataclasses.dataclass
class CPUOffload:
    """Matches `torch.distributed.fsdp.CPUOffload`."""

    offload_params: bool = False


class StateDictType(Enum):
    """Matches `torch.distributed.fsdp.StateDictType`."""

    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclasses.dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclasses.dataclass
class FullStateDictConfig(StateDictConfig):
    rank0_only: bool = False


@dataclasses.dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclasses.dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclasses.dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclasses.dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclasses.dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    offload_to_cpu: bool = False


@dataclasses.dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False


@dataclasses.dataclass
class StateDictSettings:
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig
