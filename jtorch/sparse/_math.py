"""Sparse computations, written as jtorch ops on the value tensors (so autograd sees them).

Index bookkeeping runs on the host, as PyTorch's CPU kernels do it: coalescing sorts the
linearised indices, `add` walks both index lists the way PyTorch's merge does (so `_nnz()`
and `is_coalesced()` come out as PyTorch's); value arithmetic is `index_add`, gathers and
pointwise ops on the values. Products do no host work: they are traceable.
"""

from __future__ import annotations

import math
import types

import jax
import numpy as np

from .. import _device, _dtype
from .._layout import sparse_coo, sparse_csr
from .._ops._registry import NAMESPACES
from .._tensor import Tensor, wrap
from ..autograd import grad_mode
from ._tensor import SparseTensor

T = types.SimpleNamespace(**NAMESPACES[""])  # the torch functions, as jtorch declares them


def host(t: Tensor) -> np.ndarray:
    """A tensor's elements on the host (index bookkeeping needs them concretely)."""
    arr = t.detach()._array
    if isinstance(arr, jax.core.Tracer):
        raise RuntimeError(
            "this sparse operation needs concrete indices (it coalesces or "
            "merges on the host) and cannot be traced by jtorch.compile"
        )
    return np.asarray(arr)


def long_tensor(a, like: Tensor | None = None) -> Tensor:
    """An int64 tensor of host data, on `like`'s device."""
    t = wrap(_device.from_host(np.asarray(a, dtype=np.int64)))
    return t if like is None or like.device == t.device else t.to(like.device)


def keys(idx: np.ndarray, sizes) -> np.ndarray:
    """Row-major linear positions of COO indices over the sparse dims `sizes`."""
    k = np.zeros(idx.shape[1], dtype=np.int64)
    for d, n in enumerate(sizes):
        k = k * int(n) + idx[d]
    return k


def unravel(k: np.ndarray, sizes) -> np.ndarray:
    if len(sizes) == 0:
        return np.zeros((0, k.size), dtype=np.int64)
    return (
        np.stack(np.unravel_index(k, tuple(int(n) for n in sizes))).astype(np.int64)
        if k.size
        else np.zeros((len(sizes), 0), dtype=np.int64)
    )


# ---------------------------------------------------------------------------
# Layout conversions


def coo_to_dense(s: SparseTensor) -> Tensor:
    """The dense tensor: duplicates add up (`index_add`), so autograd reaches the values."""
    sd = s.sparse_dim()
    sizes, dense = s._size[:sd], s._size[sd:]
    n = math.prod(sizes)
    flat = T.zeros((n,) + dense, dtype=s.dtype, device=s.device)
    if s._nnz() == 0 and not s._vals.requires_grad:
        return flat.reshape(s._size)
    if sd == 1:
        lin = s._idx[0]
    else:
        strides = np.cumprod((1,) + tuple(sizes[:0:-1]))[::-1].copy()
        lin = (s._idx * long_tensor(strides, s._idx)[:, None]).sum(0)
    return flat.index_add(0, lin, s._vals).reshape(s._size)


def dense_to_coo(x: Tensor, sparse_dim: int | None = None) -> SparseTensor:
    """`x.to_sparse(sparse_dim)`: the entries (over the leading `sparse_dim` dims) with any
    non-zero element, in order: a coalesced tensor."""
    sd = x.ndim if sparse_dim is None else sparse_dim
    if not 0 < sd <= x.ndim if x.ndim else sd != 0:
        raise RuntimeError(f"sparse_dim argument must be in [0, {x.ndim}] range, but {sd} is given")
    a = host(x)
    nonzero = a != 0
    if sd < x.ndim:
        nonzero = nonzero.reshape(a.shape[:sd] + (-1,)).any(-1)
    idx = np.stack(np.nonzero(nonzero)).astype(np.int64) if sd else np.zeros((0, 1), np.int64)
    it = long_tensor(idx, x)
    vals = x[tuple(it[d] for d in range(sd))] if sd else x.unsqueeze(0)
    # PyTorch's two overloads: `to_sparse()` and `to_sparse(sparse_dim)`
    node = "ToSparseBackward1" if sparse_dim is None else "ToSparseBackward0"
    return SparseTensor._coo(it, vals, tuple(x.shape), True, node)


