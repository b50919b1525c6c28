"""Matrix functions: `matrix_power`, `matrix_exp`, and `vander` (the matrix of the powers
of a vector)."""

import jax
import jax.numpy as jnp

from .._registry import T
from ._common import _check_float, _check_square, _matmul, _square_float, linalg
from .checks import SINGULAR, info_check, power_info
from .solvers import _inv_ex

# ---------------------------------------------------------------------------
# Powers and exponentials


# PyTorch reports the inverse a negative power takes under linalg.inv's name
@linalg(
    name="linalg.matrix_power",
    aliases=("matrix_power",),
    method="matrix_power",
    after=info_check("linalg.inv", SINGULAR, power_info),
)
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


@linalg(
    name="linalg.matrix_exp",
    aliases=("matrix_exp",),
    method="matrix_exp",
    node="LinalgMatrixExpBackward0",
)
def matrix_exp(A: T):
    _square_float(A, "linalg.matrix_exp")
    if A.size == 0:
        return A
    return _expm(A)


@linalg(name="linalg.vander", node="CatBackward0")
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
