"""`torch.fx.graph_module`: `GraphModule` (a module running an FX graph; never made here)."""

from __future__ import annotations

from ..nn.modules.module import Module

__all__ = ["GraphModule"]


class GraphModule(Module):
    """The type `torch.fx.GraphModule`; no module is ever one in jtorch."""

    def __init__(self, root, graph, class_name: str = "GraphModule"):
        from . import NOT_AVAILABLE
        raise RuntimeError(NOT_AVAILABLE.format(what="GraphModule"))