def coalesce(s: SparseTensor) -> SparseTensor:
    """Matches `Tensor.coalesce`: indices sorted and unique, duplicates summed."""
    s._need_coo("coalesce")
    if s._coal:
        return s
    sd = s.sparse_dim()
    k = keys(host(s._idx), s._size[:sd])
    uniq, inverse = np.unique(k, return_inverse=True)
    vals = s._vals
    out = T.zeros((uniq.size,) + tuple(vals.shape[1:]), dtype=vals.dtype, device=vals.device)
    if k.size:
        out = out.index_add(0, long_tensor(inverse.reshape(-1), vals), vals)
    return SparseTensor._coo(
        long_tensor(unravel(uniq, s._size[:sd]), s._idx), out, s._size, True, "CoalesceBackward0"
    )


def coo_to_csr(s: SparseTensor) -> SparseTensor:
    if s.ndim != 2 or s.dense_dim():
        raise RuntimeError(
            "jtorch supports 2-D sparse CSR tensors without dense dims (got "
            f"a {s.ndim}-D COO tensor with {s.dense_dim()} dense dims)"
        )
    c = coalesce(s)
    rows = host(c._idx[0])
    crow = np.zeros(s._size[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=s._size[0]), out=crow[1:])
    return SparseTensor._csr(
        long_tensor(crow, c._idx), c._idx[1].clone(), c._vals, s._size, c._node
    )


def csr_rows(s: SparseTensor) -> Tensor:
    """The row of each CSR entry."""
    crow = host(s._crow)
    return long_tensor(np.repeat(np.arange(crow.size - 1), np.diff(crow)), s._crow)


def csr_to_coo(s: SparseTensor) -> SparseTensor:
    idx = T.stack([csr_rows(s), s._idx])
    return SparseTensor._coo(idx, s._vals, s._size, True, s._node)


def as_coo(s: SparseTensor) -> SparseTensor:
    return csr_to_coo(s) if s._lay is sparse_csr else s


def to_dense(s: SparseTensor) -> Tensor:
    return coo_to_dense(as_coo(s))


def same_layout(result: SparseTensor, like: SparseTensor) -> SparseTensor:
    """A COO result back in `like`'s layout."""
    return coo_to_csr(result) if like._lay is sparse_csr else result


# ---------------------------------------------------------------------------
# Products


def _mm_check(a_shape, b_shape) -> None:
    if a_shape[1] != b_shape[0]:
        raise RuntimeError(
            f"addmm: Argument #3 (dense): Expected dim 0 size {a_shape[1]}, got {b_shape[0]}"
        )


def sparse_dense_mm(s: SparseTensor, d: Tensor, reduce: str = "sum") -> Tensor:
    """`s @ d` for a 2-D sparse `s` and a 1-D or 2-D dense `d`: a gather of `d`'s rows, scaled
    by the values and added into the output rows."""
    if s.ndim != 2 or s.dense_dim():
        raise RuntimeError(
            f"sparse matrix multiplication needs a 2-D sparse matrix (got "
            f"{s.ndim} dims, {s.dense_dim()} of them dense)"
        )
    if d.ndim not in (1, 2):
        raise RuntimeError("expand is unsupported for Sparse tensors")
    _mm_check(s._size, tuple(d.shape))
    if s.dtype is not d.dtype:
        raise RuntimeError(
            f"expected scalar type {_dtype.c10_name(s.dtype)} but found {_dtype.c10_name(d.dtype)}"
        )
    rows, cols = (csr_rows(s), s._idx) if s._lay is sparse_csr else (s._idx[0], s._idx[1])
    m = s._size[0]
    gathered = d.index_select(0, cols)
    contrib = gathered * (s._vals[:, None] if d.ndim == 2 else s._vals)
    out = T.zeros((m,) + tuple(d.shape[1:]), dtype=d.dtype, device=d.device)
    if reduce == "sum":
        return out.index_add(0, rows, contrib)
    if reduce == "mean":
        counts = T.zeros(m, dtype=d.dtype, device=d.device).index_add(
            0, rows, T.ones(rows.shape[0], dtype=d.dtype, device=d.device)
        )
        total = out.index_add(0, rows, contrib)
        return total / counts.clamp(min=1).reshape((m,) + (1,) * (d.ndim - 1))
    if reduce in ("amax", "amin"):  # rows without entries stay 0, as in PyTorch
        idx = rows.reshape((-1,) + (1,) * (d.ndim - 1)).expand(contrib.shape)
        return out.scatter_reduce(0, idx, contrib, reduce, include_self=False)
    raise RuntimeError(f"reduce argument must be either sum, mean, amax or amin, got {reduce}")


