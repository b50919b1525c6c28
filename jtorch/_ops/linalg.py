"""`torch.linalg` and the legacy torch-level linear algebra (det, svd, qr, lu, ...).

Decompositions run on `jax.lax.linalg` / `jnp.linalg`, which on CPU call the
same LAPACK routines as PyTorch (getrf, potrf, geqrf, syevd, gesdd, geev), so
factors usually agree to rounding, signs included. Errors that depend on the
values (a singular matrix, a matrix that is not positive-definite) cannot be
raised from inside a compiled kernel: the `_ex` variants report them in
`info` as PyTorch's do, and the published functions check it after the call
(`install_checks`, which `_ops/__init__.py` runs once both linalg files are loaded),
raising `LinAlgError` as PyTorch does; under tracing
(compile, vmap) the plain variants return the kernel's nan/inf instead.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.lax import linalg as _lax_linalg

from .. import _meta
from .._dtype import c10_name
from . import _derivatives
from ._registry import METHODS, NAMESPACES, NONE, TI, T, broadcast_error, name_return_type, op
from .matmul import HIGHEST


def linalg(**kw):
    """Declares a `torch.linalg` op: no promotion, no Tensor method unless one is named."""
    kw.setdefault("method", False)
    return op(promote=NONE, **kw)


def legacy(**kw):
    """Declares a torch-level linear algebra op (a function and a Tensor method)."""
    return op(promote=NONE, **kw)


# ---------------------------------------------------------------------------
# Checks, with PyTorch's messages


def _is_float(a) -> bool:
    return jnp.issubdtype(a.dtype, jnp.floating) or jnp.issubdtype(a.dtype, jnp.complexfloating)


def _check_float(a, name: str):
    if not _is_float(a):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {c10_name(a)}"
        )


def _check_ndim(a, name: str, what: str = "A"):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def _check_square(a, name: str, what: str = "A"):
    _check_ndim(a, name, what)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{name}: {what} must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )


def _square_float(a, name: str):
    _check_square(a, name)
    _check_float(a, name)


def _check_same(a, b, name: str):
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"{name}: Expected A and B to have the same dtype, but found A of type "
            f"{c10_name(a)} and B of type {c10_name(b)} instead"
        )


def _mH(a):
    return jnp.conj(jnp.swapaxes(a, -1, -2))


def _mT(a):
    return jnp.swapaxes(a, -1, -2)


def _matmul(a, b):
    return jnp.matmul(a, b, precision=HIGHEST)


def _real_dtype(a):
    return jnp.finfo(a.dtype).dtype


def _broadcast_batch(a, b, name=None):
    """Broadcasts the batch dims (all but the last two) of two stacks of matrices."""
    err = broadcast_error(a.shape[:-2], b.shape[:-2])
    if err is not None:
        raise err
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    return (jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:]))


# ---------------------------------------------------------------------------
# Cholesky


@jax.custom_vjp
def _hermitian_from_lower(a):
    """The Hermitian matrix whose lower triangle is `a`'s (LAPACK reads only that triangle)."""
    low = jnp.tril(a)
    return low + _mH(jnp.tril(low, -1))


def _hermitian_fwd(a):
    return _hermitian_from_lower(a), None


def _hermitian_bwd(_, g):
    # PyTorch's Cholesky backward treats the input as Hermitian: its gradient is the
    # Hermitian part of the gradient with respect to the full matrix.
    return ((g + _mH(g)) / 2,)


_hermitian_from_lower.defvjp(_hermitian_fwd, _hermitian_bwd)


def _chol(a, upper):
    # LAPACK reads one triangle only: the lower, or for upper=True the upper (as conj-transposed).
    src = _mH(a) if upper else a
    L = jax.lax.linalg.cholesky(_hermitian_from_lower(src), symmetrize_input=False)
    return _mH(L) if upper else L


