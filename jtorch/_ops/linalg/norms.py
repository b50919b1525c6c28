"""Matrix properties (as PyTorch's `torch.linalg` documentation groups them): vector,
matrix and general norms, the condition number, and `linalg.diagonal`. Determinants are
with the inverses (`solvers.py`), rank with the singular values (`spectral.py`)."""

import math

import jax.numpy as jnp

from ..._dtype import c10_name, from_np, promote_types
from ..._tensor import wrap_dim
from .. import _derivatives
from .._registry import T, composite
from ._common import _check_float, _check_ndim, _check_square, _real_dtype, linalg
from .solvers import _inv_ex

# ---------------------------------------------------------------------------
# Norms


def _norm_dtype(x, dtype, name):
    """The computation dtype: `dtype=` if given (checked as PyTorch does), else x's."""
    _check_float(x, name)
    if dtype is None:
        return x
    dt = dtype.np
    if not (jnp.issubdtype(dt, jnp.floating) or jnp.issubdtype(dt, jnp.complexfloating)):
        raise RuntimeError(
            f"{name}: dtype should be floating point or complex, but got {c10_name(dtype)}"
        )
    kind = "complex" if jnp.issubdtype(x.dtype, jnp.complexfloating) else "real"
    if kind != ("complex" if jnp.issubdtype(dt, jnp.complexfloating) else "real"):
        raise RuntimeError(
            f"{name}: dtype should be {kind} for {kind} inputs, but got {c10_name(dtype)}"
        )
    if promote_types(from_np(x.dtype), dtype) != dtype:
        raise RuntimeError(
            f"{name}: the dtype of the input ({c10_name(x)}) should be convertible without "
            f"narrowing to the specified dtype ({c10_name(dtype)})"
        )
    return x.astype(dt)


def _vector_norm(x, ord, dims, keepdim):
    if ord == math.inf or ord == -math.inf:
        if x.size == 0 and (dims is None or any(x.shape[d] == 0 for d in dims)):
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                f"tensor because the operation does not have an identity"
            )
    if ord < 0 and ord != -math.inf and x.size == 0:
        # (c10 prints the order as a double: -1.0 is "-1", as %g writes it)
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {ord:g} norm on an empty "
            f"tensor because the operation does not have an identity"
        )

    def forward(x):
        a = jnp.abs(x)
        if ord == math.inf or ord == -math.inf:
            return (jnp.max if ord > 0 else jnp.min)(a, axis=dims, keepdims=keepdim)
        if ord == 0:
            return jnp.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
        if ord == 1:
            return jnp.sum(a, axis=dims, keepdims=keepdim)
        if ord == 2:
            return jnp.sqrt(jnp.sum(a * a, axis=dims, keepdims=keepdim))
        return jnp.sum(a**ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)

    # PyTorch's gradient at the singular points (a zero vector, inf-norm ties)
    axes = None if dims is None or not x.ndim else tuple(sorted(dims))
    return _derivatives.vector_norm(x, ord, axes, keepdim, forward)


def _dims(dim, ndim):
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return None
    return tuple(wrap_dim(d, ndim) for d in dims)


@linalg(name="linalg.vector_norm", node="LinalgVectorNormBackward0")
def vector_norm(x: T, ord=2, dim=None, keepdim=False, *, dtype=None):
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' must be Number, not str")
    x = _norm_dtype(x, dtype, "linalg.vector_norm")
    return _vector_norm(
        x, float(ord), _dims(dim, max(x.ndim, 1)) if x.ndim else None, keepdim
    ).astype(_real_dtype(x))


def _max0(x, axis, keepdims):
    """max over `axis`, 0 when it is empty (as PyTorch). Not max(..., initial=0): a maximum of
    0 would tie with the initial value, which takes half the gradient."""
    if x.shape[axis] == 0:
        return jnp.max(x, axis=axis, keepdims=keepdims, initial=0.0)
    return jnp.max(x, axis=axis, keepdims=keepdims)


def _matrix_norm(A, ord, dim, keepdim):
    d0, d1 = (wrap_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return _vector_norm(A, 2.0, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        m = jnp.moveaxis(A, (d0, d1), (-2, -1))
        s = jnp.linalg.svd(m, compute_uv=False)
        r = jnp.sum(s, -1) if ord == "nuc" else _max0(s, -1, False) if ord == 2 else jnp.min(s, -1)
        if keepdim:
            r = jnp.expand_dims(r, tuple(sorted((d0, d1))))
        return r
    # 1/-1: max/min column sum; inf/-inf: max/min row sum (abs with PyTorch's 0 at 0).
    a = _derivatives.abs(A)
    sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
    sums = jnp.sum(a, axis=sum_dim, keepdims=True)
    if ord > 0:
        r = _max0(sums, red_dim, True)
    else:
        r = jnp.min(sums, axis=red_dim, keepdims=True)
    return r if keepdim else jnp.squeeze(r, (d0, d1))


def _check_matrix_ord(ord):
    if ord not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


@linalg(name="linalg.matrix_norm", node="LinalgVectorNormBackward0")
def matrix_norm(A: T, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    _check_ndim(A, "linalg.matrix_norm")
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    _check_matrix_ord(ord)
    A = _norm_dtype(A, dtype, "linalg.matrix_norm")
    return _matrix_norm(A, ord, dim, keepdim).astype(_real_dtype(A))


@linalg(name="linalg.norm", node="LinalgVectorNormBackward0")
def norm(A: T, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        matrix = True
    elif dim is None and ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is not specified but ord is, the input must "
                f"be 1D or 2D. Got {A.ndim}D."
            )
        matrix = A.ndim == 2
    else:
        matrix = False
    if matrix:
        _check_matrix_ord("fro" if ord is None else ord)
        A = _norm_dtype(A, dtype, "linalg.matrix_norm")
        r = _matrix_norm(A, "fro" if ord is None else ord, dim or (-2, -1), keepdim)
        return r.astype(_real_dtype(A))
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    A = _norm_dtype(A, dtype, "linalg.vector_norm")
    o = 2.0 if ord is None else float(ord)
    return _vector_norm(A, o, _dims(dim, max(A.ndim, 1)) if A.ndim else None, keepdim).astype(
        _real_dtype(A)
    )


@linalg(name="linalg.cond")
def cond(A: T, p=None):
    name = "linalg.cond"
    _check_ndim(A, name)
    _check_float(A, name)
    if p is not None and p not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p in (None, 2, -2):
        s = jnp.linalg.svd(A, compute_uv=False)
        big, small = jnp.max(s, -1), jnp.min(s, -1)
        return (small / big if p == -2 else big / small).astype(_real_dtype(A))
    _check_square(A, f"linalg.cond(ord={p})")
    Ainv = _inv_ex(A)[0]
    r = _matrix_norm(A, p, (-2, -1), False) * _matrix_norm(Ainv, p, (-2, -1), False)
    # A singular matrix has infinite condition number (PyTorch returns inf, not nan).
    return jnp.where(jnp.isnan(r), jnp.inf, r).astype(_real_dtype(A))


@composite(name="linalg.diagonal", method=False)
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """Matches `torch.linalg.diagonal` (a view, as `torch.diagonal`)."""
    import jtorch

    return jtorch.diagonal(A, offset=offset, dim1=dim1, dim2=dim2)
