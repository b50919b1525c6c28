"""Determinants, inverses and solves: det, slogdet, inv, solve, solve_triangular, lstsq,
and the tensor forms tensorinv and tensorsolve (PyTorch's "Solvers", "Inverses" and "Tensor
Operations" of `torch.linalg`)."""

import math

import jax
import jax.numpy as jnp

from ..._dtype import c10_name
from ..._tensor import wrap_dim
from .._registry import T, name_return_type
from ._common import (
    _broadcast_batch,
    _check_float,
    _check_ndim,
    _check_same,
    _check_square,
    _matmul,
    _real_dtype,
    _square_float,
    legacy,
    linalg,
)
from .checks import (
    SINGULAR,
    SOLVE_SINGULAR,
    info_check,
    info_if_not_finite,
    own_info,
    tensorinv_info,
)
from .decompositions import _lu, _lu_solve

# ---------------------------------------------------------------------------
# Determinants and inverses


def _slogdet(a):
    s, l = jnp.linalg.slogdet(a)
    return s.astype(a.dtype), l.astype(_real_dtype(a))


@linalg(name="linalg.det", node="LinalgDetBackward0")
def linalg_det(A: T):
    _square_float(A, "linalg.det")
    return _det(A)


@legacy(node="LinalgDetBackward0")  # (torch.det is the linalg kernel, as is each legacy op here)
def det(input: T):
    _square_float(input, "linalg.det")
    return _det(input)


def _det(A):
    if A.shape[-1] == 0:  # jax's det rule cannot differentiate an empty matrix
        return jnp.ones(A.shape[:-2], A.dtype)
    return jnp.linalg.det(A)


@linalg(name="linalg.slogdet", returns=("sign", "logabsdet"), node="LinalgSlogdetBackward0")
def linalg_slogdet(A: T):
    _square_float(A, "linalg.slogdet")
    return _slogdet(A)


name_return_type(linalg_slogdet, "linalg_slogdet")


@legacy(returns=("sign", "logabsdet"), node="LinalgSlogdetBackward0")
def slogdet(input: T):
    _square_float(input, "linalg.slogdet")
    return _slogdet(input)


@legacy(node=lambda input: "AddBackward0" if input.dtype.is_complex else "WhereBackward0")
def logdet(input: T):
    _square_float(input, "logdet")
    s, l = _slogdet(input)
    if jnp.issubdtype(input.dtype, jnp.complexfloating):
        return jnp.log(s) + l
    # A negative determinant has no real log: nan, as PyTorch gives.
    return jnp.where(s < 0, jnp.nan, l).astype(input.dtype)


def _inv_ex(a):
    lu_, piv, perm, info = _lu(a)
    eye = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return _lu_solve(lu_, piv, eye, True, False), info


@linalg(
    name="linalg.inv",
    node="LinalgInvExBackward0",
    after=info_check("linalg.inv", SINGULAR, info_if_not_finite("linalg.inv_ex")),
)
def inv(A: T):
    _square_float(A, "linalg.inv")
    return _inv_ex(A)[0]


@legacy(after=info_check("linalg.inv", SINGULAR, info_if_not_finite("linalg.inv_ex")))
def inverse(input: T):
    _square_float(input, "linalg.inv")
    return _inv_ex(input)[0]


@linalg(
    name="linalg.inv_ex",
    returns=("inverse", "info"),
    node="LinalgInvExBackward0",
    after=info_check("linalg.inv_ex", SINGULAR, own_info),
)
def inv_ex(A: T, *, check_errors=False):
    _square_float(A, "linalg.inv_ex")
    return _inv_ex(A)


name_return_type(inv_ex, "linalg_inv_ex")


# ---------------------------------------------------------------------------
# Solves


def _solve_shapes(A, B, left, name):
    """B as a stack of matrices, and whether it was a (batch of) vector(s)."""
    _check_square(A, name)
    _check_float(A, name)
    _check_same(A, B, name)
    vector = B.ndim == 1 or (left and B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    Bm = B[..., None] if vector else B
    if Bm.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = A.shape[-1]
    if (Bm.shape[-2] if left else Bm.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} "
            f"({n}x{n} and {Bm.shape[-2]}x{Bm.shape[-1]})"
        )
    return Bm, vector


def _solve(A, B, left, name):
    Bm, vector = _solve_shapes(A, B, left, name)
    lu_, piv, _, info = _lu(A)
    x = _lu_solve(lu_, piv, Bm, left, False)
    if vector:
        x = x[..., 0]
    info = jnp.broadcast_to(info, x.shape[: -1 if vector else -2])
    return x, info


@linalg(
    name="linalg.solve",
    node="LinalgSolveExBackward0",
    after=info_check("torch.linalg.solve", SOLVE_SINGULAR, info_if_not_finite("linalg.solve_ex")),
)
def solve(A: T, B: T, *, left=True):
    return _solve(A, B, left, "linalg.solve")[0]


