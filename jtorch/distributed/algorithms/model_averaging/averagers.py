"""`torch.distributed.algorithms.model_averaging.averagers`: periodic model averaging."""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod

from . import utils

__all__ = ["ModelAverager", "PeriodicModelAverager"]


class ModelAverager(ABC):
    """Matches `ModelAverager`: counts steps; subclasses say when to average."""

    def __init__(self, process_group=None):
        from ... import distributed_c10d as c10d

        self.process_group = (
            process_group if process_group is not None else c10d._get_default_group()
        )
        self.step = 0

    @abstractmethod
    def average_parameters(self, params): ...


class PeriodicModelAverager(ModelAverager):
    """Matches `PeriodicModelAverager`: averages every `period` steps after `warmup_steps`."""

    def __init__(self, period: int, warmup_steps: int = 0, process_group=None):
        super().__init__(process_group)
        if warmup_steps < 0:
            raise ValueError("Arg ``warmup_steps`` must be a non-negative number.")
        self.warmup_steps = warmup_steps
        if period < 1:
            raise ValueError("Arg ``period`` must be a positive value.")
        if period == 1:
            warnings.warn(
                "When period is 1, no need to use model averaging because the "
                "communication cost of all-reducing parameters will be no less than "
                "the cost of all-reducing gradients by DistributedDataParallel in "
                "the backward pass. Therefore, only DistributedDataParallel should "
                "be used for this case.",
                stacklevel=2,
            )
        self.period = period

    def average_parameters(self, params) -> None:
        if self.step >= self.warmup_steps and (self.step - self.warmup_steps) % self.period == 0:
            utils.average_parameters_or_parameter_groups(params, self.process_group)
        self.step += 1
