"""The learning-rate scheduler protocol that `torch.optim.lr_scheduler`'s schedules share:
`LRScheduler` (stepping, the chainable and closed forms, `state_dict`), and the helpers that
read and write the optimizer's parameter groups.
"""

from __future__ import annotations

import warnings
from functools import wraps
from weakref import ref

from .._tensor import Tensor
from .optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _to_scalar(x):
    return x.item() if isinstance(x, Tensor) else x


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per param group (a scalar is repeated; tensors are cloned)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [p.clone() if isinstance(p, Tensor) else p for p in param]


def _param_groups_val_list(optimizer: Optimizer, key: str) -> list:
    return [
        g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups
    ]


def _update_param_group_val(param_group: dict, key: str, val) -> None:
    # A Tensor lr is updated in place, so that compiled steps holding it see the change.
    if isinstance(param_group[key], Tensor):
        param_group[key].fill_(_to_scalar(val))
    else:
        param_group[key] = val


class _enable_get_lr_call:
    def __init__(self, o):
        self.o = o

    def __enter__(self):
        self.o._get_lr_called_within_step = True
        return self

    def __exit__(self, *exc):
        self.o._get_lr_called_within_step = False


class _initial_mode:
    def __init__(self, o):
        self.o = o

    def __enter__(self):
        self.o._is_initial = True

    def __exit__(self, *exc):
        self.o._is_initial = False


def _warn_get_lr_called_within_step(scheduler) -> None:
    if not scheduler._get_lr_called_within_step:
        warnings.warn(
            "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
            UserWarning,
            stacklevel=3,
        )


class LRScheduler:
    """Matches `torch.optim.lr_scheduler.LRScheduler`."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                if isinstance(initial_lr, Tensor):
                    initial_lr = initial_lr.clone()
                group.setdefault("initial_lr", initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not "
                        "recommended)"
                    )
        self.base_lrs = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._patch_optimizer_step()
        self._initial_step()

    def _patch_optimizer_step(self) -> None:
        """Wraps `optimizer.step` (once) to record that it was called, for the order warning."""
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        opt_ref = ref(opt)
        func = opt.step.__func__

        @wraps(func)
        def wrapper(*args, **kwargs):
            o = opt_ref()
            o._opt_called = True
            return func.__get__(o, o.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True
        opt.step = wrapper

    def _initial_step(self) -> None:
        self._step_count = 0
        with _initial_mode(self):
            self.step()

    def state_dict(self) -> dict:
        """Matches `LRScheduler.state_dict`: every attribute but the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The learning rates set by the last `step()`."""
        return self._last_lr

    def get_lr(self) -> list:
        """The chainable form of the schedule (from the current group values)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Matches `LRScheduler.step`, including the call-order warnings."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                    "will result in PyTorch skipping the first value of the learning rate "
                    "schedule. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _enable_get_lr_call(self):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                if hasattr(self, "_get_closed_form_lr"):
                    values = self._get_closed_form_lr()
                else:
                    values = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            _update_param_group_val(group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """Deprecated alias kept by PyTorch."""
