"""Reductions: sum, mean, ... with `dim`, `keepdim`, `dtype` and torch's result dtypes."""

import functools

import jax.numpy as jnp

from .. import _dtype
from .._tensor import wrap_dim
from ._registry import NONE, T, op

reduction = functools.partial(op, promote=NONE)


def dims_arg(dim, ndim):
    """`dim` as a tuple of non-negative ints (None: all dims)."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return None
        dims = tuple(wrap_dim(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
        return dims
    return (wrap_dim(dim, ndim),)


def sum_dtype(a, dtype):
    """sum/prod accumulate integers and bools in int64, as PyTorch does."""
    if dtype is not None:
        return dtype.np
    if a.dtype == jnp.bool_ or jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.int64
    return a.dtype


@reduction
def sum(input: T, dim=None, keepdim=False, *, dtype=None):
    return jnp.sum(input, axis=dims_arg(dim, input.ndim), keepdims=keepdim,
                   dtype=sum_dtype(input, dtype))


@reduction
def mean(input: T, dim=None, keepdim=False, *, dtype=None):
    dt = dtype.np if dtype is not None else input.dtype
    if not (jnp.issubdtype(dt, jnp.floating) or jnp.issubdtype(dt, jnp.complexfloating)):
        name = _dtype.from_np(dt)._name.capitalize()
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {name}")
    return jnp.mean(input.astype(dt), axis=dims_arg(dim, input.ndim), keepdims=keepdim)
