"""`torch.distributed.checkpoint.default_planner`: the default save and load planners."""

from __future__ import annotations

from .planner import LoadPlanner, SavePlanner

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner"]


class DefaultSavePlanner(SavePlanner):
    """Matches `DefaultSavePlanner`'s options (nested dicts are flattened to dotted keys)."""

    def __init__(
        self,
        flatten_state_dict: bool = True,
        flatten_sharded_tensors: bool = True,
        dedup_replicated_tensors=None,
        dedup_save_to_lowest_rank: bool = False,
        enable_plan_caching: bool = False,
    ):
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.dedup_save_to_lowest_rank = dedup_save_to_lowest_rank
        self.enable_plan_caching = enable_plan_caching


class DefaultLoadPlanner(LoadPlanner):
    """Matches `DefaultLoadPlanner`: `allow_partial_load` lets keys missing from the
    checkpoint keep their values instead of raising."""

    def __init__(
        self,
        flatten_state_dict: bool = True,
        flatten_sharded_tensors: bool = True,
        allow_partial_load: bool = False,
    ):
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.allow_partial_load = allow_partial_load
