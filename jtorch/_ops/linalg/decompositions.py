"""Factorisations: Cholesky, LU (and solves with its factors), QR and Householder
reflectors, LDL. The eigen and singular value decompositions are in `spectral.py`."""

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.lax import linalg as _lax_linalg

from .._registry import TI, T, name_return_type
from ._common import (
    _broadcast_batch,
    _check_float,
    _check_ndim,
    _check_same,
    _check_square,
    _matmul,
    _mH,
    _mT,
    _square_float,
    legacy,
    linalg,
)
from .checks import (
    LU_ZERO,
    NOT_PD,
    SINGULAR,
    info_check,
    info_if_not_finite,
    legacy_cholesky_info,
    lu_info,
    own_info,
    triangular_info,
)

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


@linalg(
    name="linalg.cholesky",
    node="LinalgCholeskyExBackward0",
    after=info_check("linalg.cholesky", NOT_PD, info_if_not_finite("linalg.cholesky_ex")),
)
def linalg_cholesky(A: T, *, upper=False):
    _square_float(A, "linalg.cholesky")
    return _chol(A, upper)


@linalg(
    name="linalg.cholesky_ex",
    returns=("L", "info"),
    node="LinalgCholeskyExBackward0",
    after=info_check("linalg.cholesky_ex", NOT_PD, own_info),
)
def cholesky_ex(A: T, *, upper=False, check_errors=False):
    _square_float(A, "linalg.cholesky")
    L = _chol(A, upper)
    info = _chol_info(_hermitian_from_lower(_mH(A) if upper else A), L)
    return jnp.where(jnp.isnan(L), jnp.zeros_like(L), L), info


name_return_type(cholesky_ex, "linalg_cholesky_ex")


@legacy(after=info_check("cholesky", NOT_PD, legacy_cholesky_info))  # (CholeskyBackward0)
def cholesky(input: T, upper=False):
    _square_float(input, "cholesky")
    return _chol(input, upper)


@legacy(after=info_check("cholesky_inverse", SINGULAR, triangular_info))
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


# LU factorizations raise a plain RuntimeError, for a zero on U's diagonal.
@linalg(
    name="linalg.lu_factor",
    returns=("LU", "pivots"),
    node="LinalgLuFactorExBackward0",
    after=info_check("torch.linalg.lu_factor", LU_ZERO, lu_info, error=RuntimeError),
)
def lu_factor(A: T, *, pivot=True):
    _check_ndim(A, "linalg.lu_factor")
    _check_float(A, "linalg.lu_factor")
    _check_pivot(pivot, "linalg.lu_factor")
    lu_, piv, _, _ = _lu(A)
    return lu_, piv


@linalg(
    name="linalg.lu_factor_ex",
    returns=("LU", "pivots", "info"),
    node="LinalgLuFactorExBackward0",
    after=info_check("torch.linalg.lu_factor_ex", LU_ZERO, own_info, error=RuntimeError),
)
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


@linalg(name="linalg.lu", returns=("P", "L", "U"), node="LinalgLuBackward0")
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


@linalg(name="linalg.lu_solve", node="LinalgLuSolveBackward0")
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


@legacy(node="LinalgLuSolveBackward0")
def lu_solve(input: T, LU_data: T, LU_pivots: TI):
    _check_same(LU_data, input, "lu_solve")
    return _lu_solve(LU_data, LU_pivots.astype(jnp.int32), input, True, False)


@legacy(node="LinalgLuFactorExBackward0")  # (torch.lu is linalg.lu_factor_ex)
def lu(A: T, pivot=True, get_infos=False):
    _check_float(A, "lu")
    _check_pivot(pivot, "linalg.lu_factor")
    lu_, piv, _, info = _lu(A)
    return (lu_, piv, info) if get_infos else (lu_, piv)


# ---------------------------------------------------------------------------
# QR and Householder reflectors


def _qr(a, mode):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of "
            f"'reduced' (default), 'r', or 'complete'"
        )
    if mode == "r":
        return jnp.zeros((0,), a.dtype), jnp.linalg.qr(a, mode="r")
    return jnp.linalg.qr(a, mode=mode)


