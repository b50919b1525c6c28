"""Collectives of picklable Python objects: `all_gather_object`, `broadcast_object_list`,
`gather_object`, `scatter_object_list`.

As in PyTorch, each object is pickled to bytes, which travel as a uint8 array through the
tensor collectives: the lengths are gathered first, then the byte arrays, each padded to
the longest. Objects come back unpickled, so even over one rank a result is a copy.
"""

from __future__ import annotations

import io
import pickle

import jax
import jax.numpy as jnp
import numpy as np

from . import _runtime
from ._process_group import group_root, not_in_group, resolve
from ._xla import run_on_group as _run

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list"]


def _dumps(obj) -> np.ndarray:
    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    return np.frombuffer(buf.getvalue(), dtype=np.uint8)


def _loads(data: np.ndarray):
    return pickle.loads(data.tobytes())


def _gather_bytes(data: np.ndarray, pg) -> list:
    """Every rank's byte string, in group-rank order."""
    if pg.size() == 1:
        return [data]
    device = _runtime.local_device("cpu")
    sizes = _run("all_gather", pg, jax.device_put(jnp.asarray([data.size], jnp.int64), device))
    sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
    padded = np.zeros(max(sizes), np.uint8)
    padded[: data.size] = data
    gathered = np.asarray(_run("all_gather", pg, jax.device_put(jnp.asarray(padded), device)))
    return [gathered[i, :n] for i, n in enumerate(sizes)]


def _broadcast_bytes(data: np.ndarray | None, root: int, pg) -> np.ndarray:
    """The root's byte string on every rank."""
    if pg.size() == 1:
        return data
    device = _runtime.local_device("cpu")
    size = np.asarray([0 if data is None else data.size], np.int64)
    size = int(
        np.asarray(_run("broadcast", pg, jax.device_put(jnp.asarray(size), device), root))[0]
    )
    padded = np.zeros(size, np.uint8) if data is None else data
    return np.asarray(_run("broadcast", pg, jax.device_put(jnp.asarray(padded), device), root))


def _root(group, rank, pg) -> int:
    return group_root(group, rank, pg)


def all_gather_object(object_list, obj, group=None) -> None:
    """Matches `torch.distributed.all_gather_object`: `object_list[i]` gets rank i's `obj`."""
    if not_in_group(group, "all_gather_object"):
        return
    pg = resolve(group)
    if len(object_list) != pg.size():
        raise ValueError(
            f"object_list must have one element per rank ({pg.size()}), got {len(object_list)}"
        )
    for i, data in enumerate(_gather_bytes(_dumps(obj), pg)):
        object_list[i] = _loads(data)


def gather_object(
    obj, object_gather_list=None, dst: int | None = None, group=None, group_dst=None
) -> None:
    """Matches `torch.distributed.gather_object`: the destination's list gets every rank's."""
    if not_in_group(group, "gather_object"):
        return
    pg = resolve(group)
    root = _root(group_dst, dst, pg)
    _check_root(root, pg)
    mine = pg.rank() == root
    if mine and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError(
            f"Argument ``object_gather_list`` must be specified on destination "
            f"rank with one element per rank ({pg.size()})"
        )
    if not mine and object_gather_list is not None:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    gathered = _gather_bytes(_dumps(obj), pg)
    if mine:
        for i, data in enumerate(gathered):
            object_gather_list[i] = _loads(data)


def broadcast_object_list(
    object_list, src: int | None = None, group=None, device=None, group_src=None
) -> None:
    """Matches `torch.distributed.broadcast_object_list`: the source's objects replace
    `object_list`'s elements on every rank."""
    if not_in_group(group, "broadcast_object_list"):
        return
    pg = resolve(group)
    root = _root(group_src, src, pg)
    _check_root(root, pg)
    mine = pg.rank() == root
    data = _broadcast_bytes(_dumps(list(object_list)) if mine else None, root, pg)
    objects = _loads(data)
    if len(objects) != len(object_list):
        raise ValueError(
            f"object_list has {len(object_list)} elements, the source's has {len(objects)}"
        )
    if not mine:
        object_list[:] = objects


def scatter_object_list(
    scatter_object_output_list,
    scatter_object_input_list=None,
    src: int | None = None,
    group=None,
    group_src=None,
) -> None:
    """Matches `torch.distributed.scatter_object_list`: rank i's output list gets the
    source's `scatter_object_input_list[i]` as its first element."""
    if not_in_group(group, "scatter_object_list"):
        return
    pg = resolve(group)
    root = _root(group_src, src, pg)
    _check_root(root, pg)
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    mine = pg.rank() == root
    if mine and (scatter_object_input_list is None or len(scatter_object_input_list) != pg.size()):
        raise ValueError(
            f"scatter_object_input_list must have one element per rank "
            f"({pg.size()}) on the source rank"
        )
    data = _broadcast_bytes(_dumps(list(scatter_object_input_list)) if mine else None, root, pg)
    scatter_object_output_list[0] = _loads(data)[pg.rank()]


def _check_root(root: int, pg) -> None:
    if not 0 <= root < pg.size():
        raise ValueError(f"Invalid root rank {root}: the group has {pg.size()} rank(s)")
