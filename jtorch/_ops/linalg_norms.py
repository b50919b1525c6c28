"""`torch.linalg`, continued: norms, ranks, pseudo-inverses, powers, least squares, LDL.

The factorisations and solves these build on are in `linalg.py`.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._dtype import c10_name
from .._tensor import wrap_dim
from . import _derivatives
from ._registry import TI, T, broadcast_error, composite, name_return_type
from .linalg import (
    _broadcast_batch,
    _check_float,
    _check_ndim,
    _check_same,
    _check_square,
    _inv_ex,
    _is_float,
    _matmul,
    _mH,
    _real_dtype,
    _solve,
    _square_float,
    legacy,
    linalg,
)
from .matmul import vecdot_check

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
            f"{name}: dtype should be floating point or complex. Got {c10_name(jnp.zeros((), dt))}"
        )
    if jnp.issubdtype(x.dtype, jnp.complexfloating) and not jnp.issubdtype(dt, jnp.complexfloating):
        raise RuntimeError(
            f"{name}: dtype should be complex for complex input. Got {c10_name(jnp.zeros((), dt))}"
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
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {ord} norm on an empty "
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


@linalg(name="linalg.vector_norm")
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


@linalg(name="linalg.matrix_norm")
def matrix_norm(A: T, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    _check_ndim(A, "linalg.matrix_norm")
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    _check_matrix_ord(ord)
    A = _norm_dtype(A, dtype, "linalg.matrix_norm")
    return _matrix_norm(A, ord, dim, keepdim).astype(_real_dtype(A))


@linalg(name="linalg.norm")
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


@linalg(name="linalg.pinv")
def pinv(A: T, rcond=None, hermitian=False, *, atol=None, rtol=None):
    _check_pinv(A)
    if rcond is not None:
        rtol = rcond
    return _pinv(A, atol, rtol, hermitian)


@legacy()
def pinverse(input: T, rcond=1e-15):
    _check_pinv(input)
    return _pinv(input, None, rcond, False)


# ---------------------------------------------------------------------------
# Powers and exponentials


@linalg(name="linalg.matrix_power", aliases=("matrix_power",), method="matrix_power")
def matrix_power(A: T, n):
    _check_square(A, "linalg.matrix_power")
    if n < 0:
        _check_float(A, "linalg.inv")
        A = _inv_ex(A)[0]
        n = -n
    if n == 0:
        return jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    # Binary powering, as PyTorch does (so float results round the same way).
    result, z = None, A
    while n:
        if n & 1:
            result = z if result is None else _mm_any(result, z)
        n >>= 1
        if n:
            z = _mm_any(z, z)
    return result


def _mm_any(a, b):
    if a.dtype == jnp.bool_:
        return jnp.matmul(a.astype(jnp.int64), b.astype(jnp.int64)) != 0
    return _matmul(a, b)


# Scaling and squaring with a diagonal Pade approximant (Higham 2005): the degree and its
# norm bound theta_m, beyond which the approximant loses the dtype's precision.
_PADE = {
    7: (
        3.925724783138660,
        (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    ),
    13: (
        5.371920351148152,
        (
            64764752532480000.0,
            32382376266240000.0,
            7771770303897600.0,
            1187353796428800.0,
            129060195264000.0,
            10559470521600.0,
            670442572800.0,
            33522128640.0,
            1323241920.0,
            40840800.0,
            960960.0,
            16380.0,
            182.0,
            1.0,
        ),
    ),
}
_MAX_SQUARINGS = 40  # a 1-norm up to ~4e12; beyond it exp overflows for all but exotic inputs


def _expm(A):
    """exp of each matrix of A (..., n, n).

    Not `jax.scipy.linalg.expm`: it scales by 2^floor(log2(|A|_1 / theta)), which leaves the
    scaled norm up to twice theta, and loses float32 digits there (5.9e-5 relative error for
    exp([[10, 3], [0, 10]]), where PyTorch has 2.2e-7). Here the exponent is the ceiling.
    """
    n = A.shape[-1]
    flat = A.reshape((-1, n, n))
    degree = 7 if flat.dtype in (jnp.float32, jnp.complex64) else 13
    theta, b = _PADE[degree]
    norm = jnp.max(jnp.sum(jnp.abs(flat), axis=-2), axis=-1)
    s = jnp.ceil(jnp.log2(jnp.maximum(norm, theta) / theta))
    s = jnp.clip(jnp.where(jnp.isfinite(s), s, 0), 0, _MAX_SQUARINGS).astype(jnp.int32)
    X = flat / (2.0**s).astype(norm.dtype)[:, None, None].astype(flat.dtype)
    eye = jnp.eye(n, dtype=flat.dtype)
    X2 = _matmul(X, X)
    if degree == 7:
        X4 = _matmul(X2, X2)
        X6 = _matmul(X4, X2)
        U = _matmul(X, b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
        V = b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    else:
        X4 = _matmul(X2, X2)
        X6 = _matmul(X4, X2)
        U = _matmul(
            X,
            _matmul(X6, b[13] * X6 + b[11] * X4 + b[9] * X2)
            + b[7] * X6
            + b[5] * X4
            + b[3] * X2
            + b[1] * eye,
        )
        V = (
            _matmul(X6, b[12] * X6 + b[10] * X4 + b[8] * X2)
            + b[6] * X6
            + b[4] * X4
            + b[2] * X2
            + b[0] * eye
        )
    R = jnp.linalg.solve(V - U, V + U)
    s_max = jnp.max(s) if s.size else 0

    def square(i, R):
        # A scalar predicate, so matrices that need no more squarings cost nothing.
        return jax.lax.cond(
            i < s_max, lambda R: jnp.where((i < s)[:, None, None], _matmul(R, R), R), lambda R: R, R
        )

    R = jax.lax.fori_loop(0, _MAX_SQUARINGS, square, R)
    return R.reshape(A.shape)


@linalg(name="linalg.matrix_exp", aliases=("matrix_exp",), method="matrix_exp")
def matrix_exp(A: T):
    _square_float(A, "linalg.matrix_exp")
    if A.size == 0:
        return A
    return _expm(A)


# ---------------------------------------------------------------------------
# Least squares, tensors, Vandermonde, vecdot, diagonal


@linalg(name="linalg.lstsq", returns=("solution", "residuals", "rank", "singular_values"))
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


@linalg(name="linalg.tensorinv")
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


@linalg(name="linalg.vander")
def vander(x: T, *, N=None):
    if x.dtype == jnp.bool_:
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got Bool"
        )
    if x.ndim == 0:
        x = x[None]
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    # Cumulative products (not pow): PyTorch builds the columns as x^0, x^1 = x^0 * x, ...
    cols = jnp.concatenate(
        [jnp.ones(x.shape + (1,), x.dtype), jnp.broadcast_to(x[..., None], x.shape + (N - 1,))],
        axis=-1,
    )
    return jnp.cumprod(cols, axis=-1).astype(x.dtype)


@linalg(name="linalg.vecdot")
def vecdot(x: T, y: T, *, dim=-1):
    vecdot_check(x, y)
    err = broadcast_error(x.shape, y.shape)
    if err is not None:
        raise err
    return jnp.sum(jnp.conj(x) * y, axis=dim)


@composite(name="linalg.diagonal", method=False)
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """Matches `torch.linalg.diagonal` (a view, as `torch.diagonal`)."""
    import jtorch

    return jtorch.diagonal(A, offset=offset, dim1=dim1, dim2=dim2)


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