def dense_sparse_mm(d: Tensor, s: SparseTensor) -> Tensor:
    """`d @ s` = (sᵀ dᵀ)ᵀ."""
    if d.ndim == 1:
        return sparse_dense_mm(transpose(as_coo(s), 0, 1), d)
    return sparse_dense_mm(transpose(as_coo(s), 0, 1), d.t()).t()


def sparse_sparse_mm(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """`a @ b` for two 2-D sparse matrices: a coalesced sparse result with an entry wherever
    some product term lands."""
    a, b = coalesce(as_coo(a)), coalesce(as_coo(b))
    _mm_check(a._size, b._size)
    ai, bi = host(a._idx), host(b._idx)
    # join a's column with b's row
    order = np.argsort(bi[0], kind="stable")
    starts = np.searchsorted(bi[0][order], ai[1], side="left")
    ends = np.searchsorted(bi[0][order], ai[1], side="right")
    counts = ends - starts
    pa = np.repeat(np.arange(ai.shape[1]), counts)
    pb = order[
        np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)])
        if counts.sum()
        else np.zeros(0, np.int64)
    ].astype(np.int64)
    out_size = (a._size[0], b._size[1])
    k = ai[0][pa] * out_size[1] + bi[1][pb]
    uniq, inverse = np.unique(k, return_inverse=True)
    terms = a._vals.index_select(0, long_tensor(pa, a._vals)) * b._vals.index_select(
        0, long_tensor(pb, b._vals)
    )
    vals = T.zeros((uniq.size,), dtype=a.dtype, device=a.device)
    if pa.size:
        vals = vals.index_add(0, long_tensor(inverse.reshape(-1), vals), terms)
    return SparseTensor._coo(
        long_tensor(unravel(uniq, out_size), a._idx), vals, out_size, True, "SparseMmBackward0"
    )


def matmul(a, b):
    """`a @ b` with one or both operands sparse (`torch.mm`, `matmul`, `spmm`, `sparse.mm`)."""
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        return sparse_sparse_mm(a, b)
    if isinstance(a, SparseTensor):
        return sparse_dense_mm(a, b)
    return dense_sparse_mm(a, b)


# ---------------------------------------------------------------------------
# Elementwise


def scale(s: SparseTensor, factor, node: str) -> SparseTensor:
    """The values times a scalar (or any value-wise op that keeps zeros and the pattern)."""
    return s._like(s._vals * factor, node)


def map_values(s: SparseTensor, fn, node: str) -> SparseTensor:
    """A zero-preserving unary op: PyTorch coalesces first, then maps the values."""
    c = coalesce(s) if s._lay is sparse_coo else s
    return c._like(fn(c._vals), node, coalesced=True if s._lay is sparse_coo else None)


def _merge_positions(ti: np.ndarray, si: np.ndarray):
    """PyTorch's add walk over two COO index lists (as stored, coalesced or not): where each
    entry of `t` and of `src` lands in the result, and the result's indices."""
    nt, ns = ti.shape[1], si.shape[1]
    tpos, spos = np.empty(nt, np.int64), np.empty(ns, np.int64)
    out = []
    t_i = s_i = r = 0
    tl, sl = ti.T.tolist(), si.T.tolist()
    while t_i < nt or s_i < ns:
        if t_i >= nt:
            cmp = -1
        elif s_i >= ns:
            cmp = 1
        else:
            a, b = tl[t_i], sl[s_i]
            cmp = 1 if a < b else (-1 if a > b else 0)  # lexicographic, as the C++ loop
        if cmp >= 0:
            tpos[t_i] = r
            out.append(tl[t_i])
            t_i += 1
        if cmp <= 0:
            spos[s_i] = r
            if cmp < 0:
                out.append(sl[s_i])
            s_i += 1
        r += 1
    idx = np.asarray(out, dtype=np.int64).T.reshape(ti.shape[0], r)
    return tpos, spos, idx