@linalg(
    name="linalg.solve_ex",
    returns=("result", "info"),
    node="LinalgSolveExBackward0",
    after=info_check("torch.linalg.solve_ex", SOLVE_SINGULAR, own_info),
)
def solve_ex(A: T, B: T, *, left=True, check_errors=False):
    return _solve(A, B, left, "linalg.solve_ex")


name_return_type(solve_ex, "linalg_solve_ex")


def _tri_solve(A, B, upper, left, unitriangular):
    A, B = _broadcast_batch(A, B)
    return jax.lax.linalg.triangular_solve(
        A, B, left_side=left, lower=not upper, unit_diagonal=unitriangular
    )


@linalg(name="linalg.solve_triangular", node="LinalgSolveTriangularBackward0")
def solve_triangular(A: T, B: T, *, upper, left=True, unitriangular=False):
    name = "linalg.solve_triangular"
    _check_ndim(A, name)
    _check_ndim(B, name, "B")
    _check_square(A, name)
    _check_float(A, name)
    _check_same(A, B, name)
    return _tri_solve(A, B, upper, left, unitriangular)


@legacy(returns=("solution", "cloned_coefficient"))
def triangular_solve(input: T, A: T, upper=True, transpose=False, unitriangular=False):
    name = "linalg.solve_triangular"
    _check_ndim(input, name, "B")
    _check_square(A, name)
    _check_float(A, name)
    _check_same(A, input, name)
    A2, B2 = _broadcast_batch(A, input)
    x = jax.lax.linalg.triangular_solve(
        A2, B2, left_side=True, lower=not upper, transpose_a=transpose, unit_diagonal=unitriangular
    )
    return x, A2


# ---------------------------------------------------------------------------
# Least squares, and the tensor forms of inverse and solve


@linalg(
    name="linalg.lstsq",
    returns=("solution", "residuals", "rank", "singular_values"),
    node="LinalgLstsqBackward0",
)
def lstsq(A: T, B: T, rcond=None, *, driver=None):
    name = "torch.linalg.lstsq"
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    _check_ndim(A, "linalg.lstsq")
    _check_float(A, "linalg.lstsq")
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{name}: Expected input and other to have the same dtype, but got "
            f"input's dtype {c10_name(A)} and other's dtype {c10_name(B)}"
        )
    vector = B.ndim == A.ndim - 1
    Bm = B[..., None] if vector else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-2)")
    A2, B2 = _broadcast_batch(A, Bm)
    m, n = A.shape[-2:]
    driver = driver or "gelsy"
    rdt = _real_dtype(A)
    u, s, vh = jnp.linalg.svd(A2, full_matrices=False)
    if rcond is None or rcond < 0:
        rcond = float(jnp.finfo(A.dtype).eps) * max(m, n)
    keep = s > rcond * jnp.max(s, -1, keepdims=True, initial=0.0)
    # The solution through pinv, whose derivative rule (Golub and Pereyra) is PyTorch's
    # lstsq backward; differentiating the SVD instead amplifies float32 rounding by
    # 1 / (s_i^2 - s_j^2) when singular values are close.
    x = _matmul(jnp.linalg.pinv(A2, rtol=rcond), B2)
    batch = A2.shape[:-2]
    if driver != "gelsy" and m > n:
        # Residuals exist for full-rank tall problems (assumed here: they are not data-checked).
        r = B2 - _matmul(A2, x)
        res = jnp.sum(jnp.abs(r) ** 2, axis=-2).astype(rdt)
    else:
        res = jnp.zeros((0,), rdt)
    if driver == "gels":
        rank = jnp.zeros((0,), jnp.int64)
    else:
        rank = jnp.sum(keep, axis=-1).astype(jnp.int64).reshape(batch)
    sv = s.astype(rdt) if driver in ("gelsd", "gelss") else jnp.zeros((0,), rdt)
    if vector:
        x = x[..., 0]
        if res.size and res.ndim:
            res = res[..., 0] if res.shape[-1] == 1 else res
    return x, res, rank, sv


name_return_type(lstsq, "linalg_lstsq")


# PyTorch reports the inverse taken inside under its own name
@linalg(name="linalg.tensorinv", after=info_check("inv", SINGULAR, tensorinv_info))
def tensorinv(A: T, ind=2):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = A.shape[ind:] + A.shape[:ind]
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(
            f"Expected self to satisfy the requirement "
            f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
            f"{cols} != {rows}"
        )
    _check_float(A, "linalg.inv")
    return _inv_ex(A.reshape(rows, cols))[0].reshape(out_shape)


@linalg(name="linalg.tensorsolve")
def tensorsolve(A: T, B: T, dims=None):
    if dims is not None:
        dims = tuple(wrap_dim(d, A.ndim) for d in dims)
        rest = [d for d in range(A.ndim) if d not in dims]
        A = jnp.transpose(A, rest + list(dims))
    res_shape = A.shape[B.ndim :]
    rows, cols = B.size, math.prod(res_shape)
    if rows != cols:
        raise RuntimeError(
            f"Expected self to satisfy the requirement "
            f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but "
            f"got {cols} != {rows}"
        )
    x, _ = _solve(A.reshape(rows, cols), B.reshape(rows), True, "linalg.solve")
    return x.reshape(res_shape)
