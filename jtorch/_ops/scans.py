"""Scans: cumsum, cumprod, cummax, cummin, logcumsumexp."""

import jax
import jax.numpy as jnp

from .._dtype import c10_name
from .._tensor import wrap_dim
from ._kernel_helpers import accumulate, is_complex, is_float, sum_dtype
from ._registry import NONE, T, name_return_type, op


def _scan_1d_safe(fn, x, dim):
    """Runs `fn(x, axis)` with a 0-d `x` treated as one element (PyTorch allows dim 0 / -1)."""
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        out = fn(x.reshape(1), 0)
        return jax.tree_util.tree_map(lambda a: a.reshape(()), out)
    return fn(x, d)


@op(promote=NONE, inplace=True)
def cumsum(input: T, dim, *, dtype=None):
    """Matches `torch.cumsum`: integer and bool inputs accumulate in int64."""
    out_dt = sum_dtype(input, dtype)
    x = accumulate(input.astype(out_dt))
    return _scan_1d_safe(lambda a, ax: jnp.cumsum(a, axis=ax), x, dim).astype(out_dt)


@op(promote=NONE, inplace=True)
def cumprod(input: T, dim, *, dtype=None):
    """Matches `torch.cumprod`: integer and bool inputs accumulate in int64."""
    out_dt = sum_dtype(input, dtype)
    x = accumulate(input.astype(out_dt))
    return _scan_1d_safe(lambda a, ax: jnp.cumprod(a, axis=ax), x, dim).astype(out_dt)


def _cum_extreme(x, axis, largest):
    """Running (value, index) extreme along `axis`.

    PyTorch takes the later element on ties (`>=`), and a NaN, once seen, wins
    until the next NaN, whose index it then reports.
    """
    idx = jax.lax.broadcasted_iota(jnp.int64, x.shape, axis)
    nan_aware = jnp.issubdtype(x.dtype, jnp.floating)

    def combine(a, b):
        (va, ia), (vb, ib) = a, b
        take_b = (vb >= va) if largest else (vb <= va)
        if nan_aware:
            take_b = (take_b & ~jnp.isnan(va)) | jnp.isnan(vb)
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)

    if x.shape[axis] == 0:
        return x, idx
    return jax.lax.associative_scan(combine, (x, idx), axis=axis)


def _cum_extreme_op(name, largest):
    def impl(input: T, dim):
        if is_complex(input):
            raise RuntimeError(f"\"{name}_cpu\" not implemented for '{c10_name(input.dtype)}'")
        return _scan_1d_safe(lambda a, ax: _cum_extreme(a, ax, largest), input, dim)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`: running values and their (last) indices."
    return name_return_type(op(impl, promote=NONE, returns=("values", "indices")), name)


cummax = _cum_extreme_op("cummax", True)
cummin = _cum_extreme_op("cummin", False)


def logaddexp(a, b):
    """log(exp(a) + exp(b)), stable for infinities and defined for complex numbers."""
    if not is_complex(a):
        return jnp.logaddexp(a, b)
    # PyTorch's complex form: log1p(exp(lo - hi)) + hi, with hi the operand of larger real
    # part. The imaginary part is hi's plus a small angle, not wrapped into (-pi, pi].
    a_hi = jnp.real(a) >= jnp.real(b)
    hi, lo = jnp.where(a_hi, a, b), jnp.where(a_hi, b, a)
    lo_re, hi_re = jnp.real(lo), jnp.real(hi)
    both_inf = jnp.isinf(lo_re) & (lo_re == hi_re)
    general = jnp.log1p(jnp.exp(lo - hi)) + hi
    r = jnp.where(both_inf, jnp.where(lo_re < 0, lo, jnp.log(jnp.exp(lo) + jnp.exp(hi))), general)
    nan = jnp.isnan(a) | jnp.isnan(b)
    return jnp.where(nan, jnp.asarray(complex(jnp.nan, jnp.nan), a.dtype), r)


@op(promote=NONE)
def logcumsumexp(input: T, dim):
    """Matches `torch.logcumsumexp`."""
    if not (is_float(input) or is_complex(input)):
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{c10_name(input.dtype)}'"
        )
    x = accumulate(input)

    def scan(a, ax):
        if a.shape[ax] == 0:
            return a
        return jax.lax.associative_scan(logaddexp, a, axis=ax)

    return _scan_1d_safe(scan, x, dim).astype(input.dtype)
