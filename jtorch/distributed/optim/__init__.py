"""`torch.distributed.optim`: optimizers for distributed training.

`ZeroRedundancyOptimizer` shards optimizer state over the ranks of a group (over one rank, the
one shard is all of it), `PostLocalSGDOptimizer` averages parameters after local steps.
`DistributedOptimizer` runs optimizers of remote parameters over RPC, which jtorch does not
have: constructing it raises.
"""

from __future__ import annotations

import warnings

from ...optim.optimizer import Optimizer
from .. import distributed_c10d as c10d

__all__ = ["DistributedOptimizer", "PostLocalSGDOptimizer", "ZeroRedundancyOptimizer"]


class DistributedOptimizer:
    """PyTorch's RPC-based optimizer: not supported (jtorch has no RPC)."""

    def __init__(self, optimizer_class, params_rref, *args, **kwargs):
        raise NotImplementedError(
            "jtorch has no torch.distributed.rpc: DistributedOptimizer is not supported"
        )


class PostLocalSGDOptimizer(Optimizer):
    """Matches `PostLocalSGDOptimizer`: `optim.step()`, then the averager's averaging."""

    def __init__(self, optim: Optimizer, averager):
        self.optim = optim
        self.param_groups = self.optim.param_groups
        self.averager = averager

    @property
    def state(self):
        return self.optim.state

    def __repr__(self) -> str:
        return self.optim.__repr__()

    def state_dict(self) -> dict:
        sd = self.optim.state_dict()
        sd["step"] = self.averager.step
        return sd

    def load_state_dict(self, state_dict: dict) -> None:
        self.optim.load_state_dict(state_dict)
        if "step" in state_dict:
            self.averager.step = state_dict["step"]
        else:
            warnings.warn(
                "Loaded state dict does not contain a step counter for an averager. "
                "Setting step counter to 0.",
                stacklevel=2,
            )
            self.averager.step = 0

    def step(self):
        self.optim.step()
        self.averager.average_parameters(params=self.param_groups)

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.optim.zero_grad(set_to_none=set_to_none)

    def add_param_group(self, param_group: dict) -> None:
        self.optim.add_param_group(param_group)


class ZeroRedundancyOptimizer(Optimizer):
    """Matches `ZeroRedundancyOptimizer` over one rank: the local optimizer of this rank's
    shard holds every parameter, so steps are the wrapped optimizer's steps. As in PyTorch,
    `state_dict()` needs a `consolidate_state_dict()` first."""

    def __init__(
        self,
        params,
        optimizer_class,
        process_group=None,
        parameters_as_bucket_view: bool = False,
        overlap_with_ddp: bool = False,
        **defaults,
    ):
        if overlap_with_ddp:
            raise NotImplementedError(
                "ZeroRedundancyOptimizer(overlap_with_ddp=True) needs "
                "DDP communication hooks that jtorch does not run"
            )
        self.process_group = (
            process_group if process_group is not None else c10d._get_default_group()
        )
        self.world_size = self.process_group.size()
        self.rank = self.process_group.rank()
        self.global_rank = self.rank
        self._optim_constructor = optimizer_class
        self._optim_defaults = defaults
        params = list(params)
        super().__init__(params, defaults)
        self.optim = optimizer_class(params, **defaults)
        self.param_groups = self.optim.param_groups
        self.state = self.optim.state
        self._all_state_dicts: list = []
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._overlap_with_ddp = overlap_with_ddp

    def step(self, closure=None, **kwargs):
        return (
            self.optim.step(closure=closure, **kwargs)
            if closure is not None or kwargs
            else self.optim.step()
        )

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.optim.zero_grad(set_to_none=set_to_none)

    def add_param_group(self, param_group: dict) -> None:
        if hasattr(self, "optim"):
            self.optim.add_param_group(param_group)
        else:
            super().add_param_group(param_group)

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gathers every shard's state on rank `to` (one rank: this one's)."""
        c10d._check_rank(to, "rank")
        self._all_state_dicts = [self.optim.state_dict()]

    def state_dict(self) -> dict:
        if not self._all_state_dicts:
            raise RuntimeError(
                "Optimizer state has not been consolidated on this rank. Please "
                f"call `consolidate_state_dict(to={self.rank})` on all ranks "
                "beforehand if you meant to save the global state."
            )
        return self._all_state_dicts[0]

    def load_state_dict(self, state_dict: dict) -> None:
        self.optim.load_state_dict(state_dict)
