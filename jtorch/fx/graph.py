"""`torch.fx.graph`: `Graph` (an FX graph; jtorch never makes one)."""

from __future__ import annotations

from ._unavailable import NOT_AVAILABLE

__all__ = ["Graph"]


class Graph:
    """The type `torch.fx.Graph`; making one raises (see `torch.fx`)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(NOT_AVAILABLE.format(what="Graph"))
