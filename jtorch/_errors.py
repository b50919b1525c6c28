"""PyTorch's exception classes that jtorch raises itself."""

from __future__ import annotations


class OutOfMemoryError(RuntimeError):
    """Matches `torch.OutOfMemoryError` (also `torch.cuda.OutOfMemoryError`): raised when XLA
    cannot allocate a result (its RESOURCE_EXHAUSTED error), so scripts that catch it to
    shrink a batch keep working."""


class AcceleratorError(RuntimeError):
    """Matches `torch.AcceleratorError`."""


def translate_runtime_error(e: Exception) -> Exception:
    """XLA's out-of-memory error as PyTorch's; other errors unchanged."""
    msg = str(e)
    if "RESOURCE_EXHAUSTED" in msg or "Out of memory" in msg:
        return OutOfMemoryError(msg)
    return e
