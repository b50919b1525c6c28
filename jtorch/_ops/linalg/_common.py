"""What every `torch.linalg` file shares: the two declaration forms, the argument checks
(with PyTorch's messages) and small matrix helpers."""

import jax.numpy as jnp
import numpy as np

from ..._dtype import c10_name
from .._registry import NONE, broadcast_error, op
from ..matmul import HIGHEST


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
