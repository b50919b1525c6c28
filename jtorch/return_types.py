"""`torch.return_types`: the named tuples ops return (`torch.max(x, 0)` ->
`torch.return_types.max(values=..., indices=...)`), by name."""

from ._ops._registry import OPS as _OPS


def _collect() -> dict:
    out = {}
    for op in _OPS.values():
        nt = getattr(op, "namedtuple", None)
        if nt is not None:
            out.setdefault(nt.__name__, nt)
    return out


globals().update(_collect())
__all__ = sorted(_collect())
