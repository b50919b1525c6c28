"""`torch.multiprocessing`: Python's `multiprocessing`, plus `spawn` and sharing strategies.

Tensors pass through queues and pipes by pickling (a copy of the values, with
`requires_grad`); jtorch has no shared-memory tensors, so a tensor changed in one process
is not changed in another (`share_memory_()` shares nothing), and Hogwild-style training
through shared parameters does not work. Use 'spawn' or 'forkserver': JAX is not fork-safe.
Children of a program run with `python -m jtorch` import jtorch for `torch`.
"""

import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from .spawn import (  # noqa: F401
    ENV_VAR_PARALLEL_START,
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy"]
__all__ += multiprocessing.__all__

if sys.platform in ("darwin", "win32"):
    _all_sharing_strategies = {"file_system"}
else:
    _all_sharing_strategies = {"file_descriptor", "file_system"}
_sharing_strategy = "file_system" if sys.platform in ("darwin", "win32") else "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Matches `torch.multiprocessing.set_sharing_strategy` (recorded; tensors are copied)."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}"
        )
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    """Matches `torch.multiprocessing.get_sharing_strategy`."""
    return _sharing_strategy


def get_all_sharing_strategies() -> set:
    """Matches `torch.multiprocessing.get_all_sharing_strategies`."""
    return _all_sharing_strategies


def init_reductions() -> None:
    """Matches `torch.multiprocessing.init_reductions`: tensors pickle by value already."""
