"""The device state behind `torch.cuda`: which accelerators `'cuda'` means, the current
device, and the checks every other part of `torch.cuda` makes (`is_available`, `_require`)."""

from __future__ import annotations

import jax

from .. import _device

# Shared with jtorch._device, which resolves 'cuda' without an index to the current device.
_current = _device.CURRENT


def _devices():
    return _device.accelerators("cuda")


def is_available() -> bool:
    return len(_devices()) > 0


def device_count() -> int:
    return len(_devices())


def _require():
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")


def init() -> None:
    _require()


def is_initialized() -> bool:
    return is_available()


def current_device() -> int:
    _require()
    return _current["cuda"]


def set_device(device) -> None:
    d = _device.device(device) if not isinstance(device, int) else _device.device("cuda", device)
    _current["cuda"] = d.index or 0


class device:
    """Matches `torch.cuda.device`: a context manager selecting the current device."""

    def __init__(self, device):
        self.idx = (
            device
            if isinstance(device, int) or device is None
            else (_device.device(device).index or 0)
        )
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None and self.idx >= 0:
            self.prev_idx = _current["cuda"]
            _current["cuda"] = self.idx

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            _current["cuda"] = self.prev_idx
        return False


def _jax_device(device=None):
    _require()
    if device is None:
        return _devices()[_current["cuda"]]
    idx = device if isinstance(device, int) else (_device.device(device).index or 0)
    return _devices()[idx]


def get_device_name(device=None) -> str:
    return getattr(_jax_device(device), "device_kind", "cuda")


def _capability(jdev) -> tuple:
    cc = getattr(jdev, "compute_capability", None)
    if cc is None:
        return (0, 0)
    major, _, minor = str(cc).partition(".")
    return (int(major), int(minor or 0))


def get_device_capability(device=None) -> tuple:
    return _capability(_jax_device(device))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


def synchronize(device=None) -> None:
    """Waits for all queued jax work on the accelerator."""
    _require()
    for arr in jax.live_arrays():
        arr.block_until_ready()
