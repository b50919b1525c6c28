"""Loss functions (`torch.nn.functional.*_loss`, `cross_entropy`, `kl_div`, `ctc_loss`).

Every loss takes torch's signature, legacy `size_average`/`reduce` included. Losses whose
targets are class indices check the indices eagerly in a thin composite (the check needs
concrete values, so it is skipped while tracing) and then run one compiled kernel.
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ... import _meta
from ..._dtype import c10_name
from ..._tensor import Tensor, wrap
from .. import _derivatives
from .._registry import DEFAULT, INT_TO_FLOAT, NONE, TI, T, composite, op

loss_op = lambda name, **kw: op(
    name=f"nn.functional.{name}",
    method=False,  # noqa: E731
    out=False,
    **kw,
)


def reduction_of(size_average, reduce, reduction):
    """The reduction string, from the legacy flags when either is given (as PyTorch does)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        if not reduce:
            return "none"
        return "mean" if size_average else "sum"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_loss(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return jnp.sum(loss)
    return jnp.mean(loss)


def _float_check(x, kernel):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        name = {
            "int64": "Long",
            "int32": "Int",
            "int16": "Short",
            "int8": "Char",
            "uint8": "Byte",
            "bool": "Bool",
        }.get(x.dtype.name, x.dtype.name)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _broadcast(a, b):
    shape = jnp.broadcast_shapes(a.shape, b.shape)
    return jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)


def _weighted(loss, weight, reduction, weighted_mean):
    """PyTorch's Python-side `weight=` for l1/mse/huber: mean divides by sum(weight) or not."""
    if weight.shape != loss.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and weighted_mean:
        return jnp.sum(loss) / jnp.sum(weight)
    return reduce_loss(loss, reduction)


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


@loss_op("poisson_nll_loss", promote=INT_TO_FLOAT)
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


@op(name="_gaussian_nll_loss", promote=DEFAULT, method=False, out=False)
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


# ---------------------------------------------------------------------------
# Probabilistic losses


@loss_op("binary_cross_entropy", promote=NONE)
def binary_cross_entropy(
    input: T, target: T, weight: T = None, size_average=None, reduce=None, reduction="mean"
):
    """Matches `torch.nn.functional.binary_cross_entropy`."""
    reduction = reduction_of(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size (torch.Size({list(target.shape)})) that is "
            f"different to the input size (torch.Size({list(input.shape)})) is "
            f"deprecated. Please ensure they have the same size."
        )
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {c10_name(target)} but expected {c10_name(input)}")
    loss = _bce(input, target)
    if weight is not None:
        loss = loss * weight.astype(loss.dtype)
    return reduce_loss(loss, reduction)


def _bce_value(x, y):
    # PyTorch clamps each log at -100 so that 0 * log(0) stays finite.
    log_x = jnp.maximum(jnp.log(x), -100)
    log_1mx = jnp.maximum(jnp.log1p(-x), -100)
    return -(y * log_x + (1 - y) * log_1mx)


def _bce_tangent(primals, tangents, out):
    # PyTorch's binary_cross_entropy_backward: (x - y) / max(x (1 - x), 1e-12), finite at 0
    # and 1; for the target, -logit(x).
    (x, y), (tx, ty) = primals, tangents
    eps = jnp.asarray(1e-12, x.dtype)
    dx = (x - y) / jnp.maximum((1 - x) * x, eps)
    return _derivatives.linear(out, (dx, tx), (-jnp.log(x / (1 - x)), ty))


_bce = _derivatives.with_jvp(_bce_value, _bce_tangent)


@loss_op(
    "binary_cross_entropy_with_logits",
    aliases=("binary_cross_entropy_with_logits",),
    promote=DEFAULT,
)
def binary_cross_entropy_with_logits(
    input: T,
    target: T,
    weight: T = None,
    size_average=None,
    reduce=None,
    reduction="mean",
    pos_weight: T = None,
):
    """Matches `torch.nn.functional.binary_cross_entropy_with_logits`."""
    reduction = reduction_of(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size (torch.Size({list(target.shape)})) must be the same as "
            f"input size (torch.Size({list(input.shape)}))"
        )
    # softplus(-x) written as PyTorch writes it, stable for large |x|.
    m = jnp.maximum(-input, 0)
    softplus_neg = m + jnp.log(jnp.exp(-m) + jnp.exp(-input - m))
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


