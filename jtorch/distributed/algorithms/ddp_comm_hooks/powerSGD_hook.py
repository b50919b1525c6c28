"""`torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook`: PowerSGD compression.

PowerSGD replaces each gradient matrix by a low-rank approximation kept with error feedback;
jtorch does not implement it, and its hooks raise when DDP runs them.
"""

from __future__ import annotations

__all__ = ["PowerSGDState", "batched_powerSGD_hook", "powerSGD_hook"]


class PowerSGDState:
    """Matches `PowerSGDState`'s constructor (the settings PowerSGD would run with)."""

    def __init__(
        self,
        process_group,
        matrix_approximation_rank: int = 1,
        start_powerSGD_iter: int = 1_000,
        min_compression_rate: float = 2,
        use_error_feedback: bool = True,
        warm_start: bool = True,
        orthogonalization_epsilon: float = 0,
        random_seed: int = 0,
        compression_stats_logging_frequency: int = 10_000,
        batch_tensors_with_same_shape: bool = False,
    ):
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.random_seed = random_seed
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape
        self.iter = 0


def _unsupported(*args, **kwargs):
    raise NotImplementedError("jtorch does not implement PowerSGD gradient compression")


powerSGD_hook = _unsupported
batched_powerSGD_hook = _unsupported
