"""Flattening a nested state dict to dotted keys and back, as DCP stores it."""

from __future__ import annotations

from ..._tensor import Tensor

__all__ = ["flatten_state_dict", "set_element", "unflatten_state_dict"]


def _holds_tensors(value) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, dict):
        return any(_holds_tensors(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_tensors(v) for v in value)
    return False


def flatten_state_dict(state_dict: dict) -> tuple[dict, dict]:
    """`({"a.b": leaf}, {"a.b": ("a", "b")})`: dicts are walked, and lists or tuples that hold
    tensors; any other value is a leaf (PyTorch's traversal)."""
    flat, mapping = {}, {}

    def walk(value, path: tuple) -> None:
        if isinstance(value, dict) and path == ():
            for k, v in value.items():
                walk(v, (k,))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, path + (k,))
        elif isinstance(value, (list, tuple)) and _holds_tensors(value):
            for i, v in enumerate(value):
                walk(v, path + (i,))
        else:
            key = ".".join(str(p) for p in path)
            flat[key] = value
            mapping[key] = path

    walk(state_dict, ())
    return flat, mapping


def set_element(root: dict, path: tuple, value) -> None:
    """Sets `root[p0][p1]...` to `value`, making dicts (or lists, for int keys) on the way."""
    cur = root
    for i, key in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(cur, list):
            while len(cur) <= key:
                cur.append(None)
            if cur[key] is None:
                cur[key] = [] if isinstance(nxt, int) else {}
            cur = cur[key]
        else:
            cur = cur.setdefault(key, [] if isinstance(nxt, int) else {})
    last = path[-1]
    if isinstance(cur, list):
        while len(cur) <= last:
            cur.append(None)
    cur[last] = value


def unflatten_state_dict(flat: dict, mapping: dict) -> dict:
    out: dict = {}
    for key, value in flat.items():
        set_element(out, mapping[key], value)
    return out
