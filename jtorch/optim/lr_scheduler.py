"""`torch.optim.lr_scheduler`: learning-rate schedules with PyTorch's semantics.

Schedulers are plain Python over `optimizer.param_groups`; nothing here touches
jax. Each one follows PyTorch's *chainable* form (`get_lr()` from the current
group values) on `step()`, and its closed form (`_get_closed_form_lr()`) when
`step(epoch)` is given, as PyTorch does. `state_dict()` is the scheduler's
`__dict__` without the optimizer, as in PyTorch.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from ._cyclic_lr import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from ._lr_base import (  # noqa: F401 (LRScheduler's protocol, exported here as in PyTorch)
    EPOCH_DEPRECATION_WARNING,
    LRScheduler,
    _enable_get_lr_call,
    _format_param,
    _initial_mode,
    _LRScheduler,
    _param_groups_val_list,
    _to_scalar,
    _update_param_group_val,
    _warn_get_lr_called_within_step,
)
from .optimizer import Optimizer

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
]


class _LambdaState:
    """state_dict handling shared by the schedulers that hold user functions."""

    def state_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        # Plain functions are not saved; callable objects save their __dict__.
        out["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)


def _lambdas(optimizer, lr_lambda) -> list:
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(
            f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
        )
    return list(lr_lambda)


class LambdaLR(_LambdaState, LRScheduler):
    """Matches `torch.optim.lr_scheduler.LambdaLR`: lr = base_lr * lr_lambda(epoch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        return [
            base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)
        ]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """Matches `torch.optim.lr_scheduler.MultiplicativeLR`: lr *= lr_lambda(epoch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [
            group["lr"] * fn(self.last_epoch)
            for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)
        ]


class StepLR(LRScheduler):
    """Matches `torch.optim.lr_scheduler.StepLR`: decay by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [
            base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs
        ]


class MultiStepLR(LRScheduler):
    """Matches `torch.optim.lr_scheduler.MultiStepLR` (repeated milestones compound)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _param_groups_val_list(self.optimizer, "lr")
        return [
            group["lr"] * self.gamma ** self.milestones[self.last_epoch]
            for group in self.optimizer.param_groups
        ]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [
            base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
            for base_lr in self.base_lrs
        ]


class ConstantLR(LRScheduler):
    """Matches `torch.optim.lr_scheduler.ConstantLR`: lr * factor until total_iters."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [
            base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for base_lr in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """Matches `torch.optim.lr_scheduler.LinearLR`: a linear ramp of the multiplier."""

    def __init__(
        self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1
    ):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and "
                "less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        delta = self.end_factor - self.start_factor
        factor = 1.0 + delta / (
            self.total_iters * self.start_factor + (self.last_epoch - 1) * delta
        )
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [
            base_lr
            * (
                self.start_factor
                + (self.end_factor - self.start_factor)
                * min(self.total_iters, self.last_epoch)
                / self.total_iters
            )
            for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Matches `torch.optim.lr_scheduler.ExponentialLR`: lr *= gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Matches `torch.optim.lr_scheduler.PolynomialLR`."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        decay = (
            (1.0 - self.last_epoch / self.total_iters)
            / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [
            base_lr
            * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
            for base_lr in self.base_lrs
        ]


class CosineAnnealingLR(LRScheduler):
    """Matches `torch.optim.lr_scheduler.CosineAnnealingLR` (the recursive form)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return [
                self.eta_min
                + (base_lr - self.eta_min)
                * (1 + math.cos(self.last_epoch * math.pi / self.T_max))
                / 2
                for base_lr in self.base_lrs
            ]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [
                group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for base_lr, group in zip(self.base_lrs, groups)
            ]
        return [
            (1 + math.cos(math.pi * self.last_epoch / self.T_max))
            / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
            * (group["lr"] - self.eta_min)
            + self.eta_min
            for group in groups
        ]

    def _get_closed_form_lr(self):
        return [
            self.eta_min
            + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base_lr in self.base_lrs
        ]


def _check_children(cls_name, optimizer, schedulers) -> None:
    for idx, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{cls_name} at index {idx} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{cls_name} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{idx} in the given schedulers sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{cls_name} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {scheduler.__class__.__name__} at index {idx} has "
                f"{scheduler.optimizer}, which is different from "
                f"{optimizer.__class__.__name__}."
            )


class _Composite:
    """state_dict handling of the schedulers made of schedulers."""

    def state_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers
        for s, sd in zip(self._schedulers, schedulers):
            s.load_state_dict(sd)


class SequentialLR(_Composite, LRScheduler):
    """Matches `torch.optim.lr_scheduler.SequentialLR`: schedulers switched at milestones."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_children(name, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Undo the children's initial steps, then redo the first one's.
        for group in self.optimizer.param_groups:
            _update_param_group_val(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite, LRScheduler):
    """Matches `torch.optim.lr_scheduler.ChainedScheduler`: every child steps each step."""

    def __init__(self, schedulers, optimizer=None):
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(
                f"{name} expects at least one scheduler to be chained, but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_children(name, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")


class ReduceLROnPlateau(LRScheduler):
    """Matches `torch.optim.lr_scheduler.ReduceLROnPlateau` (step(metrics))."""

    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        threshold=1e-4,
        threshold_mode="rel",
        cooldown=0,
        min_lr=0,
        eps=1e-8,
    ):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None) -> None:
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _reduce_lr(self, epoch) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    "The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to "
                    "a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _update_param_group_val(group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a, best) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(
            mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode
        )


# The schedules and the protocol are defined in two private modules; their classes are
# PyTorch's `torch.optim.lr_scheduler.*` by name (reprs, and pickles that PyTorch reads).
for _cls in (LRScheduler, _LRScheduler, CyclicLR, CosineAnnealingWarmRestarts, OneCycleLR):
    _cls.__module__ = __name__
