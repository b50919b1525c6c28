"""Statistics: var/std (and their `_mean` forms), median, mode, quantile, cov, corrcoef.

Histograms and counts (`histc`, `histogram`, `bincount`) are in `histogram.py`."""

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _meta
from .._dtype import c10_name
from .._tensor import Tensor, wrap, wrap_dim
from . import _derivatives
from ._kernel_helpers import accumulate, by_dim, dims_arg, is_complex, is_float, is_integral
from ._opdef import camel
from ._registry import NONE, TI, T, composite, name_return_type, op


def _default_float():
    return _dtype.get_default_dtype().np


# ---------------------------------------------------------------------------
# Variance and standard deviation


def _var_mean_arrays(x, axes, correction, keepdim):
    """(var, mean) over `axes`; var divides by max(0, N - correction), as PyTorch does."""
    xa = accumulate(x)
    n = xa.size if axes is None else math.prod(x.shape[d] for d in axes)
    mean = jnp.mean(xa, axis=axes, keepdims=True)
    dev = xa - mean
    sq = jnp.real(dev * jnp.conj(dev)) if is_complex(x) else dev * dev
    denom = max(0.0, n - correction)
    var = jnp.sum(sq, axis=axes, keepdims=keepdim) / jnp.asarray(denom, sq.dtype)
    if not keepdim:
        mean = jnp.squeeze(mean, axes) if axes is not None else mean.reshape(())
    return var.astype(jnp.real(x).dtype), mean.astype(x.dtype)


# var, std, var_mean and std_mean, each its own node in PyTorch (VarBackward0, ...)
@op(promote=NONE, method=False, name="_var_std", node=lambda kind: camel(kind) + "Backward0")
def _var_std(input: T, dim=None, correction=1, keepdim=False, *, kind="var"):
    if not (is_float(input) or is_complex(input)):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    var, mean = _var_mean_arrays(input, dims_arg(dim, input.ndim), correction, keepdim)
    if kind.startswith("std"):
        var = _std_of_var(var)
    return (var, mean) if kind.endswith("_mean") else var


# PyTorch's std_backward: grad / (2 std), 0 where std is 0 (a constant slice; jax: nan).
_std_of_var = _derivatives.masked_unary(jnp.sqrt, lambda v: 0.5 / jnp.sqrt(v), lambda v: v != 0)


