"""`torch.fx.proxy`: `Proxy` (the stand-in values of an FX trace, which jtorch never runs)."""

from __future__ import annotations

from ._unavailable import NOT_AVAILABLE

__all__ = ["Proxy", "TracerBase"]


class Proxy:
    """The type `torch.fx.Proxy`; no value is ever one in jtorch."""

    def __init__(self, node, tracer=None):
        raise RuntimeError(NOT_AVAILABLE.format(what="Proxy"))


class TracerBase:
    """The type `torch.fx.proxy.TracerBase`."""
