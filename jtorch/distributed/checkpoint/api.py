"""`torch.distributed.checkpoint.api`: the exception a failed save or load raises."""

from __future__ import annotations

import traceback

__all__ = ["CheckpointException"]


class CheckpointException(BaseException):
    """Matches PyTorch's: failures by rank (a BaseException, as PyTorch's is)."""

    def __init__(self, msg: str, failures: dict):
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self) -> dict:
        return self._failures

    def __str__(self) -> str:
        out = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, exc in self._failures.items():
            out += f"Traceback (most recent call last): (RANK {rank})\n"
            out += "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return out