def _potrf_info(h):
    """LAPACK potrf's `info` for Hermitian `h`: the order of the first leading minor that is
    not positive-definite (0 when none), from an unblocked Cholesky, one column a step."""
    n = h.shape[-1]
    idx = jnp.arange(n)

    def column(j, carry):
        L, info = carry
        row = L[..., j, :]  # L[j, :j], zeros from j on
        d = jnp.real(h[..., j, j]) - jnp.sum(jnp.real(row * jnp.conj(row)), axis=-1)
        bad = ~(d > 0)  # NaN fails too, as in LAPACK
        info = jnp.where((info == 0) & bad, j + 1, info)
        ljj = jnp.sqrt(jnp.where(bad, 1, d))
        col = (h[..., :, j] - jnp.einsum("...ik,...k->...i", L, jnp.conj(row))) / ljj[..., None]
        col = jnp.where(idx > j, col, jnp.where(idx == j, ljj.astype(h.dtype)[..., None], 0))
        return L.at[..., :, j].set(col.astype(L.dtype)), info

    info = jnp.zeros(h.shape[:-2], jnp.int32)
    return jax.lax.fori_loop(0, n, column, (jnp.zeros_like(h), info))[1]


def _chol_info(h, L):
    """`info` of the Cholesky factor `L` of `h`. jax replaces a failed factor by NaNs and
    drops LAPACK's info, so only then is the failing minor found again (a slower path)."""
    if h.shape[-1] == 0:
        return jnp.zeros(h.shape[:-2], jnp.int32)
    return jax.lax.cond(
        jnp.any(jnp.isnan(L)), _potrf_info, lambda h: jnp.zeros(h.shape[:-2], jnp.int32), h
    )


@linalg(name="linalg.cholesky")
def linalg_cholesky(A: T, *, upper=False):
    _square_float(A, "linalg.cholesky")
    return _chol(A, upper)


@linalg(name="linalg.cholesky_ex", returns=("L", "info"))
def cholesky_ex(A: T, *, upper=False, check_errors=False):
    _square_float(A, "linalg.cholesky")
    L = _chol(A, upper)
    info = _chol_info(_hermitian_from_lower(_mH(A) if upper else A), L)
    return jnp.where(jnp.isnan(L), jnp.zeros_like(L), L), info


name_return_type(cholesky_ex, "linalg_cholesky_ex")


@legacy()
def cholesky(input: T, upper=False):
    _square_float(input, "cholesky")
    return _chol(input, upper)


@legacy()
def cholesky_inverse(input: T, upper=False):
    _square_float(input, "cholesky_inverse")
    f = _mH(input) if upper else input
    eye = jnp.broadcast_to(jnp.eye(f.shape[-1], dtype=f.dtype), f.shape)
    y = jax.lax.linalg.triangular_solve(f, eye, left_side=True, lower=True)
    return _matmul(_mH(y), y)


@legacy()
def cholesky_solve(input: T, input2: T, upper=False):
    _check_ndim(input, "cholesky_solve", "B")
    _square_float(input2, "cholesky_solve")
    _check_same(input2, input, "cholesky_solve")
    b, f = _broadcast_batch(input, input2)
    return _chol_solve(b, _mH(f) if upper else f)


def _chol_solve_value(b, L):
    y = jax.lax.linalg.triangular_solve(L, b, left_side=True, lower=True)
    return jax.lax.linalg.triangular_solve(
        L, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True
    )


@jax.custom_vjp
def _chol_solve(b, L):
    """(L L^H)^-1 b for a lower factor L (only its lower triangle is read)."""
    return _chol_solve_value(b, L)


def _chol_solve_fwd(b, L):
    x = _chol_solve_value(b, L)
    return x, (L, x)


def _chol_solve_bwd(res, g):
    # PyTorch's formula (cholesky_solve_backward), which treats the factor as the full matrix
    # in L L^H: its gradient has an upper triangle too. Written in PyTorch's convention for
    # complex numbers, so conjugated in and out for jax's.
    L, x = res
    grad_b = _chol_solve_value(jnp.conj(g), L)
    common = grad_b @ _mH(x)
    common = common + _mH(common)
    return jnp.conj(grad_b), jnp.conj(-(common @ L))


_chol_solve.defvjp(_chol_solve_fwd, _chol_solve_bwd)


