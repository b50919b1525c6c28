"""Errors that depend on the values (a singular matrix, one that is not positive-definite):
`LinAlgError`, and the checks run after the published functions return, eagerly only.

A compiled kernel cannot raise on its values, so the `_ex` variants report LAPACK's `info`
as PyTorch's do, and `install_checks` (run once every linalg op is declared) wraps the
published functions to raise from it."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ... import _meta
from .._registry import METHODS, NAMESPACES

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
