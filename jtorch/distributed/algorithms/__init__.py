"""`torch.distributed.algorithms`: Join, DDP communication hooks, model averaging and the
activation-checkpoint wrapper."""

from .join import Join, JoinHook, Joinable  # noqa: F401

__all__ = ["Join", "JoinHook", "Joinable"]
