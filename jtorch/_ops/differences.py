"""Differences and integrals along a dim: diff, gradient, trapezoid, trapz, cumulative_trapezoid."""

import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from ._kernel_helpers import sum_dtype
from ._registry import DEFAULT, INT_TO_FLOAT, NONE, TL, T, composite, op


def _sl(a, dim, start, stop=None):
    """`a` sliced along `dim` (stop None: to the end), like PyTorch's `Tensor.slice`."""
    idx = [slice(None)] * a.ndim
    idx[dim] = slice(start, stop)
    return a[tuple(idx)]


@op(promote=DEFAULT)
def diff(input: T, n=1, dim=-1, prepend: T = None, append: T = None):
    """Matches `torch.diff`: the n-th forward difference along `dim` (`!=` for bools)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    if n == 0:  # PyTorch returns the input itself, ignoring prepend/append
        return input
    parts = []
    for extra in (prepend, input, append):
        if extra is None:
            continue
        if extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        parts.append(extra)
    x = jnp.concatenate(parts, axis=d) if len(parts) > 1 else input
    for _ in range(n):
        if x.shape[d] == 0:
            break
        a, b = _sl(x, d, 1), _sl(x, d, 0, -1)
        x = (a != b) if x.dtype == jnp.bool_ else a - b
    return x


# ---------------------------------------------------------------------------
# gradient


def _gradient_uniform(x, d, h, edge_order):
    center = (_sl(x, d, 2) - _sl(x, d, 0, -2)) / h
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / h
    else:
        first = (-1.5 * _sl(x, d, 0, 1) + 2 * _sl(x, d, 1, 2) - 0.5 * _sl(x, d, 2, 3)) / h
        last = (0.5 * _sl(x, d, -3, -2) - 2 * _sl(x, d, -2, -1) + 1.5 * _sl(x, d, -1)) / h
    return jnp.concatenate([first, center / 2, last], axis=d)


def _gradient_coords(x, d, coords, edge_order):
    """Second-order accurate differences on the nonuniform grid `coords` (numpy's formulas)."""
    shape = [1] * x.ndim
    shape[d] = -1
    dx = jnp.diff(coords)
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _sl(x, d, 0, -2) + b * _sl(x, d, 1, -1) + c * _sl(x, d, 2)
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / dx[0]
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / dx[-1]
    else:
        h0, h1 = dx[0], dx[1]
        first = (
            -(2.0 * h0 + h1) / (h0 * (h0 + h1)) * _sl(x, d, 0, 1)
            + (h0 + h1) / (h0 * h1) * _sl(x, d, 1, 2)
            - h0 / (h1 * (h0 + h1)) * _sl(x, d, 2, 3)
        )
        g1, g0 = dx[-1], dx[-2]
        last = (
            g1 / (g0 * (g1 + g0)) * _sl(x, d, -3, -2)
            - (g1 + g0) / (g1 * g0) * _sl(x, d, -2, -1)
            + (2 * g1 + g0) / (g1 * (g1 + g0)) * _sl(x, d, -1)
        )
    return jnp.concatenate([first, center, last], axis=d)


@op(promote=INT_TO_FLOAT, method=False, name="_gradient")
def _gradient(input: T, coords: TL = (), *, spacing=(), dims=(), edge_order=1):
    out = []
    for i, d in enumerate(dims):
        if coords:
            out.append(_gradient_coords(input, d, coords[i], edge_order))
        else:
            out.append(_gradient_uniform(input, d, spacing[i], edge_order))
    return tuple(out)


@composite(method=False)
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Matches `torch.gradient`: one tensor of central differences per dim, as a tuple."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = tuple(range(input.ndim))
    elif isinstance(dim, int):
        dims = (wrap_dim(dim, input.ndim),)
    else:
        dims = tuple(wrap_dim(d, input.ndim) for d in dim)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
    if spacing is None:
        spacing = 1
    if not isinstance(spacing, (list, tuple)):
        spacing = (spacing,) * len(dims)
    elif len(spacing) == 1 and len(dims) > 1 and not isinstance(spacing[0], Tensor):
        spacing = tuple(spacing) * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or "
            f"it's spacing and dim arguments to have the same length, but got a "
            f"spacing argument of length {len(spacing)} and a dim argument of "
            f"length {len(dims)}."
        )
    if all(isinstance(s, Tensor) and s.ndim == 1 for s in spacing):
        for s, d in zip(spacing, dims):
            if s.shape[0] != input.shape[d]:
                raise RuntimeError(
                    "torch.gradient expected each tensor to be on the same device "
                    "and to have the same size as the dimension it is applied on"
                )
        return _gradient(input, tuple(spacing), dims=dims, edge_order=edge_order)
    values = tuple(s.item() if isinstance(s, Tensor) else s for s in spacing)
    return _gradient(input, (), spacing=values, dims=dims, edge_order=edge_order)


