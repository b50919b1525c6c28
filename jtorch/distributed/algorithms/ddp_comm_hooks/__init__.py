"""`torch.distributed.algorithms.ddp_comm_hooks`: DDP communication hooks by name."""

from __future__ import annotations

from enum import Enum
from functools import partial

from . import default_hooks, post_localSGD_hook, powerSGD_hook  # noqa: F401

__all__ = ["DDPCommHookType", "register_ddp_comm_hook"]


def _ddp_comm_hook_wrapper(comm_hook, model, state) -> None:
    model.register_comm_hook(state, comm_hook)


class DDPCommHookType(Enum):
    """Matches `DDPCommHookType`: the built-in hooks, each registered on a DDP model by
    `register_ddp_comm_hook`."""

    ALLREDUCE = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.bf16_compress_hook)


def register_ddp_comm_hook(comm_hook_type: DDPCommHookType, model, state=None) -> None:
    """Registers the hook `comm_hook_type` names on the DDP `model`."""
    comm_hook_type.value(model=model, state=state)