def add_sparse(t: SparseTensor, src: SparseTensor, alpha=1) -> SparseTensor:
    """Matches `torch.add(sparse, sparse, alpha=)`: PyTorch's merge of the two index lists."""
    if t._size != src._size:
        raise RuntimeError(
            f"add: expected sizes of 'self' and 'other' to match, but "
            f"{list(t._size)} != {list(src._size)}"
        )
    if t._lay is sparse_csr or src._lay is sparse_csr:
        return same_layout(coalesce(add_sparse(as_coo(t), as_coo(src), alpha)), t)
    dt = _dtype.promote_types(t.dtype, src.dtype)
    sv = src._vals if alpha == 1 else src._vals * alpha
    if src._nnz() == 0:
        return t._like(t._vals.to(dt).clone(), "AddBackward0")
    if t._nnz() == 0:
        return src._like(sv.to(dt), "AddBackward0")
    tpos, spos, idx = _merge_positions(host(t._idx), host(src._idx))
    vals = T.zeros((idx.shape[1],) + tuple(t._vals.shape[1:]), dtype=dt, device=t.device)
    vals = vals.index_add(0, long_tensor(tpos, vals), t._vals.to(dt))
    vals = vals.index_add(0, long_tensor(spos, vals), sv.to(dt))
    return SparseTensor._coo(
        long_tensor(idx, t._idx), vals, t._size, t._coal and src._coal, "AddBackward0"
    )


def add_dense_sparse(d: Tensor, s: SparseTensor, alpha=1) -> Tensor:
    """`dense + sparse` (a dense result)."""
    if tuple(d.shape) != s._size:
        raise RuntimeError(
            f"add: expected 'self' and 'other' to have same size, but self has "
            f"size {list(d.shape)} while other has size {list(s._size)} (FYI: "
            "dense-sparse addition does not currently support broadcasting)"
        )
    dense = to_dense(s)
    return d + (dense if alpha == 1 else dense * alpha)


def _lookup(c: SparseTensor, idx: np.ndarray) -> Tensor:
    """The values of coalesced `c` at the COO positions `idx` (zero where `c` has none)."""
    sd = c.sparse_dim()
    ck = keys(host(c._idx), c._size[:sd])
    qk = keys(idx, c._size[:sd])
    pos = np.searchsorted(ck, qk)
    found = (
        (pos < ck.size) & (ck[np.minimum(pos, max(ck.size - 1, 0))] == qk)
        if ck.size
        else np.zeros(qk.size, bool)
    )
    padded = T.cat(
        [c._vals, T.zeros((1,) + tuple(c._vals.shape[1:]), dtype=c.dtype, device=c.device)]
    )
    return padded.index_select(0, long_tensor(np.where(found, pos, ck.size), c._vals))


