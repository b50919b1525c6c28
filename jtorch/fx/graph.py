"""`torch.fx.graph`: `Graph` (an FX graph; jtorch never makes one)."""

from __future__ import annotations

__all__ = ["Graph"]


class Graph:
    """The type `torch.fx.Graph`; making one raises (see `torch.fx`)."""

    def __init__(self, *args, **kwargs):
        from . import NOT_AVAILABLE
        raise RuntimeError(NOT_AVAILABLE.format(what="Graph"))
