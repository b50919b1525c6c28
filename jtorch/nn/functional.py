"""`torch.nn.functional`: the ops the registry publishes under this namespace."""

from .._ops._registry import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["nn.functional"])
