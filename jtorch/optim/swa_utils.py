"""`torch.optim.swa_utils`: weight averaging (SWA, EMA), SWALR, and `update_bn`."""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy

import jtorch

from .._tensor import Tensor
from ..autograd import grad_mode
from ..nn.modules.module import Module
from ..utils._foreach_utils import (
    _get_foreach_kernels_supported_devices,
    _group_tensors_by_device_and_dtype,
)
from .lr_scheduler import LRScheduler, _format_param

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]


def get_ema_multi_avg_fn(decay=0.999):
    """Matches `torch.optim.swa_utils.get_ema_multi_avg_fn`: ema = lerp(ema, p, 1 - decay)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )

    def ema_update(ema_param_list, current_param_list, _):
        with grad_mode.no_grad():
            if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
                jtorch._foreach_lerp_(ema_param_list, current_param_list, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """Matches `torch.optim.swa_utils.get_swa_multi_avg_fn`: the running mean."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with grad_mode.no_grad():
            if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
                jtorch._foreach_lerp_(
                    averaged_param_list, current_param_list, 1 / (num_averaged + 1)
                )
            else:
                diffs = jtorch._foreach_sub(current_param_list, averaged_param_list)
                if isinstance(num_averaged, Tensor):
                    # (PyTorch passes `[num_averaged + 1] * n` to `_foreach_addcdiv_`, whose
                    # parser refuses tensors as scalars: this is the division it means)
                    for p_avg, diff in zip(averaged_param_list, diffs):
                        p_avg.copy_(p_avg + diff / (num_averaged + 1))
                else:
                    jtorch._foreach_add_(averaged_param_list, diffs, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """Matches `torch.optim.swa_utils.get_ema_avg_fn`."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )

    def ema_update(ema_param, current_param, num_averaged):
        with grad_mode.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """Matches `torch.optim.swa_utils.get_swa_avg_fn`."""

    def swa_update(averaged_param, current_param, num_averaged):
        with grad_mode.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """Matches `torch.optim.swa_utils.AveragedModel` (avg_fn, multi_avg_fn, use_buffers).

    Without an averaging function, the running mean is PyTorch's CPU path
    (`avg + (p - avg) / (n + 1)` per tensor), here in one compiled call per dtype.
    """

    def __init__(
        self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", jtorch.tensor(0, dtype=jtorch.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Folds `model`'s current parameters (and buffers if use_buffers) into the average."""
        with grad_mode.no_grad():
            self._update_parameters(model)

    def _update_parameters(self, model: Module) -> None:
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                groups = _group_tensors_by_device_and_dtype([averaged, current])
                for (device, _), ([avg_list, model_list], _) in groups.items():
                    n = self.n_averaged.to(device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(avg_list, model_list, n)
                    elif device.type in _get_foreach_kernels_supported_devices():
                        get_swa_multi_avg_fn()(avg_list, model_list, n)
                    elif avg_list[0].is_floating_point() or avg_list[0].is_complex():
                        # PyTorch's per-tensor `get_swa_avg_fn` formula on the CPU,
                        # a + (m - a) / (n + 1), as foreach ops: one program per step
                        diffs = jtorch._foreach_sub(model_list, avg_list)
                        jtorch._foreach_div_(diffs, n + 1)
                        jtorch._foreach_add_(avg_list, diffs)
                    else:
                        fn = get_swa_avg_fn()
                        for p_avg, p_model in zip(avg_list, model_list):
                            p_avg.copy_(fn(p_avg, p_model, n))
            else:
                for p_avg, p_model in zip(averaged, current):
                    n = self.n_averaged.to(p_avg.device)
                    p_avg.detach().copy_(self.avg_fn(p_avg.detach(), p_model, n))
        if not self.use_buffers:
            # Buffers (e.g. BatchNorm statistics) follow the model, unaveraged.
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


def update_bn(loader, model: Module, device=None) -> None:
    """Matches `torch.optim.swa_utils.update_bn`: recompute BatchNorm statistics over `loader`.

    The running statistics are reset and re-estimated as cumulative averages
    (momentum None) over one pass, in train mode; the mode is restored after.
    """
    from ..nn.modules.batchnorm import _BatchNorm

    with grad_mode.no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for module in momenta:
            module.momentum = momenta[module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Matches `torch.optim.swa_utils.SWALR`: anneal each group's lr to its swa_lr."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        # The lr before annealing is recovered from the current one (chainable form).
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs)
        ]

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
