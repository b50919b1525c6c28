"""`torch.fx.node`: `Node` and `map_arg`."""

from __future__ import annotations

from ._unavailable import NOT_AVAILABLE

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Argument = object
Target = object


class Node:
    """The type `torch.fx.Node` (a node of an FX graph; jtorch never makes FX graphs)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(NOT_AVAILABLE.format(what="Node"))


def map_aggregate(a, fn):
    """Matches `torch.fx.node.map_aggregate`: `fn` over every leaf of nested tuples, lists,
    dicts and slices."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(x, fn) for x in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(
            map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn)
        )
    return fn(a)


def map_arg(a, fn):
    """Matches `torch.fx.node.map_arg`: `fn` over every Node in `a`."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)