def _var_front(kind):
    def impl(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
        if isinstance(dim, bool):  # the var(input, unbiased) overload
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise TypeError(
                f"{kind}() received an invalid combination of arguments - got both "
                "'unbiased' and 'correction'"
            )
        if isinstance(dim, float):
            raise TypeError(
                f"{kind}() received an invalid combination of arguments - got (Tensor, float)"
            )
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        if isinstance(dim, int):
            dim = (dim,)
        elif dim is not None:
            dim = tuple(int(d) for d in dim)
        kwargs = {} if out is None else {"out": out}
        return _var_std(input, dim, correction, keepdim, kind=kind, **kwargs)

    impl.__name__ = kind
    impl.__doc__ = (
        f"Matches `torch.{kind}`, with both the `correction=` and the legacy `unbiased=` forms."
    )
    return impl


var = composite(_var_front("var"))
std = composite(_var_front("std"))
var_mean = composite(_var_front("var_mean"), method=False)
std_mean = composite(_var_front("std_mean"), method=False)


# ---------------------------------------------------------------------------
# Median and mode


def _check_real(name, a):
    if is_complex(a):
        raise RuntimeError(f"\"{name}_cpu\" not implemented for '{c10_name(a.dtype)}'")


def _median_last(x, ignore_nan):
    """(value, index) of the lower median along the last axis; NaN handled as PyTorch does.

    `median` returns NaN (and the first NaN's index) when a slice holds NaN;
    `nanmedian` takes the median of the non-NaN values (NaN when there are none).
    """
    n = x.shape[-1]
    perm = jnp.argsort(x, axis=-1, stable=True)  # NaN sorts last, in original order
    s = jnp.take_along_axis(x, perm, axis=-1)
    if is_float(x):
        cnt = n - jnp.sum(jnp.isnan(x), axis=-1, keepdims=True)
        if ignore_nan:
            k = jnp.maximum((cnt - 1) // 2, 0)
        else:
            k = jnp.where(cnt < n, cnt, (n - 1) // 2)
    else:
        k = jnp.full(x.shape[:-1] + (1,), (n - 1) // 2, jnp.int64)
    return (
        jnp.take_along_axis(s, k, axis=-1)[..., 0],
        jnp.take_along_axis(perm, k, axis=-1)[..., 0].astype(jnp.int64),
    )


def _median_op(name, ignore_nan):
    def impl(input: T, dim=None, keepdim=False):
        _check_real(name, input)
        if dim is None:
            if input.size == 0:
                return jnp.full((), jnp.nan, input.dtype)
            # PyTorch shares the gradient among the elements equal to the median
            return _derivatives.evenly_distributed(
                input, lambda x: _median_last(x.reshape(-1), ignore_nan)[0]
            )
        d = wrap_dim(dim, input.ndim)
        if input.ndim == 0:
            return input, jnp.zeros((), jnp.int64)
        if input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        v, i = _median_last(jnp.moveaxis(input, d, -1), ignore_nan)
        if keepdim:
            v, i = jnp.expand_dims(v, d), jnp.expand_dims(i, d)
        return v, i

    impl.__name__ = name
    impl.__doc__ = (
        f"Matches `torch.{name}`: the lower of the two middle values; with `dim`, "
        "(values, indices)."
    )
    node = by_dim(camel(name))
    return name_return_type(op(impl, promote=NONE, returns=("values", "indices"), node=node), name)


median = _median_op("median", False)
nanmedian = _median_op("nanmedian", True)


def _mode_last(x):
    """The smallest most frequent value along the last axis and its last index."""
    n = x.shape[-1]
    perm = jnp.argsort(x, axis=-1, stable=True)
    s = jnp.take_along_axis(x, perm, axis=-1)
    pos = jax.lax.broadcasted_iota(jnp.int64, s.shape, s.ndim - 1)
    same = s[..., 1:] == s[..., :-1]
    if is_float(x):  # runs of NaN count as one value
        same = same | (jnp.isnan(s[..., 1:]) & jnp.isnan(s[..., :-1]))
    first = jnp.concatenate([jnp.ones(s.shape[:-1] + (1,), bool), ~same], axis=-1)
    last = jnp.concatenate([~same, jnp.ones(s.shape[:-1] + (1,), bool)], axis=-1)
    start = jax.lax.cummax(jnp.where(first, pos, 0), axis=s.ndim - 1)
    end = jax.lax.cummin(jnp.where(last, pos, n - 1), axis=s.ndim - 1, reverse=True)
    j = jnp.argmax(end - start, axis=-1, keepdims=True)  # first = smallest value among ties
    e = jnp.take_along_axis(end, j, axis=-1)
    # Within a run the stable sort keeps original order, so the run's end is the last index.
    return (
        jnp.take_along_axis(s, j, axis=-1)[..., 0],
        jnp.take_along_axis(perm, e, axis=-1)[..., 0].astype(jnp.int64),
    )


@op(promote=NONE, returns=("values", "indices"))
def mode(input: T, dim=-1, keepdim=False):
    """Matches `torch.mode`: the smallest most frequent value and the last index holding it."""
    _check_real("mode", input)
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    if input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    if input.size == 0:
        shape = tuple(1 if i == d else n for i, n in enumerate(input.shape))
        v, i = jnp.zeros(shape, input.dtype), jnp.zeros(shape, jnp.int64)
        return (v, i) if keepdim else (jnp.squeeze(v, d), jnp.squeeze(i, d))
    v, i = _mode_last(jnp.moveaxis(input, d, -1))
    if keepdim:
        v, i = jnp.expand_dims(v, d), jnp.expand_dims(i, d)
    return v, i


# ---------------------------------------------------------------------------
# Quantiles

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _lerp(a, b, w):
    # PyTorch's lerp: two formulas, chosen by the weight, for accuracy at both ends.
    return jnp.where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


@op(promote=NONE, method=False, name="_quantile")
def _quantile(
    input: T, q: TI, dim=None, keepdim=False, *, interpolation="linear", ignore_nan=False
):
    x = input
    if dim is None:
        y = x.reshape(-1)
    else:
        d = wrap_dim(dim, x.ndim)
        y = jnp.moveaxis(x, d, -1) if x.ndim else x.reshape(1)
    n = y.shape[-1]
    s = jnp.sort(y, axis=-1)  # NaN last
    qv = q.reshape(-1).astype(x.dtype)
    qb = qv.reshape((-1,) + (1,) * y.ndim)  # (Q, *batch, 1)
    isnan = jnp.isnan(s)
    if ignore_nan:
        cnt = jnp.sum(~isnan, axis=-1, keepdims=True).astype(x.dtype)
        ranks = jnp.maximum(qb * (cnt - 1), 0)
    else:
        ranks = jnp.where(jnp.any(isnan, axis=-1, keepdims=True), n - 1, qb * (n - 1))
    if interpolation == "lower":
        ranks = jnp.floor(ranks)
    elif interpolation == "higher":
        ranks = jnp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = jnp.round(ranks)  # half to even, like PyTorch's round
    below = ranks.astype(jnp.int64)
    sb = jnp.broadcast_to(s, (qv.shape[0],) + s.shape)
    out = jnp.take_along_axis(sb, below, axis=-1)
    if interpolation in ("linear", "midpoint"):
        w = jnp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        above = jnp.take_along_axis(sb, jnp.ceil(ranks).astype(jnp.int64), axis=-1)
        out = _lerp(out, above, w)
    out = out[..., 0]  # (Q, *batch)
    if keepdim:
        if dim is None:
            out = out.reshape((qv.shape[0],) + (1,) * x.ndim)
        elif x.ndim:
            out = jnp.expand_dims(out, d + 1)
    return out[0] if q.ndim == 0 else out


def _quantile_front(name, ignore_nan):
    def impl(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
        if input.dtype.np not in (jnp.float32, jnp.float64):
            raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
        if isinstance(q, Tensor):
            if q.ndim > 1:
                raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
            if q.dtype != input.dtype:
                raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
            qa = q._array
            if not _meta.no_values(qa) and bool(jnp.any((qa < 0) | (qa > 1))):
                raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        else:
            if not 0 <= q <= 1:
                raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
            q = wrap(_device.place_like(np.asarray(q, input.dtype.np), input._array))
        if input.numel() == 0:
            raise RuntimeError(f"{name}() input tensor must be non-empty")
        if interpolation not in _INTERPOLATIONS:
            raise RuntimeError(
                f"{name}() interpolation must be one of linear, lower, higher, "
                f"midpoint or nearest, but got {interpolation}"
            )
        kwargs = {} if out is None else {"out": out}
        return _quantile(
            input, q, dim, keepdim, interpolation=interpolation, ignore_nan=ignore_nan, **kwargs
        )

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return composite(impl)


quantile = _quantile_front("quantile", False)
nanquantile = _quantile_front("nanquantile", True)


# ---------------------------------------------------------------------------
# Covariance and correlation


def _cov_array(x, correction, fweights, aweights):
    if x.ndim > 2:
        raise ValueError(
            f"cov(): expected input to have two or fewer dimensions but got an "
            f"input with {x.ndim} dimensions"
        )
    out = _dtype.from_np(x.dtype)
    if aweights is not None:  # `input * aweights` promotes
        out = _dtype.promote_types(out, _dtype.from_np(aweights.dtype))
    out_dt = _default_float() if _dtype.category(out) < 2 else out.np
    m = accumulate(x.astype(out_dt))
    m = m.reshape(1, -1) if m.ndim < 2 else m
    n_obs = m.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1:
            raise RuntimeError(
                f"cov(): expected fweights to have one or fewer dimensions but "
                f"got fweights with {fweights.ndim} dimensions"
            )
        if not is_integral(fweights):
            raise RuntimeError(
                f"cov(): expected fweights to have integral dtype but got "
                f"fweights with {c10_name(fweights.dtype)} dtype"
            )
        if fweights.size != n_obs:
            raise RuntimeError(
                f"cov(): expected fweights to have the same numel as there are "
                f"observations in the input but got {fweights.size} != {n_obs}"
            )
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1:
            raise RuntimeError(
                f"cov(): expected aweights to have one or fewer dimensions but "
                f"got aweights with {aweights.ndim} dimensions"
            )
        if not is_float(aweights):
            raise RuntimeError(
                f"cov(): expected aweights to have floating point dtype but got "
                f"aweights with {c10_name(aweights.dtype)} dtype"
            )
        if aweights.size != n_obs:
            raise RuntimeError(
                f"cov(): expected aweights to have the same numel as there are "
                f"observations in the input but got {aweights.size} != {n_obs}"
            )
        if w is not None:
            both = _dtype.promote_types(_dtype.from_np(w.dtype), _dtype.from_np(aweights.dtype))
            w = w.astype(both.np) * aweights.astype(both.np)
        else:
            w = aweights
    if w is None:
        w_sum = jnp.asarray(n_obs, m.dtype)
        avg = jnp.sum(m, axis=1) / w_sum
    else:
        # The weight sums stay in the weights' dtype (float32 aweights sum in float32).
        w_sum = jnp.sum(w, dtype=jnp.int64 if is_integral(w) else w.dtype)
        avg = (jnp.sum(m * w.astype(m.dtype), axis=1) / w_sum).astype(m.dtype)
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * jnp.sum(w * aweights) / w_sum
    else:
        norm = w_sum - correction
    norm = jnp.where(norm <= 0, jnp.zeros((), jnp.real(norm).dtype), norm)
    dev = m - avg[:, None]
    c = dev @ jnp.conj(dev * w.astype(m.dtype) if w is not None else dev).T
    return jnp.squeeze(c / norm).astype(out_dt)


@op(promote=NONE)
def cov(input: T, *, correction=1, fweights: TI = None, aweights: TI = None):
    """Matches `torch.cov`: rows are variables, columns observations."""
    return _cov_array(input, correction, fweights, aweights)


@op(promote=NONE)
def corrcoef(input: T):
    """Matches `torch.corrcoef`: Pearson correlation coefficients, clipped to [-1, 1]."""
    c = _cov_array(input, 1, None, None)
    if c.ndim == 0:
        return c / c
    sd = jnp.sqrt(jnp.real(jnp.diagonal(c)))
    c = c / sd[:, None] / sd[None, :]
    if is_complex(c):
        return jax.lax.complex(jnp.clip(c.real, -1, 1), jnp.clip(c.imag, -1, 1))
    return jnp.clip(c, -1, 1)
