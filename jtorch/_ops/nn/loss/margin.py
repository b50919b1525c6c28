"""Margin and embedding losses: margin_ranking, hinge_embedding, cosine_embedding, the triplet
losses, multilabel_soft_margin, multi_margin, multilabel_margin."""

import math

import jax
import jax.numpy as jnp

from ..._registry import DEFAULT, INT_TO_FLOAT, NONE, TI, T, composite, op
from ._common import loss_op, reduce_loss, reduction_of

# ---------------------------------------------------------------------------
# Margin and embedding losses


@loss_op("margin_ranking_loss", promote=INT_TO_FLOAT)
def margin_ranking_loss(
    input1: T, input2: T, target: T, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """Matches `torch.nn.functional.margin_ranking_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension "
            f"but got sizes: input1: {list(input1.shape)}, input2: "
            f"{list(input2.shape)}, target: {list(target.shape)} "
        )
    return reduce_loss(jnp.maximum(-target * (input1 - input2) + margin, 0), reduction)


@loss_op("hinge_embedding_loss", promote=DEFAULT)
def hinge_embedding_loss(
    input: T, target: T, margin=1.0, size_average=None, reduce=None, reduction="mean"
):
    """Matches `torch.nn.functional.hinge_embedding_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    zero = jnp.zeros((), input.dtype)
    loss = jnp.where(target != 1, jnp.maximum(margin - input, 0), zero) + jnp.where(
        target != -1, input, zero
    )
    return reduce_loss(loss, reduction)


@loss_op("cosine_embedding_loss", promote=INT_TO_FLOAT)
def cosine_embedding_loss(
    input1: T, input2: T, target: T, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """Matches `torch.nn.functional.cosine_embedding_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    if input1.ndim not in (1, 2) or input1.shape != input2.shape:
        raise RuntimeError(
            f"cosine_embedding_loss : All input tensors should have same "
            f"dimension but got sizes: input1: {list(input1.shape)}, input2: "
            f"{list(input2.shape)}, target: {list(target.shape)} "
        )
    axis = input1.ndim - 1
    eps = 1e-12
    prod = jnp.sum(input1 * input2, axis=axis)
    mag1 = jnp.sum(input1 * input1, axis=axis) + eps
    mag2 = jnp.sum(input2 * input2, axis=axis) + eps
    cos = prod / jnp.sqrt(mag1 * mag2)
    zero = jnp.zeros((), cos.dtype)
    loss = jnp.where(target == 1, 1 - cos, zero) + jnp.where(
        target == -1, jnp.maximum(cos - margin, 0), zero
    )
    return reduce_loss(loss, reduction)


def _pairwise(x1, x2, p, eps):
    """PyTorch's pairwise_distance: ||x1 - x2 + eps||_p over the last dim."""
    d = x1 - x2 + eps
    if p == math.inf:
        return jnp.max(jnp.abs(d), axis=-1)
    if p == 0:
        return jnp.sum(d != 0, axis=-1).astype(d.dtype)
    return jnp.sum(jnp.abs(d) ** p, axis=-1) ** (1.0 / p)


@loss_op("triplet_margin_loss", promote=INT_TO_FLOAT)
def triplet_margin_loss(
    anchor: T,
    positive: T,
    negative: T,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """Matches `torch.nn.functional.triplet_margin_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    a, pz, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == pz == n:
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the "
            f"same number of dimensions, but got: anchor {a}D, positive {pz}D, "
            f"and negative {n}D inputs"
        )
    d_pos = _pairwise(anchor, positive, p, eps)
    d_neg = _pairwise(anchor, negative, p, eps)
    if swap:
        d_neg = jnp.minimum(d_neg, _pairwise(positive, negative, p, eps))
    return reduce_loss(jnp.maximum(margin + d_pos - d_neg, 0), reduction)


@op(name="_triplet_from_distances", promote=DEFAULT, method=False, out=False)
def _triplet_from_distances(
    dist_pos: T, dist_neg: T, dist_swap: T = None, *, margin=1.0, reduction="mean"
):
    if dist_swap is not None:
        dist_neg = jnp.minimum(dist_neg, dist_swap)
    return reduce_loss(jnp.maximum(margin + dist_pos - dist_neg, 0), reduction)


@op(name="_pairwise_distance", promote=DEFAULT, method=False, out=False)
def _pairwise_distance(x1: T, x2: T):
    return _pairwise(x1, x2, 2, 1e-6)


@composite(name="nn.functional.triplet_margin_with_distance_loss", method=False)
def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    """Matches `torch.nn.functional.triplet_margin_with_distance_loss`."""
    if margin <= 0:
        raise ValueError(
            f"triplet_margin_with_distance_loss: expected margin to be greater "
            f"than 0, got {margin} instead"
        )
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    a, pz, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == pz == n:
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the "
            f"same number of dimensions, but got: anchor {a}D, positive {pz}D, "
            f"and negative {n}D inputs"
        )
    dist = distance_function if distance_function is not None else _pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    d_swap = dist(positive, negative) if swap else None
    return _triplet_from_distances(d_pos, d_neg, d_swap, margin=margin, reduction=reduction)


@loss_op("multilabel_soft_margin_loss", promote=DEFAULT)
def multilabel_soft_margin_loss(
    input: T, target: T, weight: T = None, size_average=None, reduce=None, reduction="mean"
):
    """Matches `torch.nn.functional.multilabel_soft_margin_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    loss = -(target * jax.nn.log_sigmoid(input) + (1 - target) * jax.nn.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = jnp.sum(loss, axis=input.ndim - 1) / input.shape[-1]
    return reduce_loss(loss, reduction)


def _check_index_target(input, target, name):
    if (
        input.ndim not in (1, 2)
        or (input.ndim == 2 and target.ndim != 1)
        or (input.ndim == 1 and target.ndim > 1)
    ):
        raise RuntimeError(
            f"inconsistent target size, expected {input.shape[0]} but got {list(target.shape)}"
        )


@loss_op("multi_margin_loss", promote=NONE)
def multi_margin_loss(
    input: T,
    target: TI,
    p=1,
    margin=1.0,
    weight: T = None,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """Matches `torch.nn.functional.multi_margin_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target.reshape(-1).astype(jnp.int64)
    if t.shape[0] != x.shape[0]:
        raise RuntimeError(
            f"inconsistent target size, expected {x.shape[0]} but got {list(target.shape)}"
        )
    c = x.shape[1]
    x_y = jnp.take_along_axis(x, t[:, None], axis=1)
    z = jnp.maximum(margin - x_y + x, 0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.astype(x.dtype)[t][:, None]
    z = jnp.where(jnp.arange(c)[None, :] == t[:, None], 0, z)
    loss = jnp.sum(z, axis=1) / c
    if input.ndim < 2 and reduction == "none":
        loss = loss.reshape(target.shape)
    return reduce_loss(loss, reduction)


@loss_op("multilabel_margin_loss", promote=NONE)
def multilabel_margin_loss(input: T, target: TI, size_average=None, reduce=None, reduction="mean"):
    """Matches `torch.nn.functional.multilabel_margin_loss` (targets end at the first -1)."""
    reduction = reduction_of(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target.reshape(x.shape).astype(jnp.int64)
    c = x.shape[1]
    valid = jnp.cumprod(t >= 0, axis=1).astype(bool)  # (N, C) label slots in use
    tc = jnp.clip(t, 0, c - 1)
    is_target = jnp.any(valid[:, :, None] & (tc[:, :, None] == jnp.arange(c)), axis=1)
    x_t = jnp.take_along_axis(x, tc, axis=1)  # (N, C) scores of labels
    z = jnp.maximum(1 - x_t[:, :, None] + x[:, None, :], 0)  # (N, label j, class k)
    z = jnp.where(valid[:, :, None] & ~is_target[:, None, :], z, 0)
    loss = jnp.sum(z, axis=(1, 2)) / c
    if input.ndim < 2:
        loss = loss.reshape(())
    return reduce_loss(loss, reduction)
