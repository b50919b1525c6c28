"""`torch.cuda`: the accelerator that `'cuda'` means (DESIGN 8).

True on a machine where jax sees an NVIDIA GPU, or a TPU unless
`JTORCH_CUDA_IS_TPU=0`. On a CPU-only machine `is_available()` is False and
`device_count()` is 0, as with a CPU build of PyTorch.
"""

from __future__ import annotations

import jax

from . import _device, _random

_current = {"index": 0}


def _devices():
    return _device.accelerators("cuda")


def is_available() -> bool:
    return len(_devices()) > 0


def device_count() -> int:
    return len(_devices())


def _require():
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")


def current_device() -> int:
    _require()
    return _current["index"]


def set_device(device) -> None:
    d = _device.device(device) if not isinstance(device, int) else _device.device("cuda", device)
    _current["index"] = d.index or 0


def get_device_name(device=None) -> str:
    _require()
    d = _devices()[0 if device is None else _device.device(device).index or 0]
    return getattr(d, "device_kind", str(d))


def synchronize(device=None) -> None:
    """Waits for all queued jax work on the accelerator."""
    for arr in jax.live_arrays():
        arr.block_until_ready()


def is_initialized() -> bool:
    return is_available()


def manual_seed(seed: int) -> None:
    _random.manual_seed(seed)


manual_seed_all = manual_seed


def _memory_stats(device=None) -> dict:
    if not is_available():
        return {}
    d = _devices()[0 if device is None else _device.device(device).index or 0]
    return d.memory_stats() or {}


def memory_allocated(device=None) -> int:
    return int(_memory_stats(device).get("bytes_in_use", 0))


def max_memory_allocated(device=None) -> int:
    return int(_memory_stats(device).get("peak_bytes_in_use", 0))


def memory_reserved(device=None) -> int:
    return int(_memory_stats(device).get("bytes_reserved", memory_allocated(device)))


def empty_cache() -> None:
    """Accepted: XLA's allocator manages device memory itself."""


def reset_peak_memory_stats(device=None) -> None:
    """Accepted: XLA's peak statistics cannot be reset."""
