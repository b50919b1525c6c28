"""`torch.signal.windows`: window functions."""

from .._ops._registry import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["signal.windows"])
