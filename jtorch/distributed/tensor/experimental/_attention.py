"""`torch.distributed.tensor.experimental._attention`: context-parallel attention settings."""

from __future__ import annotations

from enum import Enum

from . import context_parallel  # noqa: F401

__all__ = ["context_parallel", "set_rotate_method"]


class _RotateMethod(Enum):
    ALL_TO_ALL = "alltoall"
    ALL_GATHER = "allgather"


_cp_options = {"rotate_method": _RotateMethod.ALL_GATHER}


def set_rotate_method(rotate_method: str) -> None:
    """How context-parallel attention passes key/value shards between ranks."""
    if rotate_method == "alltoall":
        _cp_options["rotate_method"] = _RotateMethod.ALL_TO_ALL
    elif rotate_method == "allgather":
        _cp_options["rotate_method"] = _RotateMethod.ALL_GATHER
    else:
        raise NotImplementedError(
            f"Context Parallel does not support using {rotate_method} for kv shards rotation"
        )
