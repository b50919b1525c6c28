"""`torch.distributed.checkpoint.format_utils`: converting between DCP and `torch.save`."""

from __future__ import annotations

import os

from .default_planner import DefaultLoadPlanner
from .filesystem import FileSystemReader
from .state_dict_loader import _load_state_dict
from .state_dict_saver import save

__all__ = ["dcp_to_torch_save", "torch_save_to_dcp"]


class _EmptyStateDictLoadPlanner(DefaultLoadPlanner):
    """Loads every entry of a checkpoint into an empty state dict, nested as it was saved."""

    _load_everything = True

    def __init__(self, keys=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.keys = keys


def dcp_to_torch_save(dcp_checkpoint_dir, torch_save_path) -> None:
    """Matches `torch.distributed.checkpoint.format_utils.dcp_to_torch_save`."""
    from ... import save as torch_save

    sd: dict = {}
    _load_state_dict(
        sd, FileSystemReader(dcp_checkpoint_dir), planner=_EmptyStateDictLoadPlanner(), no_dist=True
    )
    torch_save(sd, os.fspath(torch_save_path))


def torch_save_to_dcp(torch_save_path, dcp_checkpoint_dir) -> None:
    """Matches `torch.distributed.checkpoint.format_utils.torch_save_to_dcp`."""
    from ... import load as torch_load

    sd = torch_load(os.fspath(torch_save_path), weights_only=False)
    save(sd, checkpoint_id=dcp_checkpoint_dir, no_dist=True)
