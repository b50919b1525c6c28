"""Classification losses: binary cross entropy (with logits), kl_div, nll_loss, cross_entropy,
linear_cross_entropy."""

import math

import jax
import jax.numpy as jnp
import numpy as np

from .... import _meta
from ...._dtype import c10_name
from ...._tensor import Tensor
from ... import _derivatives
from ..._registry import DEFAULT, NONE, TI, T, composite, op
from ._common import _float_check, loss_op, reduce_loss, reduction_of

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


def _nll_node(input, reduction) -> str:
    """nll_loss on (N, C, d1, ...) input is the 2-d kernel on a 4-d view of it."""
    if input.ndim < 3:
        return "NllLossBackward0"
    return "NllLoss2DBackward0" if reduction != "none" or input.ndim == 4 else "ViewBackward0"


def _cross_entropy_node(input, target, reduction) -> str:
    """Class-index targets: nll_loss(log_softmax(x)); probabilities: a sum of products."""
    if not (isinstance(target, Tensor) and target.dtype.is_floating_point):
        return _nll_node(input, reduction)
    return {"mean": "DivBackward1", "sum": "NegBackward0"}.get(reduction, "NegBackward0")


@op(name="_nll_loss", promote=DEFAULT, method=False, out=False, node=_nll_node)
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


@op(name="_cross_entropy", promote=DEFAULT, method=False, out=False, node=_cross_entropy_node)
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