# ---------------------------------------------------------------------------
# LU


def _lu(a):
    """(LU, 1-based int32 pivots, permutation, info) of a stack of matrices."""
    lu_, piv, perm = jax.lax.linalg.lu(a)
    k = min(a.shape[-2], a.shape[-1])
    d = jnp.diagonal(lu_, axis1=-2, axis2=-1)[..., :k]
    zero = d == 0
    first = (
        jnp.argmax(zero, axis=-1).astype(jnp.int32) + 1 if k else jnp.zeros(d.shape[:-1], jnp.int32)
    )
    info = jnp.where(jnp.any(zero, axis=-1), first, 0).astype(jnp.int32)
    return lu_, (piv + 1).astype(jnp.int32), perm, info


def _check_pivot(pivot, name):
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


@linalg(name="linalg.lu_factor", returns=("LU", "pivots"))
def lu_factor(A: T, *, pivot=True):
    _check_ndim(A, "linalg.lu_factor")
    _check_float(A, "linalg.lu_factor")
    _check_pivot(pivot, "linalg.lu_factor")
    lu_, piv, _, _ = _lu(A)
    return lu_, piv


@linalg(name="linalg.lu_factor_ex", returns=("LU", "pivots", "info"))
def lu_factor_ex(A: T, *, pivot=True, check_errors=False):
    _check_ndim(A, "linalg.lu_factor_ex")
    _check_float(A, "linalg.lu_factor_ex")
    _check_pivot(pivot, "linalg.lu_factor")
    lu_, piv, _, info = _lu(A)
    return lu_, piv, info


name_return_type(lu_factor, "linalg_lu_factor")
name_return_type(lu_factor_ex, "linalg_lu_factor_ex")


def _unpack(lu_, perm):
    m, n = lu_.shape[-2], lu_.shape[-1]
    k = min(m, n)
    L = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=lu_.dtype)
    U = jnp.triu(lu_[..., :k, :])
    P = _mT(jax.nn.one_hot(perm, m, dtype=lu_.dtype))
    return P, L, U


@linalg(name="linalg.lu", returns=("P", "L", "U"))
def linalg_lu(A: T, *, pivot=True):
    _check_ndim(A, "linalg.lu")
    _check_float(A, "linalg.lu")
    _check_pivot(pivot, "linalg.lu_factor")
    lu_, _, perm, _ = _lu(A)
    return _unpack(lu_, perm)


name_return_type(linalg_lu, "linalg_lu")


def _perm_from_pivots(piv, m):
    return jax.lax.linalg.lu_pivots_to_permutation(piv - 1, m)


@legacy(method=False, returns=("P", "L", "U"))
def lu_unpack(LU_data: T, LU_pivots: TI, unpack_data=True, unpack_pivots=True):
    m = LU_data.shape[-2]
    perm = _perm_from_pivots(LU_pivots.astype(jnp.int32), m)
    P, L, U = _unpack(LU_data, perm)
    empty = jnp.zeros((0,), LU_data.dtype)
    return (P if unpack_pivots else empty, L if unpack_data else empty, U if unpack_data else empty)


def _lu_solve(lu_, piv, b, left, adjoint):
    n = lu_.shape[-1]
    if not left:
        # X A = B  <=>  A^H X^H = B^H
        return _mH(_lu_solve(lu_, piv, _mH(b), True, not adjoint))
    lu_, b = _broadcast_batch(lu_, b)
    piv = jnp.broadcast_to(piv, lu_.shape[:-2] + piv.shape[-1:])
    perm = _perm_from_pivots(piv, n)
    tri = jax.lax.linalg.triangular_solve
    if not adjoint:
        pb = jnp.take_along_axis(b, perm[..., None], axis=-2)
        y = tri(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
        return tri(lu_, y, left_side=True, lower=False)
    y = tri(lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=True)
    x = tri(
        lu_, y, left_side=True, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=True
    )
    inv = jnp.argsort(perm, axis=-1)
    return jnp.take_along_axis(x, inv[..., None], axis=-2)


@linalg(name="linalg.lu_solve")
def linalg_lu_solve(LU: T, pivots: TI, B: T, *, left=True, adjoint=False):
    _check_square(LU, "linalg.lu_solve", "LU")
    _check_ndim(B, "linalg.lu_solve", "B")
    _check_same(LU, B, "linalg.lu_solve")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{eq} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})"
        )
    return _lu_solve(LU, pivots.astype(jnp.int32), B, left, adjoint)


