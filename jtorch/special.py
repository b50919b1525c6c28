"""`torch.special`: the ops the registry publishes under this namespace."""

from ._ops._registry import NAMESPACES as _NAMESPACES

# `torch.special.logsumexp` is `torch.logsumexp` under another name.
_NAMESPACES["special"].setdefault("logsumexp", _NAMESPACES[""]["logsumexp"])
globals().update(_NAMESPACES["special"])
