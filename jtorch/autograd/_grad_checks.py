"""Checks PyTorch's backward formulas make on the incoming gradients' values.

An op declares its check (`grad_check=(i, check)` on its declaration: the complex SVD's and
eigendecompositions' phase checks, `_ops/linalg/checks.py`); the test reads values, so it
runs on the host, before the node's VJP: `check_for` gives the check an autograd node runs
(`FnNode.grad_check`), and a graph holding one stays off the fused backward, which traces
its VJPs without values (`_fused._plain`).
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np


def check_for(op, out_arrays: list) -> Callable | None:
    """The check a node of `op` (an OpDef with a `grad_check`) with these outputs runs on its
    incoming gradients (`check(grads)`), or None: only complex vectors (output `i` of the
    declaration's `(i, check)`) have a phase to depend on."""
    i, check = op.grad_check
    if not np.iscomplexobj(out_arrays[i]):
        return None
    return functools.partial(check, tuple(out_arrays))
