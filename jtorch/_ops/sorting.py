"""Sorting and selection: sort, argsort, msort, topk, kthvalue, unique, unique_consecutive,
searchsorted, bucketize.

Sorts are stable (PyTorch's CPU sort is, whatever `stable=` says), NaN sorts
as the largest value: last ascending, first descending.
"""

import jax
import jax.numpy as jnp

from .. import _dtype
from .._dtype import c10_name
from .._tensor import wrap_dim
from ._kernel_helpers import is_complex
from ._registry import NONE, TI, T, op


def _check_sortable(a):
    if is_complex(a):
        raise RuntimeError("Sort does not support complex dtypes on CPU")


def sort_along(x, dim, descending):
    """(values, int64 indices) of a stable sort of `x` along `dim` (0-d: itself and 0)."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    idx = jnp.argsort(x, axis=dim, stable=True, descending=descending).astype(jnp.int64)
    return jnp.take_along_axis(x, idx, axis=dim), idx


@op(
    promote=NONE,
    returns=("values", "indices"),
    node=lambda stable: "SortBackward1" if stable else "SortBackward0",
)
def sort(input: T, dim=-1, descending=False, *, stable=False):
    """Matches `torch.sort`."""
    _check_sortable(input)
    return sort_along(input, wrap_dim(dim, input.ndim), descending)


@op(promote=NONE, differentiable=False)
def argsort(input: T, dim=-1, descending=False, *, stable=False):
    """Matches `torch.argsort`."""
    _check_sortable(input)
    return sort_along(input, wrap_dim(dim, input.ndim), descending)[1]


@op(promote=NONE, node="SortBackward0")
def msort(input: T):
    """Matches `torch.msort`: sorted along dim 0."""
    _check_sortable(input)
    return sort_along(input, 0, False)[0]


@op(promote=NONE, returns=("values", "indices"))
def topk(input: T, k, dim=-1, largest=True, sorted=True):
    """Matches `torch.topk`: ties keep their original order; the result is always sorted."""
    _check_sortable(input)
    d = wrap_dim(-1 if dim is None else dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    v, i = sort_along(input, d, largest)
    if input.ndim == 0:
        return v, i
    return jax.lax.slice_in_dim(v, 0, k, axis=d), jax.lax.slice_in_dim(i, 0, k, axis=d)


@op(promote=NONE, returns=("values", "indices"))
def kthvalue(input: T, k, dim=-1, keepdim=False):
    """Matches `torch.kthvalue`: the k-th smallest value (1-based) and its index."""
    _check_sortable(input)
    d = wrap_dim(-1 if dim is None else dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if input.ndim and n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    v, i = sort_along(input, d, False)
    if input.ndim == 0:
        return v, i
    v, i = jnp.take(v, k - 1, axis=d), jnp.take(i, k - 1, axis=d)
    if keepdim:
        v, i = jnp.expand_dims(v, d), jnp.expand_dims(i, d)
    return v, i


# ---------------------------------------------------------------------------
# unique (data-dependent output shapes: these run eagerly)


@op(promote=NONE, jit=False, out=False, differentiable=False)
def unique(input: T, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Matches `torch.unique`: sorted unique values (or slices along `dim`).

    NaNs are all distinct, as in PyTorch.
    """
    if dim is None:
        flat = input.reshape(-1)
        vals, inv, counts = jnp.unique(
            flat, return_inverse=True, return_counts=True, equal_nan=False
        )
        inv = inv.reshape(input.shape)
    else:
        d = wrap_dim(dim, input.ndim)
        if input.shape[d] == 0:
            vals, inv, counts = input, jnp.zeros((0,), jnp.int64), jnp.zeros((0,), jnp.int64)
        else:
            vals, inv, counts = jnp.unique(
                input, return_inverse=True, return_counts=True, axis=d, equal_nan=False
            )
            inv = inv.reshape(-1)
    out = (vals,)
    if return_inverse:
        out += (inv.astype(jnp.int64),)
    if return_counts:
        out += (counts.astype(jnp.int64),)
    return out[0] if len(out) == 1 else out


