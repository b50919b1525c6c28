"""Errors that depend on the values (a singular matrix, one that is not positive-definite):
`LinAlgError`, and the checks run after the published functions return, eagerly only.

A compiled kernel cannot raise on its values, so the `_ex` variants report LAPACK's `info`
as PyTorch's do, and the plain functions check it after the call: their declarations name
an `after=` check built here (`info_check`), which raises from it.

Backward checks (a declaration's `grad_check=`): the singular vectors of a complex SVD and
the eigenvectors of a complex eigendecomposition are unique only up to a phase e^{i phi} per
vector; a loss that depends on that phase has no gradient. PyTorch's `svd_backward` and
`linalg_eig_backward` (FunctionsManual.cpp) test the loss's invariance on the gradient they
receive and raise otherwise. The test reads values, so it runs on the host, before the
node's VJP (`autograd/_grad_checks.py`)."""

import jax
import jax.numpy as jnp
import numpy as np

from ... import _meta
from .._registry import OPS

# ---------------------------------------------------------------------------
# Errors that depend on the values (eager only)


class LinAlgError(RuntimeError):
    """Matches `torch.linalg.LinAlgError` (PyTorch's `torch._C._LinAlgError`): a matrix that
    is singular or not positive-definite where the function needs one that is not."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "jtorch.linalg"

NOT_PD = (
    "The factorization could not be completed because the input is not "
    "positive-definite (the leading minor of order {} is not positive-definite)."
)
SINGULAR = (
    "The diagonal element {} is zero, the inversion could not be completed because "
    "the input matrix is singular."
)
SOLVE_SINGULAR = "The solver failed because the input matrix is singular."
LU_ZERO = (
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


def info_check(name: str, message: str, info_of, error=LinAlgError):
    """A declaration's `after=` check (`_registry.op`): PyTorch's error on a failed
    factorization.

    `info_of(result, args, kwargs)` gives LAPACK's `info`, or None when the call cannot
    have failed. Under tracing (compile, vmap, ...) nothing is checked, as the values are
    not known; the result then holds the nan/inf the kernel produced.
    """

    def after(result, args, kwargs) -> None:
        first = result[0] if isinstance(result, tuple) else result
        if _eager(first):
            info = info_of(result, args, kwargs)
            if info is not None:
                _raise_info(info, name, message, error)

    return after


def _ex(name: str):
    """The generated function of op `name` (an `_ex` variant), without its own check."""
    return OPS[name].fn


def info_if_not_finite(ex_name: str, **fixed):
    """Plain variants: a factorization that failed left non-finite values in the result,
    so only then is `info` computed (again, by the `_ex` kernel `ex_name`)."""

    def info_of(result, args, kwargs):
        if bool(_all_finite(result._array)):
            return None
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        return _ex(ex_name)(*args, **kwargs, **fixed)[-1]._array

    return info_of


def own_info(result, args, kwargs):
    """`_ex` variants: their own `info`, when called with `check_errors=True`."""
    return result[-1]._array if kwargs.get("check_errors") else None


def legacy_cholesky_info(result, args, kwargs):
    """`torch.cholesky(input, upper=False)`: `upper` may come positionally."""
    if bool(_all_finite(result._array)):
        return None
    input, upper = (list(args) + [kwargs.get("upper", False)])[:2]
    if "input" in kwargs:
        input = kwargs["input"]
    return _ex("linalg.cholesky_ex")(input, upper=upper).info._array


def power_info(result, args, kwargs):
    """`matrix_power(A, n)` with n < 0 inverts A first."""
    A, n = (list(args) + [kwargs.get("n")])[:2]
    if n >= 0 or bool(_all_finite(result._array)):
        return None
    return _ex("linalg.inv_ex")(A).info._array


def tensorinv_info(result, args, kwargs):
    """`tensorinv(A, ind)` inverts A as a matrix of its first `ind` dims by the rest."""
    A, ind = (list(args) + [kwargs.get("ind", 2)])[:2]
    if bool(_all_finite(result._array)):
        return None
    return _ex("linalg.inv_ex")(A.reshape(int(np.prod(A.shape[:ind])), -1)).info._array


def triangular_info(result, args, kwargs):
    """cholesky_inverse inverts a triangular factor: singular iff a diagonal entry is 0."""
    if bool(_all_finite(result._array)):
        return None
    return _lu_info((args[0] if args else kwargs["input"])._array)


def lu_info(result, args, kwargs):
    """LU factorizations: the first zero on U's diagonal."""
    return _lu_info(result[0]._array)


# ---------------------------------------------------------------------------
# Checks of the incoming gradients (`grad_check=`), run by the autograd node


_SVD_MESSAGE = (
    "svd_backward: The singular vectors in the complex case are specified up to "
    "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
    "making it ill-defined."
)
_EIG_MESSAGE = (
    "{fn}: The eigenvectors in the complex case are specified up to multiplication by "
    "e^{{i phi}}. The specified loss function depends on this quantity, so it is ill-defined."
)


def _host(g):
    """A gradient (array or Tensor, None when absent) as a numpy array, or None."""
    if g is None:
        return None
    return np.asarray(getattr(g, "_array", g))


def _im_diag_left(x, g):
    """Im diag(X^H G) (over the columns of X and G)."""
    return np.imag(np.sum(np.conj(x) * g, axis=-2))


def svd_phase_check(v_columns: bool, outs, grads) -> None:
    """PyTorch's test in `svd_backward`: Im diag(U^H gU) = -Im diag(V^H gV), within 1e-2.

    `outs` are (U, S, Vh) for `linalg.svd` and (U, S, V) for the legacy `svd`
    (`v_columns`); derivatives.yaml narrows U, Vh and their gradients to the first k =
    min(m, n) vectors first. PyTorch compares the imaginary diagonals of skew(U^H gU) and
    skew(Vh gVh^H), twice the ones here: the factor 2 is kept for the tolerance.
    """
    u, s, x = outs
    gu, gx = _host(grads[0]), _host(grads[2])
    if gu is None and gx is None:
        return
    k = s.shape[-1]
    zero = np.zeros(s.shape, np.float32)
    im_u = zero if gu is None else 2 * _im_diag_left(np.asarray(u)[..., :k], gu[..., :k])
    if gx is None:
        im_v = zero
    elif v_columns:  # V^H gV, V's columns the right singular vectors
        im_v = 2 * _im_diag_left(np.asarray(x)[..., :k], gx[..., :k])
    else:  # Vh gVh^H, Vh's rows the right singular vectors
        im_v = -2 * _im_diag_left(
            np.swapaxes(np.asarray(x)[..., :k, :], -1, -2), np.swapaxes(gx[..., :k, :], -1, -2)
        )
    if not np.allclose(im_u, -im_v, rtol=1e-2, atol=1e-2):
        raise RuntimeError(_SVD_MESSAGE)


def eig_phase_check(fn: str, outs, grads) -> None:
    """PyTorch's test in `linalg_eig_backward`: Im diag(V^H gV) = 0, within 1e-2."""
    gv = _host(grads[1])
    if gv is None:
        return
    im = _im_diag_left(np.asarray(outs[1]), gv)
    if not np.allclose(im, 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError(_EIG_MESSAGE.format(fn=fn))
