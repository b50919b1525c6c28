"""`torch.fx.graph_module`: `GraphModule` (a module running an FX graph; never made here)."""

from __future__ import annotations

from ..nn.modules.module import Module
from ._unavailable import NOT_AVAILABLE

__all__ = ["GraphModule"]


class GraphModule(Module):
    """The type `torch.fx.GraphModule`; no module is ever one in jtorch."""

    def __init__(self, root, graph, class_name: str = "GraphModule"):
        raise RuntimeError(NOT_AVAILABLE.format(what="GraphModule"))
