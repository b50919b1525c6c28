"""`torch.compiler`: `compile`, `disable`, `is_compiling` and the marks of `torch._dynamo`.

jtorch compiles with jax (see `jtorch._dynamo`): there are no CUDA graphs
(`cudagraph_mark_step_begin` has no step to mark) and no export (`is_exporting` is False).
`stats()` is jtorch's own: what compiling has cost and what the program caches hold.
"""

from __future__ import annotations

import functools

from ._compile import compile, disable, is_compiling, reset  # noqa: F401
from ._dynamo import allow_in_graph, assume_constant_result, list_backends  # noqa: F401
from ._programs import stats  # noqa: F401

__all__ = [
    "compile",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "reset",
    "allow_in_graph",
    "assume_constant_result",
    "list_backends",
    "cudagraph_mark_step_begin",
    "substitute_in_graph",
    "nested_compile_region",
    "wrap_numpy",
]


def is_dynamo_compiling() -> bool:
    """Matches `torch.compiler.is_dynamo_compiling`: True while a compiled function is
    traced."""
    return is_compiling()


def is_exporting() -> bool:
    """Matches `torch.compiler.is_exporting`: False (jtorch has no `torch.export`)."""
    return False


def cudagraph_mark_step_begin() -> None:
    """Matches `torch.compiler.cudagraph_mark_step_begin`: jtorch records no CUDA graphs,
    so there is no step to mark."""


def substitute_in_graph(
    original_fn, *, can_constant_fold_through: bool = False, skip_signature_check: bool = False
):
    """Matches `torch.compiler.substitute_in_graph`: the decorated polyfill stands for
    `original_fn` in compiled code; calling it runs `original_fn` (jtorch traces the
    original itself)."""

    def decorate(polyfill):
        @functools.wraps(original_fn)
        def wrapper(*args, **kwargs):
            return original_fn(*args, **kwargs)

        wrapper.__torch_dynamo_polyfill__ = polyfill
        return wrapper

    return decorate


def nested_compile_region(fn=None, options=None):
    """Matches `torch.compiler.nested_compile_region`: `fn` is traced in place."""
    return (lambda f: f) if fn is None else fn


def wrap_numpy(fn):
    """Matches `torch.compiler.wrap_numpy`: `fn` written on numpy arrays takes and returns
    tensors."""
    import numpy as np

    from . import _tensor
    from ._ops.creation import from_numpy
    from .utils import _pytree

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args, kwargs = _pytree.tree_map_only(_tensor.Tensor, lambda t: t.numpy(), (args, kwargs))
        out = fn(*args, **kwargs)
        return _pytree.tree_map_only(np.ndarray, from_numpy, out)

    return wrapper
