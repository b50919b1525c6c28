"""`torch.linalg`: the ops the registry publishes under this namespace."""

from ._ops._registry import NAMESPACES as _NAMESPACES
from ._ops.linalg.checks import LinAlgError  # noqa: F401

# `torch.linalg.matmul` is `torch.matmul` under another name.
_NAMESPACES["linalg"].setdefault("matmul", _NAMESPACES[""]["matmul"])
globals().update(_NAMESPACES["linalg"])
