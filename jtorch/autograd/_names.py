"""Backward node names: PyTorch's (`AddBackward0`, `MmBackward0`, `SelectBackward0`, ...)."""

from __future__ import annotations

from .._tensor import Tensor

# Where PyTorch's name is not the op's name in CamelCase + "Backward0".
_NAMES = {
    "__getitem__": "IndexBackward0", "rsub": "RsubBackward1", "linear": "MmBackward0",
    "matmul": "MmBackward0", "_copy_from": "CopyBackwards", "to": "ToCopyBackward0",
    "_to_copy": "ToCopyBackward0", "contiguous": "CloneBackward0",
    "cross_entropy": "NllLossBackward0", "dropout": "MulBackward0",
    "reshape": "ViewBackward0", "flatten": "ViewBackward0", "view_as": "ViewBackward0",
    "narrow": "SliceBackward0", "_index": "IndexBackward0", "_select": "SelectBackward0",
    "_slice": "SliceBackward0",
}


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_"))


def node_name(op) -> str:
    name = getattr(op, "autograd_name", None)
    if name is None:
        name = _NAMES.get(op.name) or _camel(op.name) + "Backward0"
        op.autograd_name = name
    return name


def pow_name(slot_values) -> str:
    base, exp = slot_values[0], slot_values[1]
    if not isinstance(base, Tensor):
        return "PowBackward2"
    return "PowBackward1" if isinstance(exp, Tensor) and exp.ndim else "PowBackward0"


def index_name(idx, shape) -> str:
    """`x[0]` is a SelectBackward0, `x[1:]` a SliceBackward0: PyTorch names the last step."""
    name, d = "AliasBackward0", 0
    for i in idx:
        if i is None:
            name = "UnsqueezeBackward0"
            continue
        if isinstance(i, slice):
            if (i.start, i.stop, i.step) != (0, shape[d], 1):
                name = "SliceBackward0"
        else:
            name = "SelectBackward0"
        d += 1
    return name
