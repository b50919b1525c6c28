"""`torch.distributed.checkpoint.state_dict_saver`: `save` (and `async_save`)."""

from __future__ import annotations

import concurrent.futures
import os
import warnings

from ..._tensor import Size, Tensor
from ._nested_dict import flatten_state_dict
from .metadata import (
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    TensorProperties,
    TensorStorageMetadata,
)
from .stateful import Stateful

__all__ = ["async_save", "save", "save_state_dict"]


def _storage(checkpoint_id, given, kind: str):
    """The writer or reader to use: the given one (reset to `checkpoint_id`), or the
    filesystem's for a path, as PyTorch picks it."""
    from .filesystem import FileSystemReader, FileSystemWriter

    if given is not None:
        given.reset(checkpoint_id)
        return given
    if checkpoint_id is None:
        raise RuntimeError(
            "`checkpoint_id` must be specified if storage_reader/storage_writer is None."
        )
    if not isinstance(checkpoint_id, (str, os.PathLike)):
        raise RuntimeError(
            f"Cannot detect which StorageReader or StorageWriter to use. Please "
            f"specify the storage_writer/storage_reader. ({checkpoint_id!r})"
        )
    return (FileSystemWriter if kind == "writer" else FileSystemReader)(checkpoint_id)


def _resolve(state_dict: dict) -> dict:
    """Stateful values are replaced by their `state_dict()`; DTensors by their full value."""
    from ..tensor import DTensor

    out = {}
    for k, v in state_dict.items():
        out[k] = v.state_dict() if isinstance(v, Stateful) and not isinstance(v, Tensor) else v
    flat, mapping = flatten_state_dict(out)
    for k, v in flat.items():
        if isinstance(v, DTensor):
            flat[k] = v.full_tensor().detach()
    return flat, mapping


def _entry(value):
    if isinstance(value, Tensor):
        size = Size(value.shape)
        return TensorStorageMetadata(
            TensorProperties.create_from_tensor(value),
            size,
            [ChunkStorageMetadata(Size((0,) * len(size)), size)],
        )
    return BytesStorageMetadata()


def save(
    state_dict: dict,
    *,
    checkpoint_id=None,
    storage_writer=None,
    planner=None,
    process_group=None,
    no_dist: bool = False,
) -> Metadata:
    """Matches `torch.distributed.checkpoint.save`: writes every entry of `state_dict` (nested
    dicts flattened to dotted keys, `Stateful` values by their `state_dict()`)."""
    writer = _storage(checkpoint_id, storage_writer, "writer")
    flat, mapping = _resolve(state_dict)
    metadata = Metadata(
        state_dict_metadata={k: _entry(v) for k, v in flat.items()},
        planner_data=mapping,
        storage_meta=writer.storage_meta(),
    )
    entries = {k: (v.detach() if isinstance(v, Tensor) else v) for k, v in flat.items()}
    _on_coordinator(lambda: writer.write_entries(entries, metadata), no_dist)
    return metadata


def _on_coordinator(write, no_dist: bool) -> None:
    """Runs `write` on rank 0 of a process group of several ranks (every rank holds the
    whole entries: DTensors were gathered), the others waiting for it; its failure is
    raised on every rank as PyTorch's `CheckpointException`, never a hang."""
    from .. import distributed_c10d as c10d
    from .api import CheckpointException

    if no_dist or not c10d.is_initialized() or c10d.get_world_size() == 1:
        write()
        return
    outcome = [None]
    if c10d.get_rank() == 0:
        try:
            write()
        except Exception as e:  # noqa: BLE001 - every rank raises it below
            outcome[0] = e
    c10d.broadcast_object_list(outcome, src=0)
    if outcome[0] is not None:
        raise CheckpointException("Failed to save checkpoint", {0: outcome[0]})


def async_save(
    state_dict: dict,
    *,
    checkpoint_id=None,
    storage_writer=None,
    planner=None,
    process_group=None,
    async_checkpointer_type=None,
    async_stager=None,
    no_dist: bool = False,
    **kwargs,
):
    """Matches `torch.distributed.checkpoint.async_save`: the returned future holds the
    metadata. jtorch writes before returning (the future is already done)."""
    future = concurrent.futures.Future()
    try:
        future.set_result(
            save(
                state_dict,
                checkpoint_id=checkpoint_id,
                storage_writer=storage_writer,
                planner=planner,
            )
        )
    except Exception as e:  # noqa: BLE001 - handed to the caller through the future
        future.set_exception(e)
    return future


def save_state_dict(
    state_dict: dict,
    storage_writer,
    process_group=None,
    coordinator_rank: int = 0,
    no_dist: bool = False,
    planner=None,
) -> Metadata:
    """PyTorch's deprecated name of `save`."""
    warnings.warn(
        "'save_state_dict' is deprecated and will be removed in future versions."
        "Please use 'save' instead.",
        FutureWarning,
        stacklevel=2,
    )
    return save(state_dict, storage_writer=storage_writer, planner=planner)