@legacy()
def lu_solve(input: T, LU_data: T, LU_pivots: TI):
    _check_same(LU_data, input, "lu_solve")
    return _lu_solve(LU_data, LU_pivots.astype(jnp.int32), input, True, False)


@legacy()
def lu(A: T, pivot=True, get_infos=False):
    _check_float(A, "lu")
    _check_pivot(pivot, "linalg.lu_factor")
    lu_, piv, _, info = _lu(A)
    return (lu_, piv, info) if get_infos else (lu_, piv)


# ---------------------------------------------------------------------------
# Determinants and inverses


def _slogdet(a):
    s, l = jnp.linalg.slogdet(a)
    return s.astype(a.dtype), l.astype(_real_dtype(a))


@linalg(name="linalg.det")
def linalg_det(A: T):
    _square_float(A, "linalg.det")
    return _det(A)


@legacy()
def det(input: T):
    _square_float(input, "linalg.det")
    return _det(input)


def _det(A):
    if A.shape[-1] == 0:  # jax's det rule cannot differentiate an empty matrix
        return jnp.ones(A.shape[:-2], A.dtype)
    return jnp.linalg.det(A)


@linalg(name="linalg.slogdet", returns=("sign", "logabsdet"))
def linalg_slogdet(A: T):
    _square_float(A, "linalg.slogdet")
    return _slogdet(A)


name_return_type(linalg_slogdet, "linalg_slogdet")


@legacy(returns=("sign", "logabsdet"))
def slogdet(input: T):
    _square_float(input, "linalg.slogdet")
    return _slogdet(input)


@legacy()
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


@linalg(name="linalg.inv")
def inv(A: T):
    _square_float(A, "linalg.inv")
    return _inv_ex(A)[0]


@legacy()
def inverse(input: T):
    _square_float(input, "linalg.inv")
    return _inv_ex(input)[0]


@linalg(name="linalg.inv_ex", returns=("inverse", "info"))
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


@linalg(name="linalg.solve")
def solve(A: T, B: T, *, left=True):
    return _solve(A, B, left, "linalg.solve")[0]


@linalg(name="linalg.solve_ex", returns=("result", "info"))
def solve_ex(A: T, B: T, *, left=True, check_errors=False):
    return _solve(A, B, left, "linalg.solve_ex")


name_return_type(solve_ex, "linalg_solve_ex")


def _tri_solve(A, B, upper, left, unitriangular):
    A, B = _broadcast_batch(A, B)
    return jax.lax.linalg.triangular_solve(
        A, B, left_side=left, lower=not upper, unit_diagonal=unitriangular
    )


@linalg(name="linalg.solve_triangular")
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
# QR, Householder, eigen and singular values


def _qr(a, mode):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of "
            f"'reduced' (default), 'r', or 'complete'"
        )
    if mode == "r":
        return jnp.zeros((0,), a.dtype), jnp.linalg.qr(a, mode="r")
    return jnp.linalg.qr(a, mode=mode)


@linalg(name="linalg.qr", returns=("Q", "R"))
def linalg_qr(A: T, mode="reduced"):
    _check_ndim(A, "linalg.qr")
    _check_float(A, "linalg.qr")
    return _qr(A, mode)


name_return_type(linalg_qr, "linalg_qr")


@legacy(returns=("Q", "R"))
def qr(input: T, some=True):
    _check_ndim(input, "linalg.qr")
    _check_float(input, "linalg.qr")
    return _qr(input, "reduced" if some else "complete")


