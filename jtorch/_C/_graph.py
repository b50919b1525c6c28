"""TorchScript's IR classes (`torch._C.Graph`, `Value`, `Node`, `ScriptModule`).

Libraries name them in annotations (ONNX `symbolic` methods take a `Graph` and `Value`s),
so they exist; jtorch has no TorchScript IR, so making one raises and says so.
"""

from __future__ import annotations

_NO_IR = (
    "jtorch has no TorchScript IR: torch._C.{name} objects cannot be made. "
    "Programs run eagerly or through jtorch.compile (XLA); see jtorch.interop to get a "
    "jax function."
)


class _IRObject:
    __module__ = "torch._C"

    def __init__(self, *args, **kwargs):
        raise RuntimeError(_NO_IR.format(name=type(self).__name__))


class Graph(_IRObject):
    """Matches the name `torch._C.Graph` (a TorchScript graph)."""


class Node(_IRObject):
    """Matches the name `torch._C.Node` (a TorchScript graph node)."""


class ScriptModule(_IRObject):
    """Matches the name `torch._C.ScriptModule` (`torch.ScriptModule`), the C++ module that
    `torch.jit.ScriptModule` wraps in PyTorch."""


class Value:
    """Matches `torch._C.Value`: made only by a graph, never by a constructor."""

    __module__ = "torch._C"

    def __init__(self, *args, **kwargs):
        raise TypeError("torch._C.Value: No constructor defined!")
