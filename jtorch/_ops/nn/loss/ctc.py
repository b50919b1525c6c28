"""The connectionist temporal classification loss (`ctc_loss`), with PyTorch's gradient."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .... import _device
from ...._tensor import Tensor, wrap
from ..._registry import NONE, TI, T, composite, op

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


def _as_long(v, like: Tensor) -> Tensor:
    """Lengths or targets (a tensor keeps its dtype; a list or numpy array becomes int64) on
    `like`'s device: PyTorch takes them on the CPU, or as lists, beside log-probabilities on
    an accelerator."""
    array = v._array if isinstance(v, Tensor) else np.asarray(v, np.int64)
    return wrap(_device.place_like(array, like._array))


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
    input_lengths = _as_long(input_lengths, log_probs)
    target_lengths = _as_long(target_lengths, log_probs)
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
        targets = padded
    targets = _as_long(targets, log_probs)
    return _ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank=blank,
        reduction=reduction,
        zero_infinity=zero_infinity,
    )
