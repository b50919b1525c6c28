"""`torch.distributed.checkpoint.optimizer`: loading a sharded optimizer state dict."""

from __future__ import annotations

from .state_dict_loader import _load_state_dict

__all__ = ["load_sharded_optimizer_state_dict"]


def load_sharded_optimizer_state_dict(
    model_state_dict: dict, optimizer_key: str, storage_reader, planner=None
) -> dict:
    """Matches PyTorch's: `{optimizer_key: state}` read from the checkpoint (its entries under
    `optimizer_key`, nested as they were saved)."""
    from .format_utils import _EmptyStateDictLoadPlanner

    everything: dict = {}
    _load_state_dict(everything, storage_reader, planner=_EmptyStateDictLoadPlanner())
    if optimizer_key not in everything:
        raise RuntimeError(f"Missing key in checkpoint state_dict: {optimizer_key}.")
    return {optimizer_key: everything[optimizer_key]}