@legacy(returns=("a", "tau"))
def geqrf(input: T):
    _check_ndim(input, "geqrf")
    _check_float(input, "geqrf")
    # jax keeps geqrf internal; its public householder_product/ormqr consume its output.
    return _lax_linalg.geqrf(input)


def _householder(A, tau):
    return _reflect(A, tau, jnp.eye(A.shape[-2], A.shape[-1], dtype=A.dtype))


def _reflect(A, tau, X):
    """(H_1 H_2 ... H_k) X for the reflectors H_i = I - tau_i v_i v_i^H stored in `A`.

    Written out in jnp (k rank-one updates) rather than LAPACK's orgqr/ormqr, which jax
    cannot differentiate; the derivative is then PyTorch's formula's by construction.
    """
    m = A.shape[-2]
    X = jnp.broadcast_to(X, A.shape[:-2] + X.shape[-2:])
    for i in reversed(range(tau.shape[-1])):
        head = jnp.zeros(A.shape[:-2] + (i,), A.dtype)
        one = jnp.ones(A.shape[:-2] + (1,), A.dtype)
        v = jnp.concatenate([head, one, A[..., i + 1 : m, i]], axis=-1)
        X = X - tau[..., i, None, None] * v[..., :, None] * (jnp.conj(v)[..., None, :] @ X)
    return X


@linalg(name="linalg.householder_product", aliases=("orgqr",), method="orgqr")
def householder_product(A: T, tau: T):
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if tau.ndim < 1:
        raise RuntimeError(f"{name}: tau must have at least 1 dimension.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but "
            f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to {A.ndim}"
        )
    _check_float(A, name)
    return _householder(A, tau)


@legacy()
def ormqr(input: T, input2: T, input3: T, left=True, transpose=False):
    _check_float(input, "ormqr")
    m = input.shape[-2]
    q = _reflect(input, input2, jnp.eye(m, dtype=input.dtype))
    if transpose:
        q = jnp.conj(jnp.swapaxes(q, -1, -2))
    return q @ input3 if left else input3 @ q


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def _eigh(A, UPLO):
    # Only the UPLO triangle is read, as LAPACK's syevd (which also fixes the vectors' signs).
    # The derivative is PyTorch's (`linalg_eig_backward`, hermitian case), from this
    # decomposition: jax's decomposes (A + A^H) / 2 again, another matrix when A is not
    # Hermitian, and its backward is not Hermitian.
    def value(A):
        w, v = jnp.linalg.eigh(A, UPLO=UPLO, symmetrize_input=False)
        return w.astype(_real_dtype(A)), v

    return _derivatives.with_jvp(value, _eigh_tangent)(A)


def _eigh_tangent(primals, tangents, out):
    # PyTorch's backward, gA = V (diag(gL) + F * skew(V^H gV)) V^H with F_ij = 1/(L_j - L_i)
    # off the diagonal, is the transpose of this JVP on the Hermitian part of dA.
    (dA,), (w, v) = tangents, out
    vh = jnp.conj(jnp.swapaxes(v, -1, -2))
    dA = (dA + jnp.conj(jnp.swapaxes(dA, -1, -2))) / 2
    m = jnp.matmul(jnp.matmul(vh, dA, precision=HIGHEST), v, precision=HIGHEST)
    n = w.shape[-1]
    eye = jnp.eye(n, dtype=w.dtype)
    gap = w[..., None, :] - w[..., :, None]
    f = jnp.where(eye == 1, 0, 1 / jnp.where(eye == 1, 1, gap)).astype(v.dtype)
    dw = jnp.real(jnp.diagonal(m, axis1=-2, axis2=-1)).astype(w.dtype)
    return dw, jnp.matmul(v, f * m, precision=HIGHEST)


@linalg(name="linalg.eigh", returns=("eigenvalues", "eigenvectors"))
def eigh(A: T, UPLO="L"):
    _square_float(A, "linalg.eigh")
    _check_uplo(UPLO)
    return _eigh(A, UPLO)


name_return_type(eigh, "linalg_eigh")


@linalg(name="linalg.eigvalsh")
def eigvalsh(A: T, UPLO="L"):
    _square_float(A, "linalg.eigvalsh")
    _check_uplo(UPLO)
    return _eigh(A, UPLO)[0]


