"""`torch.fx`: the names programs and libraries test against (`isinstance(x, torch.fx.Proxy)`,
`torch.fx._symbolic_trace.is_fx_tracing()`).

jtorch traces with jax, not with FX: no value is ever an FX `Proxy` or `Node` and no FX
tracing is ever in progress, which is what these names answer. Making an FX graph
(`symbolic_trace`, `Tracer().trace`) raises and says so.
"""

from __future__ import annotations

from ._symbolic_trace import Tracer, is_fx_tracing, symbolic_trace, wrap  # noqa: F401
from ._unavailable import NOT_AVAILABLE
from .graph import Graph  # noqa: F401
from .graph_module import GraphModule  # noqa: F401
from .node import Node, map_arg  # noqa: F401
from .proxy import Proxy  # noqa: F401

__all__ = [
    "symbolic_trace",
    "Tracer",
    "wrap",
    "Graph",
    "GraphModule",
    "Node",
    "Proxy",
    "map_arg",
    "Interpreter",
    "Transformer",
]


class Interpreter:
    """The type `torch.fx.Interpreter` (it runs FX graphs, which jtorch never has)."""

    def __init__(self, module, *args, **kwargs):
        raise RuntimeError(NOT_AVAILABLE.format(what="Interpreter"))


class Transformer(Interpreter):
    """The type `torch.fx.Transformer`."""