@op(promote=NONE, jit=False, out=False, differentiable=False)
def unique_consecutive(input: T, return_inverse=False, return_counts=False, dim=None):
    """Matches `torch.unique_consecutive`: collapses runs of equal values (or slices)."""
    if dim is None:
        x = input.reshape(-1)
        d = 0
        changed = x[1:] != x[:-1]
    else:
        d = wrap_dim(dim, input.ndim)
        x = input
        xm = jnp.moveaxis(x, d, 0)
        changed = jnp.any(
            (xm[1:] != xm[:-1]).reshape(xm.shape[0] - 1 if xm.shape[0] else 0, -1), axis=1
        )
    n = x.shape[d] if x.ndim else 0
    keep = jnp.concatenate([jnp.ones((min(n, 1),), bool), changed])
    starts = jnp.nonzero(keep)[0]
    vals = jnp.take(x, starts, axis=d)
    out = (vals,)
    if return_inverse:
        inv = (jnp.cumsum(keep) - 1).astype(jnp.int64)
        out += (inv.reshape(input.shape) if dim is None else inv,)
    if return_counts:
        out += (jnp.diff(jnp.append(starts, n)).astype(jnp.int64),)
    return out[0] if len(out) == 1 else out


# ---------------------------------------------------------------------------
# Binary search


def _common_dtype(boundaries, values):
    """The dtype both sides are compared in: torch's promotion, Python scalars being weak."""
    bd = _dtype.from_np(boundaries.dtype)
    if isinstance(values, (bool, int, float)):
        return _dtype.result_type_of([bd], [], [values]).np
    return _dtype.promote_types(bd, _dtype.from_np(values.dtype)).np


def _search(boundaries, values, right, out_int32, sorter=None):
    dt = _common_dtype(boundaries, values)
    b = boundaries.astype(dt)
    v = jnp.asarray(values, dt)
    if sorter is not None:
        b = jnp.take_along_axis(b, sorter.astype(jnp.int64), axis=-1)
    side = "right" if right else "left"
    out_dt = jnp.int32 if out_int32 else jnp.int64
    if b.ndim == 1:
        return jnp.searchsorted(b, v, side=side).astype(out_dt)
    if b.size == 0 or v.size == 0:
        return jnp.zeros(v.shape, out_dt)
    lead = b.shape[:-1]
    b2 = b.reshape(-1, b.shape[-1])
    v2 = v.reshape(b2.shape[0], -1)
    r = jax.vmap(lambda s, q: jnp.searchsorted(s, q, side=side))(b2, v2)
    return r.reshape(lead + v.shape[-1:]).astype(out_dt)


@op(promote=NONE, method=False, differentiable=False)
def searchsorted(
    sorted_sequence: T, input: T, *, out_int32=False, right=False, side=None, sorter: TI = None
):
    """Matches `torch.searchsorted`: insertion points of `input` in the innermost dim."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, "
                "got side of left while right was True"
            )
        right = side == "right"
    b = sorted_sequence
    v_shape = jnp.shape(input)
    if b.ndim != 1 and (len(v_shape) != b.ndim or tuple(v_shape[:-1]) != b.shape[:-1]):
        raise RuntimeError(
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
            f"the first N-1 dimensions of boundaries tensor and input value tensor "
            f"must match, but we got boundaries tensor {list(b.shape)} and input "
            f"value tensor {list(v_shape)}"
        )
    if sorter is not None:
        if sorter.shape != b.shape:
            raise RuntimeError(
                f"torch.searchsorted(): boundary and sorter must have the same "
                f"size, but got boundary tensor {list(b.shape)}and got sorter "
                f"tensor {list(sorter.shape)}"
            )
        if sorter.dtype != jnp.int64:
            raise RuntimeError(
                f"torch.searchsorted(): sorter must be a tensor of long dtype but "
                f"got dtype {c10_name(sorter.dtype)}"
            )
    return _search(b, input, right, out_int32, sorter)


@op(promote=NONE, differentiable=False)
def bucketize(input: T, boundaries: T, *, out_int32=False, right=False):
    """Matches `torch.bucketize`: the bucket of each value among 1-D `boundaries`."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _search(boundaries, input, right, out_int32)
