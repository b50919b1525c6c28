"""`torch.accelerator`: the device-generic view of the current accelerator.

jtorch's accelerator is what `'cuda'` means (DESIGN 8): an NVIDIA GPU, or a TPU unless
`JTORCH_CUDA_IS_TPU=0`. Without one this module behaves as in a CPU build of PyTorch:
`current_accelerator()` is None, `is_available()` is False, `device_count()` is 0, and
what needs a device raises.
"""

from __future__ import annotations

from . import _device, cuda

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "device_count",
    "device_index",
    "is_available",
    "set_device_idx",
    "set_device_index",
    "synchronize",
]

_NONE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available: bool = False) -> _device.device | None:
    """Matches `torch.accelerator.current_accelerator`: `device('cuda')`, or None."""
    if not _device.accelerators("cuda"):
        return None
    return _device.device("cuda")


def is_available() -> bool:
    """Matches `torch.accelerator.is_available`."""
    return current_accelerator() is not None and cuda.is_available()


def device_count() -> int:
    """Matches `torch.accelerator.device_count`: 0 without an accelerator."""
    return cuda.device_count() if current_accelerator() is not None else 0


def current_device_index() -> int:
    """Matches `torch.accelerator.current_device_index`."""
    if not is_available():
        raise RuntimeError(_NONE)
    return cuda.current_device()


def _index(device, optional: bool) -> int:
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device.device(device)
    index = None
    if isinstance(device, _device.device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        index = device.index
    if index is None:
        if not optional:
            raise ValueError(
                f"Expected a torch.device with a specified index or an integer, but got:{device}"
            )
        return current_device_index()
    return index


def set_device_index(device, /) -> None:
    """Matches `torch.accelerator.set_device_index`: a negative index is a no-op."""
    index = _index(device, optional=False)
    if index < 0:
        return
    if not is_available():
        raise RuntimeError(_NONE)
    if index >= device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")
    cuda.set_device(index)


def synchronize(device=None, /) -> None:
    """Matches `torch.accelerator.synchronize`: waits for the accelerator's queued work."""
    index = _index(device, optional=True)
    if not is_available():
        raise RuntimeError(_NONE)
    cuda.synchronize(index)


def current_device_idx() -> int:
    """Deprecated alias of `current_device_index`, as in PyTorch."""
    import warnings

    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device, /) -> None:
    """Deprecated alias of `set_device_index`, as in PyTorch."""
    import warnings

    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """Matches `torch.accelerator.device_index`: selects a device index inside a `with`."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            set_device_index(self.prev_idx)