@linalg(name="linalg.qr", returns=("Q", "R"), node="LinalgQrBackward0")
def linalg_qr(A: T, mode="reduced"):
    _check_ndim(A, "linalg.qr")
    _check_float(A, "linalg.qr")
    return _qr(A, mode)


name_return_type(linalg_qr, "linalg_qr")


@legacy(returns=("Q", "R"), node="LinalgQrBackward0")
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


@linalg(
    name="linalg.householder_product",
    aliases=("orgqr",),
    method="orgqr",
    node="LinalgHouseholderProductBackward0",
)
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


# ---------------------------------------------------------------------------
# LDL (Bunch-Kaufman): jax has no sytrf, so the factorisation runs in LAPACK through scipy on
# the host. Its compact (LD, pivots) format is LAPACK's, which is what PyTorch returns.


def _lapack(prefix_fn, a, hermitian):
    from scipy.linalg import lapack

    kind = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}[a.dtype.type]
    base = "he" if hermitian and kind in "cz" else "sy"
    return getattr(lapack, kind + base + prefix_fn)


def _host_ldl(a, hermitian):
    a = np.asarray(a)
    f = _lapack("trf", a, hermitian)
    flat = a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])
    ld, piv, info = np.empty_like(flat), np.empty(flat.shape[:2], np.int32), []
    for i, m in enumerate(flat):
        out, p, inf = f(m, lower=1)
        ld[i], piv[i] = np.tril(out), p
        info.append(inf)
    return (
        ld.reshape(a.shape),
        piv.reshape(a.shape[:-1]),
        np.asarray(info, np.int32).reshape(a.shape[:-2]),
    )


def _ldl(A, hermitian):
    shapes = (
        jax.ShapeDtypeStruct(A.shape, A.dtype),
        jax.ShapeDtypeStruct(A.shape[:-1], jnp.int32),
        jax.ShapeDtypeStruct(A.shape[:-2], jnp.int32),
    )
    return jax.pure_callback(lambda a: _host_ldl(a, hermitian), shapes, A, vmap_method="sequential")


@linalg(name="linalg.ldl_factor", returns=("LD", "pivots"), differentiable=False)
def ldl_factor(A: T, *, hermitian=False):
    _square_float(A, "torch.linalg.ldl_factor")
    return _ldl(A, hermitian)[:2]


@linalg(name="linalg.ldl_factor_ex", returns=("LD", "pivots", "info"), differentiable=False)
def ldl_factor_ex(A: T, *, hermitian=False, check_errors=False):
    _square_float(A, "torch.linalg.ldl_factor_ex")
    return _ldl(A, hermitian)


name_return_type(ldl_factor, "linalg_ldl_factor")
name_return_type(ldl_factor_ex, "linalg_ldl_factor_ex")


def _host_ldl_solve(ld, piv, b, hermitian):
    ld, piv, b = np.asarray(ld), np.asarray(piv), np.asarray(b)
    f = _lapack("trs", ld, hermitian)
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    n = math.prod(batch)
    ld = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((n,) + ld.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((n,) + piv.shape[-1:])
    bb = np.broadcast_to(b, batch + b.shape[-2:]).reshape((math.prod(batch),) + b.shape[-2:])
    out = np.empty_like(bb)
    for i in range(bb.shape[0]):
        out[i] = f(ld[i], piv[i], bb[i], lower=1)[0]
    return out.reshape(batch + b.shape[-2:])


@linalg(name="linalg.ldl_solve", differentiable=False)
def ldl_solve(LD: T, pivots: TI, B: T, *, hermitian=False):
    _check_square(LD, "torch.linalg.ldl_solve", "LD")
    _check_ndim(B, "torch.linalg.ldl_solve", "B")
    _check_same(LD, B, "torch.linalg.ldl_solve")
    batch = tuple(np.broadcast_shapes(LD.shape[:-2], B.shape[:-2]))
    out = jax.ShapeDtypeStruct(batch + B.shape[-2:], B.dtype)
    return jax.pure_callback(
        lambda a, p, b: _host_ldl_solve(a, p, b, hermitian),
        out,
        LD,
        pivots.astype(jnp.int32),
        B,
        vmap_method="sequential",
    )
