"""`torch.distributed.checkpoint.state_dict_loader`: `load`, in place."""

from __future__ import annotations

import warnings

from ..._tensor import Tensor
from ._nested_dict import flatten_state_dict, set_element
from .api import CheckpointException
from .state_dict_saver import _storage
from .stateful import Stateful

__all__ = ["load", "load_state_dict"]


def _load_state_dict(
    state_dict: dict,
    storage_reader,
    process_group=None,
    coordinator_rank: int = 0,
    no_dist: bool = False,
    planner=None,
) -> None:
    """Loads the checkpoint's entries into `state_dict` in place.

    A tensor entry is copied into the tensor already there (a DTensor's local tensor
    included); any other entry replaces the value. With an empty-state-dict planner
    (`format_utils._EmptyStateDictLoadPlanner`) every entry of the checkpoint is loaded.
    """
    metadata = storage_reader.read_metadata()
    if getattr(planner, "_load_everything", False):
        keys = list(metadata.state_dict_metadata)
        values = storage_reader.read_entries(keys)
        mapping = metadata.planner_data or {k: (k,) for k in keys}
        for k in keys:
            set_element(state_dict, tuple(mapping.get(k, (k,))), values[k])
        return
    flat, mapping = flatten_state_dict(state_dict)
    missing = [k for k in flat if k not in metadata.state_dict_metadata]
    if missing and not getattr(planner, "allow_partial_load", False):
        error = RuntimeError(f"Missing key in checkpoint state_dict: {missing[0]}.")
        raise CheckpointException("Failed to load checkpoint", {0: error})
    keys = [k for k in flat if k in metadata.state_dict_metadata]
    values = storage_reader.read_entries(keys)
    from ... import no_grad

    with no_grad():
        for k in keys:
            dest, value = flat[k], values[k]
            if isinstance(dest, Tensor) and isinstance(value, Tensor):
                if tuple(dest.shape) != tuple(value.shape):
                    error = ValueError(
                        f"Size mismatch between saved {tuple(value.shape)} and "
                        f"current: {tuple(dest.shape)} for {k}"
                    )
                    raise CheckpointException("Failed to load checkpoint", {0: error})
                _copy_into(dest, value)
            else:
                set_element(state_dict, mapping[k], value)


def _copy_into(dest: Tensor, value: Tensor) -> None:
    """Copies the whole saved `value` into `dest`; a DTensor keeps its rank's piece."""
    from ..tensor import DTensor

    if not isinstance(dest, DTensor):
        dest.copy_(value)
        return
    from ..._tensor import wrap
    from ..tensor._redistribute import local_chunk

    piece = local_chunk(value._array, dest.device_mesh, dest.placements, tuple(dest.shape))
    dest.to_local().copy_(wrap(piece))


def load(
    state_dict: dict,
    *,
    checkpoint_id=None,
    storage_reader=None,
    planner=None,
    process_group=None,
    no_dist: bool = False,
) -> None:
    """Matches `torch.distributed.checkpoint.load`: fills `state_dict` in place; a `Stateful`
    value is loaded through its `state_dict()` and `load_state_dict()`."""
    reader = _storage(checkpoint_id, storage_reader, "reader")
    plain = {
        k: (v.state_dict() if isinstance(v, Stateful) and not isinstance(v, Tensor) else v)
        for k, v in state_dict.items()
    }
    _load_state_dict(plain, reader, planner=planner)
    for k, v in state_dict.items():
        if isinstance(v, Stateful) and not isinstance(v, Tensor):
            v.load_state_dict(plain[k])
        else:
            state_dict[k] = plain[k]


def load_state_dict(
    state_dict: dict,
    storage_reader,
    process_group=None,
    coordinator_rank: int = 0,
    no_dist: bool = False,
    planner=None,
) -> None:
    """PyTorch's deprecated name of `load`."""
    warnings.warn(
        "'load_state_dict' is deprecated and will be removed in future versions. "
        "Please use 'load' instead.",
        FutureWarning,
        stacklevel=2,
    )
    _load_state_dict(state_dict, storage_reader, planner=planner)