def _complex_of(a):
    return jnp.result_type(a.dtype, jnp.complex64)


@linalg(name="linalg.eig", returns=("eigenvalues", "eigenvectors"))
def eig(A: T):
    _square_float(A, "linalg.eig")
    if A.shape[-1] == 0:
        c = _complex_of(A)
        return jnp.zeros(A.shape[:-1], c), jnp.zeros(A.shape, c)
    # Eigenvector derivatives assume distinct eigenvalues, as PyTorch's backward does.
    w, v = jax.lax.linalg.eig(A, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w.astype(_complex_of(A)), v.astype(_complex_of(A))


name_return_type(eig, "linalg_eig")


@linalg(name="linalg.eigvals")
def eigvals(A: T):
    _square_float(A, "linalg.eigvals")
    return jnp.linalg.eigvals(A).astype(_complex_of(A))


def _check_driver(driver):
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on "
            "CUDA inputs with cuSOLVER backend."
        )


def _svd(A, full_matrices):
    # jax differentiates only the reduced decomposition; PyTorch differentiates both with
    # one formula (`linalg_svd_jvp`), which reads the first k = min(m, n) columns of U and
    # rows of Vh: the others are not unique, their tangents are zero and their gradients
    # are ignored (derivatives.yaml narrows grad_U and grad_Vh before `svd_backward`).
    def value(A):
        u, s, vh = jnp.linalg.svd(A, full_matrices=full_matrices)
        return u, s.astype(_real_dtype(A)), vh

    return _derivatives.with_jvp(value, functools.partial(_svd_tangent, full_matrices))(A)


def _svd_tangent(full_matrices, primals, tangents, out):
    # PyTorch's `linalg_svd_jvp`; its transpose is `svd_backward`. With dP = U^H dA V,
    # dS = Re diag(dP), dX = dP - diag(dS), sym(X) = X + X^H, E_jk = S_k^2 - S_j^2 (1 on
    # the diagonal): dU = U (sym(dX S) / E + i Im diag(dX) / 2S) (+ (I - UU^H) dA V S^-1
    # when m > n), dVh = (-sym(S dX) / E + i Im diag(dX) / 2S) Vh (+ S^-1 U^H dA (I - VV^H)
    # when m < n).
    (dA,), (u, s, vh) = tangents, out
    m, n = dA.shape[-2:]
    k = s.shape[-1]
    if full_matrices:
        u, vh = u[..., :k], vh[..., :k, :]
    v = _mH(vh)
    dp = _matmul(_matmul(_mH(u), dA), v)
    ds = jnp.real(jnp.diagonal(dp, axis1=-2, axis2=-1))
    eye = jnp.eye(k, dtype=bool)
    dp = jnp.where(eye, dp - ds[..., None, :], dp)
    s2 = s * s
    e = jnp.where(eye, jnp.ones((), s.dtype), s2[..., None, :] - s2[..., :, None])
    # i Im diag(dX) / 2S, embedded (dX's diagonal is imaginary): 0 for real input.
    diag = (
        jnp.where(eye, (jnp.diagonal(dp, axis1=-2, axis2=-1) / (2 * s))[..., None, :], 0)
        if jnp.iscomplexobj(dA)
        else 0
    )

    du_aux = dp * s[..., None, :]
    du = _matmul(u, (du_aux + _mH(du_aux)) / e + diag)
    if m > n:
        dav = _matmul(dA, v / s[..., None, :])
        du = du + dav - _matmul(u, _matmul(_mH(u), dav))
        if full_matrices:
            du = jnp.concatenate([du, jnp.zeros(du.shape[:-1] + (m - n,), du.dtype)], -1)
    dvh_aux = dp * -s[..., :, None]
    dvh = _matmul((dvh_aux + _mH(dvh_aux)) / e + diag, vh)
    if m < n:
        uda = _matmul(_mH(u) / s[..., :, None], dA)
        dvh = dvh + uda - _matmul(_matmul(uda, v), vh)
        if full_matrices:
            dvh = jnp.concatenate(
                [dvh, jnp.zeros(dvh.shape[:-2] + (n - m,) + dvh.shape[-1:], dvh.dtype)], -2
            )
    return du.astype(u.dtype), ds.astype(s.dtype), dvh.astype(vh.dtype)


