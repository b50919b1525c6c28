"""Gradient clipping: `clip_grad_norm_`, `clip_grad_value_`, `get_total_norm`,
`clip_grads_with_norm_`.

As PyTorch, gradients are grouped by device and dtype and each group goes through the
`_foreach_*` ops (one compiled program per group, whatever the number of shapes), or one
tensor at a time with `foreach=False` or where the device has no foreach ops.
"""

from __future__ import annotations

import functools
import types
import warnings
from typing import Iterable, Union

from ... import (
    _foreach_clamp_max_,
    _foreach_clamp_min_,
    _foreach_mul_,
    _foreach_norm,
    clamp,
    linalg,
    stack,
    tensor,
)
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...utils._foreach_utils import (
    _device_has_foreach_support,
    _group_tensors_by_device_and_dtype,
    _has_foreach_support,
)

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "get_total_norm",
    "clip_grads_with_norm_",
]

_tensor_or_tensors = Union[Tensor, Iterable[Tensor]]


def _use_foreach(foreach: bool | None, tensors: list, device) -> bool:
    """PyTorch's choice: foreach by default where supported; `foreach=True` where it is not
    raises."""
    if (foreach is None and _has_foreach_support(tensors, device)) or (
        foreach and _device_has_foreach_support(device)
    ):
        return True
    if foreach:
        raise RuntimeError(
            f"foreach=True was passed, but can't use the foreach API on {device.type} tensors"
        )
    return False


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with grad_mode.no_grad():
            return fn(*args, **kwargs)

    return wrapper


@_no_grad
def get_total_norm(
    tensors: _tensor_or_tensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Matches `torch.nn.utils.get_total_norm`: the norm of the tensors' norms."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return tensor(0.0)
    first_device = tensors[0].device
    norms = []
    for (device, _), ([group], _) in _group_tensors_by_device_and_dtype([tensors]).items():
        if _use_foreach(foreach, group, device):
            norms.extend(_foreach_norm(group, norm_type))
        else:
            norms.extend(linalg.vector_norm(t, norm_type) for t in group)
    total_norm = linalg.vector_norm(stack([n.to(first_device) for n in norms]), norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`"
        )
    return total_norm


@_no_grad
def clip_grads_with_norm_(
    parameters: _tensor_or_tensors, max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    """Matches `torch.nn.utils.clip_grads_with_norm_`: scales grads by
    `min(1, max_norm / (total_norm + 1e-6))`."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    # Always multiplying (also by 1) avoids a data-dependent branch, as in PyTorch.
    clip_coef_clamped = clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for (device, _), ([group], _) in _group_tensors_by_device_and_dtype([grads]).items():
        if _use_foreach(foreach, group, device):
            _foreach_mul_(group, clip_coef_clamped.to(device))
        else:
            coef = clip_coef_clamped.to(device)
            for g in group:
                g.mul_(coef)


@_no_grad
def clip_grad_norm_(
    parameters: _tensor_or_tensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Matches `torch.nn.utils.clip_grad_norm_`; returns the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3
            )
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(
    parameters: _tensor_or_tensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated alias of `clip_grad_norm_`, as in PyTorch."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(
    parameters: _tensor_or_tensors, clip_value: float, foreach: bool | None = None
) -> None:
    """Matches `torch.nn.utils.clip_grad_value_`: clamps grads to [-clip_value, clip_value]."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    for (device, _), ([group], _) in _group_tensors_by_device_and_dtype([grads]).items():
        if _use_foreach(foreach, group, device):
            _foreach_clamp_min_(group, -clip_value)
            _foreach_clamp_max_(group, clip_value)
        else:
            for g in group:
                g.clamp_(min=-clip_value, max=clip_value)
