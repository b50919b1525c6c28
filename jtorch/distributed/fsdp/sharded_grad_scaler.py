"""`torch.distributed.fsdp.sharded_grad_scaler`: the gradient scaler for sharded gradients.

PyTorch's `ShardedGradScaler` is `GradScaler` with its found-inf flags all-reduced over the
process group; over one rank that all-reduce is the identity, so it scales, unscales and
skips steps exactly as `GradScaler` does.
"""

from __future__ import annotations

from ...amp.grad_scaler import GradScaler

__all__ = ["ShardedGradScaler"]


class ShardedGradScaler(GradScaler):
    """Matches `torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler`."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        backoff_factor: float = 0.5,
        growth_factor: float = 2.0,
        growth_interval: int = 2000,
        enabled: bool = True,
        process_group=None,
    ):
        super().__init__(
            device,
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )
        self.process_group = process_group