@linalg(name="linalg.svd", returns=("U", "S", "Vh"))
def linalg_svd(A: T, full_matrices=True, *, driver=None):
    _check_ndim(A, "linalg.svd")
    _check_float(A, "linalg.svd")
    _check_driver(driver)
    return _svd(A, full_matrices)


name_return_type(linalg_svd, "linalg_svd")


@linalg(name="linalg.svdvals")
def svdvals(A: T, *, driver=None):
    _check_ndim(A, "linalg.svdvals")
    _check_float(A, "linalg.svdvals")
    _check_driver(driver)
    return jnp.linalg.svd(A, compute_uv=False).astype(_real_dtype(A))


@legacy(returns=("U", "S", "V"))
def svd(input: T, some=True, compute_uv=True):
    _check_ndim(input, "linalg.svd")
    _check_float(input, "linalg.svd")
    if not compute_uv:
        # PyTorch fills U and V with zeros, in their full shapes.
        m, n = input.shape[-2:]
        s = jnp.linalg.svd(input, compute_uv=False).astype(_real_dtype(input))
        batch = input.shape[:-2]
        return (jnp.zeros(batch + (m, m), input.dtype), s, jnp.zeros(batch + (n, n), input.dtype))
    u, s, vh = _svd(input, not some)
    return u, s, _mH(vh)


# ---------------------------------------------------------------------------
# Errors that depend on the values (eager only)


class LinAlgError(RuntimeError):
    """Matches `torch.linalg.LinAlgError` (PyTorch's `torch._C._LinAlgError`): a matrix that
    is singular or not positive-definite where the function needs one that is not."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "jtorch.linalg"

_NOT_PD = (
    "The factorization could not be completed because the input is not "
    "positive-definite (the leading minor of order {} is not positive-definite)."
)
_SINGULAR = (
    "The diagonal element {} is zero, the inversion could not be completed because "
    "the input matrix is singular."
)
_SOLVE = "The solver failed because the input matrix is singular."
_LU_ZERO = (
    "U[{0},{0}] is zero and using it on lu_solve would result in a division by zero. "
    "If you still want to perform the factorization, consider calling "
    "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
)


@jax.jit
def _all_finite(a):
    return jnp.all(jnp.isfinite(a))


@jax.jit
def _lu_info(lu_):
    d = jnp.diagonal(lu_, axis1=-2, axis2=-1)
    zero = d == 0
    return jnp.where(jnp.any(zero, axis=-1), jnp.argmax(zero, axis=-1) + 1, 0)


def _raise_info(info, name: str, message: str, error=LinAlgError) -> None:
    """PyTorch's error for the first matrix whose LAPACK `info` is non-zero, if any."""
    info = np.asarray(info)
    bad = np.flatnonzero(info)
    if bad.size:
        batch = f"(Batch element {bad[0]}): " if info.ndim else ""
        raise error(f"{name}: {batch}" + message.format(info.reshape(-1)[bad[0]]))


def _eager(t) -> bool:
    return not _meta.no_values(t._array)


