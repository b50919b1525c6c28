"""Eigen and singular value decompositions, with PyTorch's derivative formulas, and what is
built on cutting small singular values: `matrix_rank` and the pseudo-inverse."""

import functools

import jax
import jax.numpy as jnp

from ..._dtype import c10_name
from .. import _derivatives
from .._registry import T, name_return_type
from ..matmul import HIGHEST
from ._common import (
    _check_float,
    _check_ndim,
    _is_float,
    _matmul,
    _mH,
    _real_dtype,
    _square_float,
    legacy,
    linalg,
)
from .checks import eig_phase_check, svd_phase_check

# ---------------------------------------------------------------------------
# Eigen and singular value decompositions


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


@linalg(
    name="linalg.eigh",
    returns=("eigenvalues", "eigenvectors"),
    node="LinalgEighBackward0",
    grad_check=(1, functools.partial(eig_phase_check, "linalg_eigh_backward")),
)
def eigh(A: T, UPLO="L"):
    _square_float(A, "linalg.eigh")
    _check_uplo(UPLO)
    return _eigh(A, UPLO)


name_return_type(eigh, "linalg_eigh")


@linalg(name="linalg.eigvalsh", node="LinalgEighBackward0")
def eigvalsh(A: T, UPLO="L"):
    _square_float(A, "linalg.eigvalsh")
    _check_uplo(UPLO)
    return _eigh(A, UPLO)[0]


def _complex_of(a):
    return jnp.result_type(a.dtype, jnp.complex64)


@linalg(
    name="linalg.eig",
    returns=("eigenvalues", "eigenvectors"),
    node="LinalgEigBackward0",
    grad_check=(1, functools.partial(eig_phase_check, "linalg_eig_backward")),
)
def eig(A: T):
    _square_float(A, "linalg.eig")
    if A.shape[-1] == 0:
        c = _complex_of(A)
        return jnp.zeros(A.shape[:-1], c), jnp.zeros(A.shape, c)
    # Eigenvector derivatives assume distinct eigenvalues, as PyTorch's backward does.
    w, v = jax.lax.linalg.eig(A, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w.astype(_complex_of(A)), v.astype(_complex_of(A))


name_return_type(eig, "linalg_eig")


@linalg(name="linalg.eigvals", node="LinalgEigBackward0")
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


@linalg(
    name="linalg.svd",
    returns=("U", "S", "Vh"),
    node="LinalgSvdBackward0",
    grad_check=(0, functools.partial(svd_phase_check, False)),
)
def linalg_svd(A: T, full_matrices=True, *, driver=None):
    _check_ndim(A, "linalg.svd")
    _check_float(A, "linalg.svd")
    _check_driver(driver)
    return _svd(A, full_matrices)


name_return_type(linalg_svd, "linalg_svd")


@linalg(name="linalg.svdvals", node="LinalgSvdBackward0")
def svdvals(A: T, *, driver=None):
    _check_ndim(A, "linalg.svdvals")
    _check_float(A, "linalg.svdvals")
    _check_driver(driver)
    return jnp.linalg.svd(A, compute_uv=False).astype(_real_dtype(A))


@legacy(
    returns=("U", "S", "V"),
    node="LinalgSvdBackward0",
    grad_check=(0, functools.partial(svd_phase_check, True)),  # (V, not Vh)
)
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
# Ranks and pseudo-inverses


def _tolerances(s_max, atol, rtol, m, n, dtype):
    """PyTorch's cut-off max(atol, rtol * s_max); rtol defaults to eps * max(m, n) if no atol."""
    rdt = jnp.finfo(dtype).dtype
    if rtol is None:
        rtol = 0.0 if atol is not None else float(jnp.finfo(dtype).eps) * max(m, n)
    atol = 0.0 if atol is None else atol
    atol = jnp.asarray(atol, rdt)
    rtol = jnp.asarray(rtol, rdt)
    return jnp.maximum(atol, rtol * s_max)


def _values(A, hermitian):
    if hermitian:
        return jnp.abs(jnp.linalg.eigvalsh(A, symmetrize_input=False))
    return jnp.linalg.svd(A, compute_uv=False)


@linalg(name="linalg.matrix_rank")
def matrix_rank(A: T, tol=None, hermitian=False, *, atol=None, rtol=None):
    _check_ndim(A, "torch.linalg.matrix_rank")
    _check_float(A, "torch.linalg.matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    s = _values(A, hermitian)
    m, n = A.shape[-2:]
    cut = _tolerances(jnp.max(s, -1, initial=0.0), atol, rtol, m, n, A.dtype)
    return jnp.sum(s > cut[..., None], axis=-1).astype(jnp.int64)


def _pinv(A, atol, rtol, hermitian):
    """The pseudo-inverse, whose derivative is PyTorch's `pinv_backward` (Golub and Pereyra's,
    exact where the rank is locally constant): jax's, through the SVD with its small singular
    values cut, is wrong on rank-deficient matrices."""
    return _derivatives.with_jvp(lambda A: _pinv_value(A, atol, rtol, hermitian), _pinv_tangent)(A)


def _pinv_tangent(primals, tangents, X):
    # d(A+) = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X,  X = A+
    (A,), (dA,) = primals, tangents
    dAh, Xh = _mH(dA), _mH(X)
    AX, XA = _matmul(A, X), _matmul(X, A)
    I_m = jnp.eye(A.shape[-2], dtype=A.dtype)
    I_n = jnp.eye(A.shape[-1], dtype=A.dtype)
    return (
        -_matmul(_matmul(X, dA), X)
        + _matmul(_matmul(_matmul(X, Xh), dAh), I_m - AX)
        + _matmul(_matmul(I_n - XA, dAh), _matmul(Xh, X))
    ).astype(X.dtype)


def _pinv_value(A, atol, rtol, hermitian):
    m, n = A.shape[-2:]
    if hermitian:
        w, v = jnp.linalg.eigh(A, symmetrize_input=False)
        cut = _tolerances(jnp.max(jnp.abs(w), -1, initial=0.0), atol, rtol, m, n, A.dtype)
        winv = jnp.where(jnp.abs(w) > cut[..., None], 1 / jnp.where(w == 0, 1, w), 0)
        return _matmul(v * winv[..., None, :].astype(v.dtype), _mH(v))
    u, s, vh = jnp.linalg.svd(A, full_matrices=False)
    cut = _tolerances(jnp.max(s, -1, initial=0.0), atol, rtol, m, n, A.dtype)
    sinv = jnp.where(s > cut[..., None], 1 / jnp.where(s == 0, 1, s), 0)
    return _matmul(_mH(vh) * sinv[..., None, :].astype(A.dtype), _mH(u))


def _check_pinv(A):
    if A.ndim < 2 or not _is_float(A):
        shape = list(A.shape)
        raise RuntimeError(
            f"linalg.pinv({c10_name(A)}{{{shape}}}): expected a tensor with 2 "
            f"or more dimensions of float, double, cfloat or cdouble types"
        )


@linalg(name="linalg.pinv", node="LinalgPinvBackward0")
def pinv(A: T, rcond=None, hermitian=False, *, atol=None, rtol=None):
    _check_pinv(A)
    if rcond is not None:
        rtol = rcond
    return _pinv(A, atol, rtol, hermitian)


@legacy(node="LinalgPinvBackward0")
def pinverse(input: T, rcond=1e-15):
    _check_pinv(input)
    return _pinv(input, None, rcond, False)
