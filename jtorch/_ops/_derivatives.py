"""PyTorch's derivatives where jax's conventions differ.

jax and PyTorch agree wherever a function is differentiable. At kinks, zeros and ties
each picks a convention: jax takes d|x|/dx = 1 at 0 and splits `maximum`'s gradient
between equal operands; PyTorch takes sgn(0) = 0, gives `clamp`'s bounds to the input,
masks a norm's gradient at a zero vector. An implementation whose PyTorch formula
differs wraps its jax function with `with_jvp`, giving PyTorch's derivative as a JVP
(linear in the tangents): jax transposes it for the backward, forward-mode AD uses it
as is, and the rule sits next to the op it belongs to.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero


def with_jvp(fn, tangent):
    """`fn` with the derivative `tangent(primals, tangents, out) -> out's tangent`.

    `fn` takes array arguments only (statics are closed over by the caller, which
    builds the wrapper while tracing its kernel). A tangent is None for an input that
    carries none (a Python-number exponent, a bound that does not require grad): its
    term must be left out, not multiplied by zero, or an infinite coefficient would put
    nan in forward-mode results. `linear` sums the terms that are there.
    """
    f = jax.custom_jvp(fn)

    def jvp(primals, tangents):
        out = f(*primals)
        tangents = tuple(None if type(t) is SymbolicZero else t for t in tangents)
        if all(t is None for t in tangents):
            return out, jax.tree_util.tree_map(jnp.zeros_like, out)
        return out, tangent(primals, tangents, out)

    f.defjvp(jvp, symbolic_zeros=True)
    return f


def linear(out, *terms):
    """sum(coef * t) over the `(coef, t)` terms whose tangent `t` is not None, as `out`'s
    tangent (its shape and dtype)."""
    total = None
    for coef, t in terms:
        if t is None:
            continue
        v = t if coef is None else coef * t
        total = v if total is None else total + v
    if total is None:
        return jnp.zeros_like(out)
    return jnp.broadcast_to(total, out.shape).astype(out.dtype)


def masked(keep, coef):
    """`coef` where `keep`, else 0: a derivative's coefficient masked from the primal.

    Masking the coefficient, not the tangent, keeps the transposed rule (the backward)
    from multiplying a masked-out zero by an infinite coefficient."""
    coef = jnp.asarray(coef)
    return jnp.where(keep, coef, jnp.zeros((), coef.dtype))


def sgn(x):
    """PyTorch's `sgn`: x / |x| (0 at 0) for complex values, `sign` for real ones."""
    if jnp.iscomplexobj(x):
        a = jnp.abs(x)
        return jnp.where(a == 0, jnp.zeros((), x.dtype), x / jnp.where(a == 0, 1, a))
    return jnp.sign(x)


def re_dot(s, t):
    """Re(conj(s) * t): the real tangent of |x| along `t` for unit direction `s`."""
    return jnp.real(jnp.conj(s) * t) if jnp.iscomplexobj(s) or jnp.iscomplexobj(t) else s * t


def vector_norm(x, p: float, axes, keepdim: bool, forward):
    """`forward(x)`, a p-norm of `x` over `axes`, with PyTorch's gradient (`norm_jvp`).

    PyTorch's formula masks the singular points: the gradient at a zero vector is 0 for
    p >= 1, zero entries get 0 for p < 1, ties of the inf-norm share the gradient evenly.
    """

    def tangent(primals, tangents, norm):
        (x,), (t,) = primals, tangents
        n = norm
        if not keepdim and x.ndim:
            n = jnp.expand_dims(norm, tuple(range(x.ndim)) if axes is None else axes)
        n = n.astype(jnp.real(x).dtype)
        a = jnp.abs(x)
        zero = jnp.zeros((), n.dtype)

        def total(v):
            return jnp.sum(v, axis=axes, keepdims=keepdim)

        if p == 0:
            return jnp.zeros_like(norm)

        def over(m):
            """1 / norm ** m, 0 where the norm is 0 (the masked_fill of PyTorch's formula),
            computed from the primal so that the transposed tangent meets no 0 / 0."""
            safe = jnp.where(norm == 0, jnp.ones((), norm.dtype), norm)
            return jnp.where(norm == 0, jnp.zeros((), norm.dtype), 1 / safe**m)

        if p == 1:
            r = total(re_dot(sgn(x), t))
        elif p == 2:
            r = total(re_dot(x, t)) * over(1)
        elif math.isinf(p):
            eq = (a == n) | (jnp.isnan(x) & jnp.isnan(n))
            count = jnp.sum(eq, axis=axes, keepdims=True).astype(n.dtype)
            r = total(re_dot(jnp.where(eq, sgn(x) / count, zero), t))
        elif p < 1:
            w = jnp.where(x == 0, zero, a ** (p - 1))
            r = total(re_dot(w * sgn(x), t)) * norm ** (1 - p)
        elif p < 2:
            r = total(re_dot(a ** (p - 1) * sgn(x), t)) * over(p - 1)
        else:
            r = total(re_dot(a ** (p - 2) * x, t)) * over(p - 1)
        return r.astype(norm.dtype)

    return with_jvp(forward, tangent)(x)


def masked_unary(fn, deriv, keep):
    """`fn(x)` whose derivative is `deriv(x)` where `keep(x)`, else exactly 0 (PyTorch's
    `where(mask, grad * d, 0)`: no 0 * inf = nan outside the mask)."""

    def tangent(primals, tangents, out):
        (x,), (t,) = primals, tangents
        return (t * masked(keep(x), deriv(x))).astype(out.dtype)

    return with_jvp(fn, tangent)


def evenly_distributed(x, forward):
    """`forward(x)`, a value taken from `x` (its max, min or median), whose gradient PyTorch
    shares evenly among the elements equal to it (NaN ones when it is NaN):
    `evenly_distribute_backward`. jax gives it to one element, or splits it over ties
    but not over NaN."""

    def tangent(primals, tangents, value):
        (x,), (t,) = primals, tangents
        mask = jnp.where(jnp.isnan(value), jnp.isnan(x), x == value)
        count = jnp.sum(mask).astype(value.dtype)
        return jnp.sum(jnp.where(mask, t, jnp.zeros((), t.dtype))).astype(value.dtype) / count

    return with_jvp(forward, tangent)(x)


# |x| with PyTorch's derivative sgn(x): 0 at 0 (jax's is 1).
abs = with_jvp(jnp.abs, lambda p, t, out: re_dot(sgn(p[0]), t[0]).astype(out.dtype))
