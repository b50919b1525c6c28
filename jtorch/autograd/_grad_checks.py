"""Checks PyTorch's backward formulas make on the incoming gradients' values.

The singular vectors of a complex SVD and the eigenvectors of a complex eigendecomposition
are unique only up to a phase e^{i phi} per vector; a loss that depends on that phase has
no gradient. PyTorch's `svd_backward` and `linalg_eig_backward` (FunctionsManual.cpp)
test the loss's invariance on the gradient they receive and raise otherwise. The test
reads values, so it runs on the host, before the node's VJP: `check_for` gives the check
an autograd node runs (`FnNode.grad_check`), and a graph holding one stays off the fused
backward, which traces its VJPs without values (`_fused._plain`).
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

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


def _svd_check(v_columns: bool, outs, grads) -> None:
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


def _eig_check(fn: str, outs, grads) -> None:
    """PyTorch's test in `linalg_eig_backward`: Im diag(V^H gV) = 0, within 1e-2."""
    gv = _host(grads[1])
    if gv is None:
        return
    im = _im_diag_left(np.asarray(outs[1]), gv)
    if not np.allclose(im, 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError(_EIG_MESSAGE.format(fn=fn))


# op (torch's dotted name) -> (index of the output holding the vectors, check(outs, grads))
_CHECKS: dict[str, tuple[int, Callable]] = {
    "linalg.svd": (0, functools.partial(_svd_check, False)),
    "svd": (0, functools.partial(_svd_check, True)),
    "linalg.eigh": (1, functools.partial(_eig_check, "linalg_eigh_backward")),
    "linalg.eig": (1, functools.partial(_eig_check, "linalg_eig_backward")),
}
# the ops' short names (`OpDef.name`: "svd" for both SVDs), a cheap first test
NAMES = frozenset(n.rsplit(".", 1)[-1] for n in _CHECKS)


@functools.cache
def _by_def() -> dict:
    from .._ops._opdef import OPS

    return {OPS[name]: entry for name, entry in _CHECKS.items()}


def check_for(op, out_arrays: list) -> Callable | None:
    """The check a node of `op` (an OpDef) with these outputs runs on its incoming
    gradients (`check(grads)`), or None: only complex vectors have a phase to depend on."""
    entry = _by_def().get(op)
    if entry is None or not np.iscomplexobj(out_arrays[entry[0]]):
        return None
    return functools.partial(entry[1], tuple(out_arrays))
