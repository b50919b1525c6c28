"""`torch._dynamo`: the knobs scripts touch (`reset`, `config`), backed by jtorch.compile."""

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
