"""`torch.distributed.algorithms`: Join, DDP communication hooks, model averaging and the
activation-checkpoint wrapper."""

from .join import Join, Joinable, JoinHook  # noqa: F401

__all__ = ["Join", "JoinHook", "Joinable"]
