"""`torch.distributed.fsdp.fully_sharded_data_parallel`: FSDP1's names.

jtorch shards with FSDP2 (`fully_shard`, parameters as DTensors); FSDP1's flat-parameter
wrapper is not built, and constructing it raises. Its static helpers answer for a module tree,
which (holding no FSDP1 wrapper) has nothing for them to configure.
"""

from __future__ import annotations

import contextlib
from enum import Enum, auto

from ...nn.modules.module import Module
from .api import (  # noqa: F401
    BackwardPrefetch,
    CPUOffload,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    LocalOptimStateDictConfig,
    LocalStateDictConfig,
    MixedPrecision,
    OptimStateDictConfig,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictSettings,
    StateDictType,
)

__all__ = ["FullyShardedDataParallel", "OptimStateKeyType"]


class OptimStateKeyType(Enum):
    """Matches `torch.distributed.fsdp.OptimStateKeyType`."""

    PARAM_NAME = auto()
    PARAM_ID = auto()


class FullyShardedDataParallel(Module):
    """FSDP1's wrapper: not supported by jtorch (see the module doc)."""

    def __init__(self, module: Module, *args, **kwargs):
        raise NotImplementedError(
            "jtorch does not implement FullyShardedDataParallel (FSDP1 flat parameters); use "
            "torch.distributed.fsdp.fully_shard (FSDP2), whose parameters are DTensors"
        )

    @staticmethod
    def fsdp_modules(module: Module, root_only: bool = False) -> list:
        """The FSDP1 wrappers in `module`'s tree (there are none in jtorch)."""
        return [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(
        module: Module,
        state_dict_type: StateDictType,
        state_dict_config: StateDictConfig | None = None,
        optim_state_dict_config: OptimStateDictConfig | None = None,
    ):
        """Sets the state-dict type of the tree's FSDP1 wrappers inside the block: none here."""
        yield
