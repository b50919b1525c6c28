"""Flattening a nested state dict to dotted keys and back, as DCP stores it."""

from __future__ import annotations

from collections.abc import Mapping

from ..._tensor import Tensor

__all__ = ["flatten_state_dict", "set_element", "unflatten_state_dict"]


def _is_leaf(value) -> bool:
    """PyTorch's rule: a mapping is walked; a list is walked when it holds a tensor or a
    container that is walked; anything else (tuples included) is one entry."""
    if isinstance(value, Mapping):
        return False
    if not isinstance(value, list):
        return True
    for entry in value:
        if isinstance(entry, (Mapping, list)) and not _is_leaf(entry):
            return False
        if isinstance(entry, Tensor):
            return False
    return True


def flatten_state_dict(state_dict: dict) -> tuple[dict, dict]:
    """`({"a.b": leaf}, {"a.b": ("a", "b")})`, walked as PyTorch walks a state dict (mapping
    keys become strings in the path; list positions stay ints)."""
    flat, mapping = {}, {}

    def walk(value, path: tuple) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, path + (str(k),))
        elif _is_leaf(value):
            key = ".".join(str(p) for p in path)
            flat[key] = value
            mapping[key] = path
        else:
            for i, v in enumerate(value):
                walk(v, path + (i,))

    for k, v in state_dict.items():
        walk(v, (str(k),))
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