@loss_op("kl_div", promote=DEFAULT)
def kl_div(input: T, target: T, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Matches `torch.nn.functional.kl_div` (including 'batchmean')."""
    if size_average is not None or reduce is not None:
        reduction = reduction_of(size_average, reduce, reduction)
    elif reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = jnp.exp(target) * (target - input)
    else:
        loss = jax.scipy.special.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return jnp.sum(loss) / input.shape[0] if input.ndim else jnp.sum(loss)
    return reduce_loss(loss, reduction)


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


# ---------------------------------------------------------------------------
# Classification: nll_loss, cross_entropy


def _class_dim_checks(input, target, weight):
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.ndim == 2:
        if target.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.shape[0] != target.shape[0]:
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target "
                f"batch_size ({target.shape[0]})."
            )
    else:
        if target.shape != (input.shape[0],) + input.shape[2:]:
            raise RuntimeError(
                f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}"
            )
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != c):
        raise RuntimeError(
            f"weight tensor should be defined either for all {c} classes or no "
            f"classes but got weight tensor of shape: {list(weight.shape)}"
        )
    if not jnp.issubdtype(target.dtype, jnp.integer):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {c10_name(target)}")
    return c


def _nll(logp, target, weight, ignore_index, reduction):
    """nll over class dim 1 (or 0 for a single sample); logp already float."""
    x = logp[None] if logp.ndim == 1 else logp
    t = target.reshape((1,) + target.shape) if logp.ndim == 1 else target
    t = t.astype(jnp.int64)
    keep = t != ignore_index
    tc = jnp.where(keep, t, 0)
    picked = jnp.take_along_axis(x, tc[:, None], axis=1)[:, 0]
    w = jnp.ones((), x.dtype) if weight is None else weight.astype(x.dtype)[tc]
    w = jnp.where(keep, w, jnp.zeros((), x.dtype))
    loss = -picked * w
    if reduction == "none":
        return loss[0] if logp.ndim == 1 else loss
    if reduction == "sum":
        return jnp.sum(loss)
    return jnp.sum(loss) / jnp.sum(jnp.broadcast_to(w, loss.shape))


def check_targets(target, n_classes, ignore_index):
    """Eager bounds check of class indices (PyTorch's IndexError); skipped under tracing."""
    if not isinstance(target, Tensor) or _meta.no_values(target._array):
        return
    if not np.issubdtype(np.dtype(target.dtype.np), np.integer) or target.numel() == 0:
        return
    t = np.asarray(target._array)
    bad = t[(t != ignore_index) & ((t < 0) | (t >= n_classes))]
    if bad.size:
        raise IndexError(f"Target {int(bad.flat[0])} is out of bounds.")


def _n_classes(input):
    return input.shape[1] if input.ndim > 1 else input.shape[0]


@op(name="_nll_loss", promote=DEFAULT, method=False, out=False)
def _nll_loss(input: T, target: TI, weight: T = None, *, ignore_index=-100, reduction="mean"):
    _class_dim_checks(input, target, weight)
    _float_check(input, "nll_loss_forward_reduce_cuda_kernel_2d_index")
    return _nll(input, target, weight, ignore_index, reduction)


@composite(name="nn.functional.nll_loss", method=False)
def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    """Matches `torch.nn.functional.nll_loss`."""
    reduction = reduction_of(size_average, reduce, reduction)
    if input.ndim >= 1:
        check_targets(target, _n_classes(input), ignore_index)
    return _nll_loss(input, target, weight, ignore_index=ignore_index, reduction=reduction)


def _cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing):
    class_axis = 1 if input.ndim > 1 else 0
    if jnp.issubdtype(target.dtype, jnp.floating):
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if target.shape != input.shape:
            raise RuntimeError(
                f"Expected target size {list(input.shape)}, got {list(target.shape)}"
            )
        dt = jnp.promote_types(input.dtype, target.dtype)
        logp = jax.nn.log_softmax(input.astype(dt), axis=class_axis)
        t = target.astype(dt)
        c = input.shape[class_axis]
        if label_smoothing > 0:
            t = t * (1 - label_smoothing) + label_smoothing / c
        prod = logp * t
        if weight is not None:
            shape = [1] * input.ndim
            shape[class_axis] = c
            prod = prod * weight.astype(dt).reshape(shape)
        loss = -jnp.sum(prod, axis=class_axis)
        if reduction == "mean":
            return jnp.sum(loss) / max(math.prod(loss.shape), 1) if loss.ndim else loss
        return reduce_loss(loss, reduction)
    c = _class_dim_checks(input, target, weight)
    logp = jax.nn.log_softmax(input, axis=class_axis)
    nll = _nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0:
        return nll
    keep = target != ignore_index
    tc = jnp.where(keep, target, 0).astype(jnp.int64)
    if weight is not None:
        shape = [1] * input.ndim
        shape[class_axis] = c
        smooth = -jnp.sum(logp * weight.astype(logp.dtype).reshape(shape), axis=class_axis)
    else:
        smooth = -jnp.sum(logp, axis=class_axis)
    smooth = jnp.where(keep, smooth, 0)
    if reduction == "mean":
        if weight is not None:
            denom = jnp.sum(jnp.where(keep, weight.astype(logp.dtype)[tc], 0))
        else:
            denom = jnp.sum(keep)
        smooth = jnp.sum(smooth) / denom
    else:
        smooth = reduce_loss(smooth, reduction)
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / c)


