"""`torch._dynamo`: the compiler's switches and marks, on `jtorch.compile`.

jtorch compiles by tracing Python with jax (`jtorch/_compile.py`), not by rewriting
bytecode, so everything dynamo can be told about a function already holds: every Python
function a compiled program calls is traced into it (`allow_in_graph` returns the function
as it is), programs are specialised to shapes (`mark_dynamic` records the mark, as
PyTorch does, and changes nothing), and there are no CUDA graphs (`mark_static_address`
records its mark). A graph break makes the whole call run eagerly, with one warning.
"""

from __future__ import annotations

import types

from .._compile import GraphBreak, disable, is_compiling, reset
from .._compile import compile as _compile
from .._tensor import Tensor
from . import config, eval_frame, exc  # noqa: F401
from .eval_frame import OptimizedModule, innermost_fn, is_dynamo_supported  # noqa: F401

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "disable",
    "disallow_in_graph",
    "explain",
    "forbid_in_graph",
    "graph_break",
    "is_compiling",
    "is_dynamo_supported",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic",
    "nonstrict_trace",
    "optimize",
    "OptimizedModule",
    "reset",
    "run",
    "config",
]


def _each(fn):
    return fn if isinstance(fn, (list, tuple)) else [fn]


def allow_in_graph(fn):
    """Matches `torch._dynamo.allow_in_graph`: returns `fn` (jtorch traces every function a
    compiled program calls; there is nothing to allow)."""
    for f in _each(fn):
        if not callable(f):
            raise TypeError(f"allow_in_graph expects a callable, but got {type(f).__name__}")
    return fn


def nonstrict_trace(traceable_fn):
    """Matches `torch._dynamo.nonstrict_trace`: `fn` is traced as it is."""
    return traceable_fn


def disallow_in_graph(fn):
    """Matches `torch._dynamo.disallow_in_graph`: calls of `fn` run outside compiled
    programs (a call that reaches one runs eagerly)."""
    return disable(fn)


def forbid_in_graph(fn):
    """Matches `torch._dynamo.forbid_in_graph`: tracing a call of `fn` is an error."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if is_compiling():
            raise exc.Unsupported(
                f"forbidden callable {fn.__qualname__} called inside a compiled function"
            )
        return fn(*args, **kwargs)

    return wrapper


def graph_break() -> None:
    """Matches `torch._dynamo.graph_break`: inside a compiled call, that call runs eagerly."""
    if is_compiling():
        raise GraphBreak("torch._dynamo.graph_break() called")


def assume_constant_result(fn):
    """Matches `torch._dynamo.assume_constant_result`: marks `fn` (its result is traced
    like any value in jtorch)."""
    fn._dynamo_marked_constant = True
    return fn


def _check_tensor(t, what: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} expects a tensor but received {type(t)}")


def mark_static_address(t, guard: bool = False) -> None:
    """Matches `torch._dynamo.mark_static_address`: records the mark (no CUDA graphs)."""
    _check_tensor(t, "mark_static_address")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None) -> None:  # noqa: A002
    """Matches `torch._dynamo.mark_dynamic`: records dims PyTorch would keep symbolic
    (jtorch's programs are specialised to shapes; a new shape traces again)."""
    if isinstance(index, int):
        if not hasattr(t, "_dynamo_dynamic_indices"):
            t._dynamo_dynamic_indices = set()
        t._dynamo_dynamic_indices.add(index)
        return
    for i in index:
        mark_dynamic(t, i, min=min, max=max)


def maybe_mark_dynamic(t, index) -> None:
    """Matches `torch._dynamo.maybe_mark_dynamic` (records, as `mark_dynamic`)."""
    if isinstance(index, int):
        if not hasattr(t, "_dynamo_weak_dynamic_indices"):
            t._dynamo_weak_dynamic_indices = set()
        t._dynamo_weak_dynamic_indices.add(index)
        return
    for i in index:
        maybe_mark_dynamic(t, i)


def mark_static(t, index=None) -> None:
    """Matches `torch._dynamo.mark_static`: records dims (or a module) as static."""
    if not isinstance(t, Tensor):
        if isinstance(t, type):
            t._dynamo_marked_static = True
            return t
        t._dynamo_marked_static = True
        return None
    if isinstance(index, int):
        if not hasattr(t, "_dynamo_static_indices"):
            t._dynamo_static_indices = set()
        t._dynamo_static_indices.add(index)
    elif index is None:
        for i in range(t.dim()):
            mark_static(t, i)
    else:
        for i in index:
            mark_static(t, i)
    return None


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """The backends `torch.compile` takes: jtorch compiles every one of them with XLA."""
    return ["inductor"]


def optimize(
    backend="inductor",
    *,
    nopython: bool = False,
    guard_export_fn=None,
    guard_fail_fn=None,
    disable: bool = False,
    dynamic=None,
):
    """Matches `torch._dynamo.optimize(backend)`: a decorator compiling with jtorch."""

    def decorate(fn):
        if disable:
            return fn
        return _compile(fn, fullgraph=nopython, dynamic=dynamic, backend=backend)

    return decorate


def run(fn=None):
    """Matches `torch._dynamo.run`: `fn` runs without compiling new programs."""
    return fn


def explain(fn, *args, **kwargs):
    """A short account of how `fn` compiles: traces and whether it fell back to eager."""
    from .._compile import CompiledFunction

    compiled = CompiledFunction(fn)
    compiled(*args, **kwargs)
    eager = any(p.eager for p in compiled._programs.values())
    return types.SimpleNamespace(
        graph_count=0 if eager else 1,
        graph_break_count=1 if eager else 0,
        trace_count=compiled.trace_count,
    )