def mul_sparse(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """Matches `sparse * sparse`: the intersection when both are coalesced; otherwise the
    pattern of an uncoalesced operand (the one, or the smaller, or `other` on a tie) with
    zeros kept, as PyTorch's intersection kernel gives."""
    if a._size != b._size:
        raise RuntimeError(
            f"mul(sparse, sparse): expected 'self' and 'other' to have same "
            f"size, but {list(a._size)} != {list(b._size)}"
        )
    if a._lay is sparse_csr or b._lay is sparse_csr:
        return same_layout(mul_sparse(coalesce(as_coo(a)), coalesce(as_coo(b))), a)
    if a._coal and b._coal:
        ak, bk = (
            keys(host(a._idx), a._size[: a.sparse_dim()]),
            keys(host(b._idx), b._size[: b.sparse_dim()]),
        )
        common, ia, ib = np.intersect1d(ak, bk, return_indices=True)
        vals = a._vals.index_select(0, long_tensor(ia, a._vals)) * b._vals.index_select(
            0, long_tensor(ib, b._vals)
        )
        return SparseTensor._coo(
            long_tensor(unravel(common, a._size[: a.sparse_dim()]), a._idx),
            vals,
            a._size,
            True,
            "MulBackward0",
        )
    if a._coal != b._coal:
        pattern, other = (b, a) if a._coal else (a, b)
    else:
        pattern, other = (a, b) if a._nnz() < b._nnz() else (b, a)
    other_vals = _lookup(coalesce(other), host(pattern._idx))
    return SparseTensor._coo(
        pattern._idx, pattern._vals * other_vals, a._size, False, "MulBackward0"
    )


def mul_dense(s: SparseTensor, d: Tensor) -> SparseTensor:
    """`sparse * dense` (either order): the sparse pattern with the dense elements there."""
    if d.ndim == 0:
        return scale(s, d, "MulBackward0")
    if tuple(d.shape) != s._size:
        raise RuntimeError(
            f"mul(sparse, dense): expected 'self' and 'other' to have same "
            f"size, but {list(s._size)} != {list(d.shape)}"
        )
    c = as_coo(s)
    picked = d[tuple(c._idx[k] for k in range(c.sparse_dim()))]
    return same_layout(
        SparseTensor._coo(c._idx, c._vals * picked, c._size, c._coal, "MulBackward0"), s
    )


def transpose(s: SparseTensor, d0: int, d1: int) -> SparseTensor:
    """Swaps two sparse dims (PyTorch marks the result uncoalesced)."""
    from .._tensor import wrap_dim

    d0, d1 = wrap_dim(d0, s.ndim), wrap_dim(d1, s.ndim)
    if s._lay is sparse_csr:
        raise NotImplementedError(
            "transposing a CSR tensor gives PyTorch's CSC layout, which "
            "jtorch does not have; convert with .to_sparse() first"
        )
    sd = s.sparse_dim()
    if d0 >= sd or d1 >= sd:
        raise RuntimeError(
            "transpose of dense dimensions of a sparse tensor is not supported by jtorch"
        )
    perm = list(range(sd))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    size = list(s._size)
    size[d0], size[d1] = size[d1], size[d0]
    idx = s._idx[perm] if d0 != d1 else s._idx
    return SparseTensor._coo(idx, s._vals, size, s._coal and d0 == d1, "TransposeBackward0")


# ---------------------------------------------------------------------------
# Reductions and softmax


def sum_(s: SparseTensor, dim=None, dtype=None, keepdim: bool = False) -> Tensor:
    """Matches `torch.sparse.sum`: dense when every sparse dim is reduced, else a
    coalesced sparse tensor over the kept dims."""
    c = as_coo(s)
    if keepdim and dim is not None:
        out = sum_(s, dim, dtype)
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        from .._tensor import wrap_dim

        dims = sorted({wrap_dim(d, c.ndim) for d in dims})
        sd = c.sparse_dim()
        if not isinstance(out, SparseTensor):  # every sparse dim reduced: one entry
            vals = out.reshape((1,) + tuple(out.shape))
            for d in dims:
                if d >= sd:
                    vals = vals.unsqueeze(d - sd + 1)
            size = [1 if d in dims else n for d, n in enumerate(c._size)]
            return SparseTensor._coo(
                long_tensor(np.zeros((sd, 1)), c._idx), vals, size, False, "SparseSumBackward0"
            )
        kept = [d for d in range(sd) if d not in dims]
        rows, it = [], iter(range(len(kept)))
        for d in range(sd):
            rows.append(
                out._idx[next(it)]
                if d not in dims
                else T.zeros(out._nnz(), dtype=_dtype.int64, device=out.device)
            )
        vals = out._vals
        for d in dims:
            if d >= sd:
                vals = vals.unsqueeze(d - sd + 1)
        size = [1 if d in dims else n for d, n in enumerate(c._size)]
        return SparseTensor._coo(T.stack(rows), vals, size, False, "SparseSumBackward0")
    vals = c._vals if dtype is None else c._vals.to(dtype)
    if dim is None:
        return vals.sum()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    from .._tensor import wrap_dim

    dims = sorted({wrap_dim(d, c.ndim) for d in dims})
    sd = c.sparse_dim()
    sparse_r = [d for d in dims if d < sd]
    dense_r = [d - sd + 1 for d in dims if d >= sd]
    if dense_r:
        vals = vals.sum(dense_r)
    kept = [d for d in range(sd) if d not in sparse_r]
    if not kept:
        return vals.sum(0)
    kept_sizes = [c._size[d] for d in kept]
    k = keys(host(c._idx)[kept], kept_sizes)
    uniq, inverse = np.unique(k, return_inverse=True)
    out = T.zeros((uniq.size,) + tuple(vals.shape[1:]), dtype=vals.dtype, device=vals.device)
    if k.size:
        out = out.index_add(0, long_tensor(inverse.reshape(-1), vals), vals)
    size = kept_sizes + [n for d, n in enumerate(c._size) if d >= sd and d not in dims]
    return SparseTensor._coo(
        long_tensor(unravel(uniq, kept_sizes), c._idx), out, size, True, "SparseSumBackward0"
    )


def softmax(s: SparseTensor, dim: int, log: bool = False, dtype=None) -> SparseTensor:
    """Matches `torch.sparse.softmax`/`log_softmax`: over the specified entries of each
    line along `dim` (unspecified entries count as -inf); same pattern, coalesced."""
    from .._tensor import wrap_dim

    c = coalesce(as_coo(s))
    dim = wrap_dim(dim, c.ndim)
    vals = c._vals if dtype is None else c._vals.to(dtype)
    out_dtype = vals.dtype
    if out_dtype in (_dtype.float32, _dtype.float16, _dtype.bfloat16):
        vals = vals.to(_dtype.float64)  # PyTorch's CPU kernel accumulates in double
    sd = c.sparse_dim()
    node = "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0"
    if dim >= sd:
        fn = T.log_softmax if log else T.softmax
        return c._like(fn(vals, dim - sd + 1).to(out_dtype), node, coalesced=True)
    others = [d for d in range(sd) if d != dim]
    k = keys(host(c._idx)[others], [c._size[d] for d in others])
    _, group = np.unique(k, return_inverse=True)
    n_groups = int(group.max()) + 1 if group.size else 0
    g = long_tensor(group.reshape(-1), vals)
    with grad_mode.no_grad():  # the max only stabilises: softmax does not depend on it
        gi = g.reshape((-1,) + (1,) * (vals.ndim - 1)).expand(vals.shape)
        peak = T.full(
            (n_groups,) + tuple(vals.shape[1:]), -math.inf, dtype=vals.dtype, device=vals.device
        ).scatter_reduce(0, gi, vals.detach(), "amax")
    shifted = vals - peak.index_select(0, g)
    e = shifted.exp()
    total = T.zeros(
        (n_groups,) + tuple(vals.shape[1:]), dtype=vals.dtype, device=vals.device
    ).index_add(0, g, e)
    out = shifted - total.log().index_select(0, g) if log else e / total.index_select(0, g)
    return c._like(out.to(out_dtype), node, coalesced=True)


def sparse_mask(d: Tensor, mask: SparseTensor) -> SparseTensor:
    """Matches `Tensor.sparse_mask`: `d`'s elements at `mask`'s (coalesced) pattern."""
    if tuple(d.shape) != mask._size:
        raise RuntimeError(
            f"sparse_mask(): operands have incompatible sizes; self has size "
            f"{list(d.shape)} but mask has size {list(mask._size)}"
        )
    c = coalesce(as_coo(mask))
    picked = d[tuple(c._idx[k] for k in range(c.sparse_dim()))]
    return same_layout(
        SparseTensor._coo(c._idx, picked, c._size, True, "SparseMaskBackward0"), mask
    )


def empty_like(s: SparseTensor, dtype=None) -> SparseTensor:
    """An all-zero sparse tensor of `s`'s size (nnz 0, coalesced)."""
    sd = s.sparse_dim()
    vals = T.zeros((0,) + s._size[sd:], dtype=dtype or s.dtype, device=s.device)
    out = SparseTensor._coo(long_tensor(np.zeros((sd, 0)), s._vals), vals, s._size, True)
    return same_layout(out, s) if s._lay is sparse_csr else out