@op(name="_cross_entropy", promote=DEFAULT, method=False, out=False)
def _cross_entropy_op(
    input: T,
    target: TI,
    weight: T = None,
    *,
    ignore_index=-100,
    reduction="mean",
    label_smoothing=0.0,
):
    _float_check(input, "log_softmax_lastdim_kernel_impl")
    return _cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


@composite(name="nn.functional.cross_entropy", method=False)
def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """Matches `torch.nn.functional.cross_entropy` (class indices or probabilities)."""
    reduction = reduction_of(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim >= 1:
        check_targets(target, _n_classes(input), ignore_index)
    return _cross_entropy_op(
        input,
        target,
        weight,
        ignore_index=ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )


@op(name="_linear_cross_entropy", promote=DEFAULT, method=False, out=False)
def _linear_cross_entropy(
    input: T,
    linear_weight: T,
    target: TI,
    linear_bias: T = None,
    weight: T = None,
    *,
    ignore_index=-100,
    reduction="mean",
    label_smoothing=0.0,
):
    # linear_weight is (C, d_1, ..., d_K, in): the logits are (*batch, C, d_1, ..., d_K),
    # the class dim right after the (at most one) batch dim, as cross_entropy wants it.
    batch = input.shape[:-1]
    logits_shape = (*batch, *linear_weight.shape[:-1])
    flat_w = linear_weight.reshape(-1, linear_weight.shape[-1])
    logits = jnp.matmul(input, flat_w.T, precision=jax.lax.Precision.HIGHEST)
    if linear_bias is not None:
        logits = logits + linear_bias.reshape(-1)
    logits = logits.reshape(logits_shape)
    return _cross_entropy(logits, target, weight, ignore_index, reduction, label_smoothing)


@composite(name="nn.functional.linear_cross_entropy", method=False)
def linear_cross_entropy(
    input,
    linear_weight,
    target,
    *,
    linear_bias=None,
    weight=None,
    reduction="mean",
    ignore_index=None,
    label_smoothing=0.0,
    options=None,
):
    """Matches `torch.nn.functional.linear_cross_entropy`.

    `options` (PyTorch's chunking strategy) only trades memory for speed; the
    result is the same, so jtorch always computes it in one pass.
    """
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}"
        )
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            f"expected equal input and linear_weight last dimensions "
            f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
            f"respectively"
        )
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(num_classes, *out_features)}, got "
            f"{tuple(linear_bias.shape)}"
        )
    if out_features and input.ndim == 1:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape "
            f"{tuple(linear_weight.shape)} requires batched input, "
            f"(N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*input.shape[:-1], num_classes, *out_features)
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    ignore = -100 if ignore_index is None else ignore_index
    check_targets(target, num_classes, ignore)
    return _linear_cross_entropy(
        input,
        linear_weight,
        target,
        linear_bias,
        weight,
        ignore_index=ignore,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )


# ---------------------------------------------------------------------------
# CTC


def _ctc(log_probs, targets, input_lengths, target_lengths, blank):
    """Negative log-likelihood per batch element, by the forward (alpha) recursion."""
    t_max, n, _ = log_probs.shape
    s_max = targets.shape[1]
    length = 2 * s_max + 1
    ext = jnp.full((n, length), blank, jnp.int64).at[:, 1::2].set(targets.astype(jnp.int64))
    # A label may be reached from two slots back when it is not blank and differs from it.
    prev2 = jnp.pad(ext, ((0, 0), (2, 0)), constant_values=blank)[:, :length]
    skip = (ext != blank) & (ext != prev2)
    skip = skip.at[:, :2].set(False)
    neg_inf = jnp.asarray(-jnp.inf, log_probs.dtype)
    lp = jnp.take_along_axis(log_probs, jnp.broadcast_to(ext[None], (t_max, n, length)), axis=2)
    alpha0 = jnp.full((n, length), neg_inf).at[:, 0].set(lp[0, :, 0])
    alpha0 = (
        alpha0.at[:, 1].set(jnp.where(target_lengths > 0, lp[0, :, 1], neg_inf))
        if length > 1
        else alpha0
    )

    def step(alpha, inp):
        t, lp_t = inp
        a1 = jnp.pad(alpha, ((0, 0), (1, 0)), constant_values=neg_inf)[:, :length]
        a2 = jnp.pad(alpha, ((0, 0), (2, 0)), constant_values=neg_inf)[:, :length]
        a2 = jnp.where(skip, a2, neg_inf)
        stacked = jnp.stack([alpha, a1, a2])
        m = jnp.max(stacked, axis=0)
        m_safe = jnp.where(jnp.isfinite(m), m, 0)
        new = m_safe + jnp.log(jnp.sum(jnp.exp(stacked - m_safe), axis=0)) + lp_t
        new = jnp.where(jnp.isfinite(m), new, neg_inf)
        active = (t < input_lengths)[:, None]
        return jnp.where(active, new, alpha), None

    ts = jnp.arange(1, t_max, dtype=jnp.int64)
    alpha, _ = jax.lax.scan(step, alpha0, (ts, lp[1:]))
    end = 2 * target_lengths.astype(jnp.int64)
    last = jnp.take_along_axis(alpha, end[:, None], axis=1)[:, 0]
    before = jnp.take_along_axis(alpha, jnp.maximum(end - 1, 0)[:, None], axis=1)[:, 0]
    before = jnp.where(end > 0, before, neg_inf)
    return -jnp.logaddexp(last, before)


