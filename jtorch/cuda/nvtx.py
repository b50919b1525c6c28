"""`torch.cuda.nvtx`: named ranges for profilers.

On an accelerator the ranges become jax profiler trace annotations (they appear in a
`jax.profiler` trace, as NVTX ranges appear in Nsight). Without one, as in PyTorch's CPU
build, the functions raise.
"""

from __future__ import annotations

import contextlib

import jax

from ._devices import is_available

__all__ = ["mark", "range", "range_pop", "range_push", "range_start", "range_end"]

_stack: list = []
_open: dict = {}


def _check() -> None:
    if not is_available():
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")


def range_push(msg: str) -> int:
    """Opens a range; returns its depth (0-based), as NVTX does."""
    _check()
    annotation = jax.profiler.TraceAnnotation(msg)
    annotation.__enter__()
    _stack.append(annotation)
    return len(_stack) - 1


def range_pop() -> int:
    """Closes the innermost range; returns its depth, or -1 when none is open."""
    _check()
    if not _stack:
        return -1
    _stack.pop().__exit__(None, None, None)
    return len(_stack)


def range_start(msg: str) -> int:
    _check()
    annotation = jax.profiler.TraceAnnotation(msg)
    annotation.__enter__()
    handle = id(annotation)
    _open[handle] = annotation
    return handle


def range_end(range_id: int) -> None:
    _check()
    annotation = _open.pop(range_id, None)
    if annotation is not None:
        annotation.__exit__(None, None, None)


def mark(msg: str) -> None:
    _check()
    with jax.profiler.TraceAnnotation(msg):
        pass


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):
    """`with nvtx.range("step {}", i):` a range named `msg.format(*args, **kwargs)`."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
