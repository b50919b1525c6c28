"""Regression losses: l1, mse, huber, smooth_l1, soft_margin, poisson_nll, gaussian_nll."""

import math

import jax
import jax.numpy as jnp
import numpy as np

from .... import _meta
from ...._tensor import Tensor
from ... import _derivatives
from ..._registry import DEFAULT, INT_TO_FLOAT, T, composite, op
from ._common import _broadcast, _float_check, _weighted, loss_op, reduce_loss, reduction_of

# ---------------------------------------------------------------------------
# Regression losses


@loss_op("l1_loss", promote=DEFAULT)
def l1_loss(
    input: T, target: T, size_average=None, reduce=None, reduction="mean", weight: T = None
):
    """Matches `torch.nn.functional.l1_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    x, y = _broadcast(input, target)
    loss = _derivatives.abs(x - y)  # (no gradient where x == y, as PyTorch)
    if weight is not None:
        return _weighted(loss, weight, reduction, True)
    return reduce_loss(loss, reduction)


@loss_op("mse_loss", promote=DEFAULT)
def mse_loss(
    input: T, target: T, size_average=None, reduce=None, reduction="mean", weight: T = None
):
    """Matches `torch.nn.functional.mse_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    _float_check(input, "mse_cpu")
    x, y = _broadcast(input, target)
    loss = (x - y) ** 2
    if weight is not None:
        return _weighted(loss, weight, reduction, True)
    return reduce_loss(loss, reduction)


def _huber(d, delta):
    a = jnp.abs(d)
    return jnp.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))


@loss_op("huber_loss", promote=DEFAULT)
def huber_loss(input: T, target: T, reduction="mean", delta=1.0, weight: T = None):
    """Matches `torch.nn.functional.huber_loss`."""
    reduction = reduction_of(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, y = _broadcast(input, target)
    loss = _huber(x - y, delta)
    if weight is not None:
        return _weighted(loss, weight, reduction, False)
    return reduce_loss(loss, reduction)


@loss_op("smooth_l1_loss", promote=DEFAULT)
def smooth_l1_loss(input: T, target: T, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Matches `torch.nn.functional.smooth_l1_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, y = _broadcast(input, target)
    d = x - y
    a = jnp.abs(d)
    loss = a if beta == 0 else jnp.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)
    return reduce_loss(loss, reduction)


@loss_op("soft_margin_loss", promote=DEFAULT)
def soft_margin_loss(input: T, target: T, size_average=None, reduce=None, reduction="mean"):
    """Matches `torch.nn.functional.soft_margin_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    return reduce_loss(jnp.log1p(jnp.exp(-target * input)), reduction)


def _reduced_node(reduction: str, unreduced: str) -> str:
    """The node of a loss reduced by mean() / sum(), or of its last op when not reduced
    (PyTorch computes these losses with ordinary ops)."""
    return {"mean": "MeanBackward0", "sum": "SumBackward0"}.get(reduction, unreduced)


def _poisson_nll_node(full, size_average, reduce, reduction) -> str:
    # the deprecated size_average / reduce arguments override `reduction`
    if size_average is not None or reduce is not None:
        if reduce is False:
            reduction = "none"
        else:
            reduction = "sum" if size_average is False else "mean"
    return _reduced_node(reduction, "AddBackward0" if full else "SubBackward0")


@loss_op("poisson_nll_loss", promote=INT_TO_FLOAT, node=_poisson_nll_node)
def poisson_nll_loss(
    input: T,
    target: T,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-8,
    reduce=None,
    reduction="mean",
):
    """Matches `torch.nn.functional.poisson_nll_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    if log_input:
        loss = jnp.exp(input) - target * input
    else:
        loss = input - target * jnp.log(input + eps)
    if full:
        # Stirling's approximation of log(target!), only where target > 1. Computed on the raw
        # target and masked afterwards, as PyTorch does (its target gradient is nan at 0).
        stirling = target * jnp.log(target) - target + 0.5 * jnp.log(2 * math.pi * target)
        loss = loss + jnp.where(target > 1, stirling, 0)
    return reduce_loss(loss, reduction)


@op(
    name="_gaussian_nll_loss",
    promote=DEFAULT,
    method=False,
    out=False,
    node=lambda full, reduction: _reduced_node(
        reduction, "AddBackward0" if full else "MulBackward0"
    ),
)
def _gaussian_nll_loss(input: T, target: T, var: T, *, full=False, eps=1e-6, reduction="mean"):
    var = jnp.asarray(var, input.dtype)
    if var.ndim and var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var[..., None]
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # PyTorch clamps var without letting the clamp take part in autograd.
    var = var + jax.lax.stop_gradient(jnp.maximum(var, eps) - var)
    loss = 0.5 * (jnp.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


@composite(name="nn.functional.gaussian_nll_loss", method=False)
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Matches `torch.nn.functional.gaussian_nll_loss`."""
    v = var._array if isinstance(var, Tensor) else np.asarray(var)
    if not _meta.no_values(v) and bool(np.any(np.asarray(v) < 0)):
        raise ValueError("var has negative entry/entries")
    return _gaussian_nll_loss(input, target, var, full=full, eps=eps, reduction=reduction)