def _checked(fn, name: str, message: str, info_of, error=LinAlgError):
    """`fn` (a generated op function) raising PyTorch's error on a failed factorization.

    `info_of(result, args, kwargs)` gives LAPACK's `info`, or None when the call cannot
    have failed. Under tracing (compile, vmap, ...) nothing is checked, as the values are
    not known; the result then holds the nan/inf the kernel produced.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        first = result[0] if isinstance(result, tuple) else result
        if _eager(first):
            info = info_of(result, args, kwargs)
            if info is not None:
                _raise_info(info, name, message, error)
        return result

    return wrapper


def _info_if_not_finite(ex_fn, **fixed):
    """Plain variants: a factorization that failed left non-finite values in the result,
    so only then is `info` computed (again, by the `_ex` kernel)."""

    def info_of(result, args, kwargs):
        if bool(_all_finite(result._array)):
            return None
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        return ex_fn(*args, **kwargs, **fixed)[-1]._array

    return info_of


def _info_if_checked(result, args, kwargs):
    """`_ex` variants: their own `info`, when called with `check_errors=True`."""
    return result[-1]._array if kwargs.get("check_errors") else None


def _install(
    ns: str, short: str, name: str, message: str, info_of, method=None, error=LinAlgError
) -> None:
    """Replaces the published `ns.short` (and its aliases, and `Tensor.<method>`) by the
    checking wrapper."""
    fn = NAMESPACES[ns][short]
    checked = _checked(fn, name, message, info_of, error)
    for space in NAMESPACES.values():
        for key, value in list(space.items()):
            if value is fn:
                space[key] = checked
    if method is not None:
        METHODS[method] = _checked(METHODS[method], name, message, info_of, error)


def install_checks() -> None:
    chol_ex = NAMESPACES["linalg"]["cholesky_ex"]
    inv_ex_fn = NAMESPACES["linalg"]["inv_ex"]
    solve_ex_fn = NAMESPACES["linalg"]["solve_ex"]

    def legacy_chol_ex(input, upper=False):
        return chol_ex(input, upper=upper)

    def power_info(result, args, kwargs):
        A, n = (list(args) + [kwargs.get("n")])[:2]
        if n >= 0 or bool(_all_finite(result._array)):
            return None
        return inv_ex_fn(A).info._array

    def tensorinv_info(result, args, kwargs):
        A, ind = (list(args) + [kwargs.get("ind", 2)])[:2]
        if bool(_all_finite(result._array)):
            return None
        return inv_ex_fn(A.reshape(int(np.prod(A.shape[:ind])), -1)).info._array

    def triangular_info(result, args, kwargs):
        # cholesky_inverse inverts a triangular factor: singular iff a diagonal entry is 0.
        if bool(_all_finite(result._array)):
            return None
        return _lu_info((args[0] if args else kwargs["input"])._array)

    _install("linalg", "cholesky", "linalg.cholesky", _NOT_PD, _info_if_not_finite(chol_ex))
    _install(
        "", "cholesky", "cholesky", _NOT_PD, _info_if_not_finite(legacy_chol_ex), method="cholesky"
    )
    _install("linalg", "cholesky_ex", "linalg.cholesky_ex", _NOT_PD, _info_if_checked)
    _install("linalg", "inv", "linalg.inv", _SINGULAR, _info_if_not_finite(inv_ex_fn))
    _install(
        "", "inverse", "linalg.inv", _SINGULAR, _info_if_not_finite(inv_ex_fn), method="inverse"
    )
    _install("linalg", "inv_ex", "linalg.inv_ex", _SINGULAR, _info_if_checked)
    _install("linalg", "solve", "torch.linalg.solve", _SOLVE, _info_if_not_finite(solve_ex_fn))
    _install("linalg", "solve_ex", "torch.linalg.solve_ex", _SOLVE, _info_if_checked)
    # Inverses taken inside other functions, reported under PyTorch's names for them.
    _install("linalg", "matrix_power", "linalg.inv", _SINGULAR, power_info, method="matrix_power")
    _install("linalg", "tensorinv", "inv", _SINGULAR, tensorinv_info)
    _install(
        "",
        "cholesky_inverse",
        "cholesky_inverse",
        _SINGULAR,
        triangular_info,
        method="cholesky_inverse",
    )
    # LU factorizations raise a plain RuntimeError, for a zero on U's diagonal.
    _install(
        "linalg",
        "lu_factor",
        "torch.linalg.lu_factor",
        _LU_ZERO,
        lambda result, args, kwargs: _lu_info(result[0]._array),
        error=RuntimeError,
    )
    _install(
        "linalg",
        "lu_factor_ex",
        "torch.linalg.lu_factor_ex",
        _LU_ZERO,
        _info_if_checked,
        error=RuntimeError,
    )