# ---------------------------------------------------------------------------
# Trapezoidal rule


def _float_result(*arrays):
    """PyTorch's result dtype here: the promoted dtype, integers becoming the default float."""
    dt = _dtype.from_np(arrays[0].dtype)
    for a in arrays[1:]:
        dt = _dtype.promote_types(dt, _dtype.from_np(a.dtype))
    if _dtype.category(dt) < 2:
        dt = _dtype.get_default_dtype()
    return dt.np


def _x_along(x, y_ndim, d, n):
    """`x` shaped to broadcast against `y` along dim `d`, as PyTorch's trapezoid views it."""
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y_ndim
        shape[d] = n
        return x.reshape(shape)
    if x.ndim < y_ndim:
        return x.reshape((1,) * (y_ndim - x.ndim) + x.shape)
    return x


def _trapezoid(y, x, dx, dim, cumulative):
    # PyTorch's arithmetic order is kept on purpose: `left + right` and `x[1:] - x[:-1]` run
    # in the input dtypes (uint8 wraps around), sums of integers in int64, then floats.
    if y.dtype == jnp.bool_ or (x is not None and x.dtype == jnp.bool_):
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    d = wrap_dim(dim, y.ndim)
    out_dt = _float_result(y) if x is None else _float_result(y, x)
    if y.shape[d] == 0 and not cumulative:
        return jnp.zeros(y.shape[:d] + y.shape[d + 1 :], y.dtype)
    pair = _sl(y, d, 0, -1) + _sl(y, d, 1)
    if x is None:
        h = 1.0 if dx is None else dx
        if isinstance(h, (complex, bool)):
            raise RuntimeError("trapezoid: Currently, we only support dx as a real number.")
        if cumulative:
            return jnp.cumsum(pair.astype(out_dt) * (h / 2.0), axis=d).astype(out_dt)
        total = jnp.sum(y, axis=d, dtype=sum_dtype(y, None)).astype(out_dt)
        ends = (jnp.take(y, 0, d) + jnp.take(y, -1, d)).astype(out_dt)
        return ((total - ends * 0.5) * h).astype(out_dt)
    xv = _x_along(x, y.ndim, d, y.shape[d])
    step = _sl(xv, d, 1) - _sl(xv, d, 0, -1)
    both = _dtype.promote_types(_dtype.from_np(y.dtype), _dtype.from_np(x.dtype)).np
    prod = pair.astype(both) * step.astype(both)
    if cumulative:
        acc = jnp.cumsum(prod, axis=d, dtype=sum_dtype(prod, None))
    else:
        acc = jnp.sum(prod, axis=d, dtype=sum_dtype(prod, None))
    return (acc.astype(out_dt) / 2.0).astype(out_dt)


@op(promote=NONE, out=False, method=False)
def trapezoid(y: T, x: T = None, *, dx=None, dim=-1):
    """Matches `torch.trapezoid`: the trapezoidal rule along `dim`."""
    if x is not None and dx is not None:
        raise TypeError(
            "trapezoid() received an invalid combination of arguments - got both `x` and `dx`"
        )
    return _trapezoid(y, x, dx, dim, False)


@op(promote=NONE, out=False, method=False)
def trapz(y: T, x: T = None, *, dx=None, dim=-1):
    """Matches `torch.trapz`, the older name of `torch.trapezoid`."""
    return _trapezoid(y, x, dx, dim, False)


@op(promote=NONE, out=False, method=False, node="CumsumBackward0")
def cumulative_trapezoid(y: T, x: T = None, *, dx=None, dim=-1):
    """Matches `torch.cumulative_trapezoid`: running trapezoidal integrals along `dim`."""
    return _trapezoid(y, x, dx, dim, True)