@functools.partial(jax.custom_vjp, nondiff_argnums=(4, 5))
def _ctc_with_torch_grad(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """Per-sample CTC loss whose gradient is PyTorch's: `exp(log_probs) - posterior`.

    PyTorch's CTC backward assumes `log_probs` came from `log_softmax` and returns the
    gradient with respect to the logits (the true gradient plus `exp(log_probs)` for
    t < input_length); after `log_softmax`'s backward both agree, but a leaf `log_probs`
    sees PyTorch's value, so jtorch reproduces it. With `zero_infinity`, infeasible samples
    get loss 0 and gradient 0.
    """
    return _ctc_with_torch_grad_fwd(
        log_probs, targets, input_lengths, target_lengths, blank, zero_infinity
    )[0]


def _ctc_with_torch_grad_fwd(
    log_probs, targets, input_lengths, target_lengths, blank, zero_infinity
):
    nll, pullback = jax.vjp(
        lambda lp: _ctc(lp, targets, input_lengths, target_lengths, blank), log_probs
    )
    loss = nll
    if zero_infinity:
        loss = jnp.where(jnp.isinf(nll), jnp.zeros((), nll.dtype), nll)
    return loss, (log_probs, input_lengths, nll, pullback)


def _ctc_with_torch_grad_bwd(blank, zero_infinity, res, g):
    log_probs, input_lengths, nll, pullback = res
    if zero_infinity:
        g = jnp.where(jnp.isinf(nll), jnp.zeros((), g.dtype), g)
    (grad,) = pullback(g)
    active = jnp.arange(log_probs.shape[0])[:, None] < input_lengths[None, :]
    grad = grad + jnp.where(active[..., None], jnp.exp(log_probs) * g[None, :, None], 0)
    if zero_infinity:
        grad = jnp.where(jnp.isinf(nll)[None, :, None], jnp.zeros((), grad.dtype), grad)
    return grad, None, None, None


_ctc_with_torch_grad.defvjp(_ctc_with_torch_grad_fwd, _ctc_with_torch_grad_bwd)


@op(name="_ctc_loss", promote=NONE, method=False, out=False)
def _ctc_loss(
    log_probs: T,
    targets: TI,
    input_lengths: TI,
    target_lengths: TI,
    *,
    blank=0,
    reduction="mean",
    zero_infinity=False,
):
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs, targets = log_probs[:, None], targets[None]
        input_lengths, target_lengths = input_lengths.reshape(1), target_lengths.reshape(1)
    loss = _ctc_with_torch_grad(
        log_probs, targets, input_lengths, target_lengths, blank, zero_infinity
    )
    if reduction == "mean":
        return jnp.mean(loss / jnp.maximum(target_lengths, 1).astype(loss.dtype))
    if reduction == "sum":
        return jnp.sum(loss)
    return loss[0] if unbatched else loss


def _as_long(v):
    if isinstance(v, Tensor):
        return v
    return wrap(jnp.asarray(np.asarray(v, np.int64)))


@composite(name="nn.functional.ctc_loss", aliases=("ctc_loss",), method=False)
def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank=0,
    reduction="mean",
    zero_infinity=False,
):
    """Matches `torch.nn.functional.ctc_loss` (padded (N, S) or concatenated 1-D targets)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    input_lengths, target_lengths = _as_long(input_lengths), _as_long(target_lengths)
    batched = log_probs.ndim == 3
    if batched and targets.ndim == 1:
        # Concatenated targets: split by the (concrete) target lengths into a padded matrix.
        lengths = [int(v) for v in np.asarray(target_lengths._array).reshape(-1)]
        flat = np.asarray(targets._array)
        padded = np.zeros((len(lengths), max(lengths, default=0)), np.int64)
        offset = 0
        for i, k in enumerate(lengths):
            padded[i, :k] = flat[offset : offset + k]
            offset += k
        targets = wrap(jnp.asarray(padded))
    return _ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank=blank,
        reduction=reduction,
        zero_infinity=zero_infinity,
    )
