"""`torch.masked`: reductions and normalizations that take a `mask=`."""

from ._ops._registry import NAMESPACES as _NAMESPACES

globals().update(_NAMESPACES["masked"])
