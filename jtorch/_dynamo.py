"""`torch._dynamo`: the knobs scripts touch (`reset`, `config`, shape hints), backed by
jtorch.compile."""

import collections
import types

from ._compile import disable, is_compiling, reset  # noqa: F401

config = types.SimpleNamespace(suppress_errors=False, cache_size_limit=8, verbose=False)


def explain(fn, *args, **kwargs):
    """A short account of how `fn` compiles: traces and whether it fell back to eager."""
    from ._compile import CompiledFunction
    compiled = CompiledFunction(fn)
    compiled(*args, **kwargs)
    eager = any(p.eager for p in compiled._programs.values())
    return types.SimpleNamespace(graph_count=0 if eager else 1,
                                 graph_break_count=1 if eager else 0,
                                 trace_count=compiled.trace_count)


# Shape hints. jtorch compiles a program per shape whatever they say (a new shape traces
# again, DESIGN 13); they are recorded on the tensor as PyTorch records them, so code that
# sets or reads them runs unchanged.

class _DimRange(collections.namedtuple("_DimRange", "dim min max")):
    """Matches `torch._dynamo.decorators._DimRange`."""


def _each(index, mark, *args, **kwargs) -> bool:
    if isinstance(index, int):
        return False
    if not isinstance(index, (list, tuple)):
        raise AssertionError(f"Expected index to be int, list, or tuple, got {type(index)}")
    for i in index:
        mark(*args, i, **kwargs)
    return True


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Matches `torch._dynamo.mark_dynamic` (a hint: see above)."""
    if _each(index, mark_dynamic, t, min=min, max=max, specialize_on=specialize_on):
        return
    if not hasattr(t, "_dynamo_dynamic_indices"):
        t._dynamo_dynamic_indices = set()
        t._dynamo_dynamic_range = set()
        t._dynamo_hint_overrides = {}
    if not hasattr(t, "_specialize_on"):
        t._specialize_on = {}
    if hint_override:
        t._dynamo_hint_overrides[index] = hint_override
    t._dynamo_dynamic_indices.add(index)
    t._dynamo_dynamic_range.add(_DimRange(index, min, max))
    t._has_dynamo_dim_marking = True
    t._specialize_on[index] = specialize_on if specialize_on is not None else []


def maybe_mark_dynamic(t, index):
    """Matches `torch._dynamo.maybe_mark_dynamic` (a hint: see above)."""
    if _each(index, maybe_mark_dynamic, t):
        return
    if not hasattr(t, "_dynamo_weak_dynamic_indices"):
        t._dynamo_weak_dynamic_indices = set()
    t._dynamo_weak_dynamic_indices.add(index)
    t._has_dynamo_dim_marking = True


def mark_static(t, index=None):
    """Matches `torch._dynamo.mark_static` for tensors and module classes (a hint)."""
    from ._tensor import Tensor
    from .nn import Module
    if is_compiling():
        return
    # (as in PyTorch, anything else that is not a class fails in issubclass)
    if not isinstance(t, Tensor) and issubclass(t, Module):
        t._dynamo_marked_static = True
        return t
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static expects a tensor/nn.Module class but received {type(t)}")
    if index is None:
        for i in range(t.dim()):
            mark_static(t, i)
        return
    if _each(index, mark_static, t):
        return
    if not hasattr(t, "_dynamo_static_indices"):
        t._dynamo_static_indices = set()
    t._dynamo_static_indices.add(index)
    t._has_dynamo_dim_marking = True
