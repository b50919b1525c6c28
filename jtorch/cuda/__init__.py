"""`torch.cuda`: the accelerator that `'cuda'` means (DESIGN 8).

True on a machine where jax sees an NVIDIA GPU, or a TPU unless
`JTORCH_CUDA_IS_TPU=0`. On a CPU-only machine it behaves as a CPU build of PyTorch:
`is_available()` is False, `device_count()` is 0, the seeding functions do nothing,
and what needs a device (`current_device`, `synchronize`, ...) raises
`AssertionError("Torch not compiled with CUDA enabled")`.

Streams and events are accepted everywhere: XLA orders work itself, so a stream is
a no-op context and an event records a host timestamp after waiting for queued work.
"""

from __future__ import annotations

import time

import jax

from .. import _device, _random

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


def init() -> None:
    _require()


def is_initialized() -> bool:
    return is_available()


def current_device() -> int:
    _require()
    return _current["index"]


def set_device(device) -> None:
    d = _device.device(device) if not isinstance(device, int) else _device.device("cuda", device)
    _current["index"] = d.index or 0


class device:
    """Matches `torch.cuda.device`: a context manager selecting the current device."""

    def __init__(self, device):
        self.idx = device if isinstance(device, int) or device is None else (
            _device.device(device).index or 0)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None and self.idx >= 0:
            self.prev_idx = _current["index"]
            _current["index"] = self.idx

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            _current["index"] = self.prev_idx
        return False


def _jax_device(device=None):
    _require()
    if device is None:
        return _devices()[_current["index"]]
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


# ---------------------------------------------------------------------------
# Random state: one generator serves every device (see `jtorch._random`), so with an
# accelerator these are `torch.manual_seed` & co.; without one they do nothing, as
# PyTorch's CPU build does (`torch.manual_seed` seeds everything either way).


def manual_seed(seed: int) -> None:
    if is_available():
        _random.manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    if is_available():
        _random.seed()


seed_all = seed


def initial_seed() -> int:
    _require()
    return _random.initial_seed()


def get_rng_state(device="cuda"):
    _require()
    return _random.get_rng_state()


def get_rng_state_all() -> list:
    return [_random.get_rng_state() for _ in range(device_count())]


def set_rng_state(new_state, device="cuda") -> None:
    if is_available():
        _random.set_rng_state(new_state)


def set_rng_state_all(new_states) -> None:
    for s in new_states:
        set_rng_state(s)


# ---------------------------------------------------------------------------
# Memory


def _memory_stats(device=None) -> dict:
    if not is_available():
        return {}
    return _jax_device(device).memory_stats() or {}


def memory_stats(device=None) -> dict:
    return dict(_memory_stats(device))


def memory_allocated(device=None) -> int:
    return int(_memory_stats(device).get("bytes_in_use", 0))


def max_memory_allocated(device=None) -> int:
    return int(_memory_stats(device).get("peak_bytes_in_use", 0))


def memory_reserved(device=None) -> int:
    return int(_memory_stats(device).get("bytes_reserved", memory_allocated(device)))


max_memory_reserved = memory_reserved


def mem_get_info(device=None) -> tuple:
    stats = _memory_stats(device)
    _require()
    total = int(stats.get("bytes_limit", 0))
    return (total - int(stats.get("bytes_in_use", 0)), total)


def memory_cached(device=None) -> int:
    """Deprecated alias of `memory_reserved`, as in PyTorch."""
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated alias of `max_memory_reserved`, as in PyTorch."""
    return max_memory_reserved(device)


def memory_stats_as_nested_dict(device=None) -> dict:
    """XLA's allocator statistics (its own names; PyTorch's caching-allocator keys differ)."""
    return memory_stats(device)


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A table of the device allocator's statistics as XLA reports them."""
    stats = _memory_stats(device)
    width = max([len(k) for k in stats] + [24])
    lines = ["|" + "=" * (width + 22) + "|",
             "|" + " jtorch memory summary (XLA allocator)".ljust(width + 22) + "|",
             "|" + "=" * (width + 22) + "|"]
    for k, v in sorted(stats.items()):
        lines.append(f"| {k.ljust(width)} | {str(v).rjust(18)} |")
    if not stats:
        lines.append("|" + " no accelerator statistics".ljust(width + 22) + "|")
    lines.append("|" + "=" * (width + 22) + "|")
    return "\n".join(lines) + "\n"


_memory_fraction: dict = {}


def set_per_process_memory_fraction(fraction: float, device=None) -> None:
    """Recorded and reported back. XLA sizes its device pool when the process starts (set
    `XLA_PYTHON_CLIENT_MEM_FRACTION` before launching to limit it); it cannot shrink later."""
    idx = _jax_device(device).id
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _memory_fraction[idx] = fraction


def get_per_process_memory_fraction(device=None) -> float:
    return _memory_fraction.get(_jax_device(device).id, 1.0)


class _DeviceProperties:
    """What `get_device_properties` returns: the fields scripts read."""

    def __init__(self, jdev):
        stats = jdev.memory_stats() or {}
        self.name = getattr(jdev, "device_kind", "cuda")
        self.major, self.minor = _capability(jdev)
        self.total_memory = int(stats.get("bytes_limit", 0))
        self.multi_processor_count = int(getattr(jdev, "core_count", 0) or 0)
        self.is_integrated = 0
        self.is_multi_gpu_board = 0

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1 << 20)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> _DeviceProperties:
    return _DeviceProperties(_jax_device(device))


def get_arch_list() -> list:
    """The architecture of each visible GPU (`sm_90`...), [] without one (PyTorch's CPU build)."""
    if not is_available():
        return []
    return sorted({f"sm_{a}{b}" for a, b in (_capability(d) for d in _devices())})


def get_gencode_flags() -> str:
    return " ".join(f"-gencode compute=compute_{a[3:]},code={a}" for a in get_arch_list())


def is_tf32_supported() -> bool:
    return is_available() and get_device_capability()[0] >= 8


def can_device_access_peer(device, peer_device) -> bool:
    _jax_device(device)
    _jax_device(peer_device)
    return True     # XLA moves data between its devices itself


_sync_debug_mode = [0]


def get_sync_debug_mode() -> int:
    _require()
    return _sync_debug_mode[0]


def set_sync_debug_mode(debug_mode) -> None:
    """Recorded: jtorch does not report synchronising calls."""
    _require()
    modes = {"default": 0, "warn": 1, "error": 2}
    _sync_debug_mode[0] = modes[debug_mode] if isinstance(debug_mode, str) else int(debug_mode)


def list_gpu_processes(device=None) -> str:
    return "pynvml module not found, please install nvidia-ml-py"


def set_stream(stream) -> None:
    """Accepted: XLA orders the work (see `Stream`)."""


class device_of(device):
    """Matches `torch.cuda.device_of`: the current device set to a tensor's for the block."""

    def __init__(self, obj):
        d = obj.device
        super().__init__(d.index if d.type == "cuda" else -1)


has_half = True
has_magma = False


def empty_cache() -> None:
    """Accepted: XLA's allocator manages device memory itself."""


def ipc_collect() -> None:
    _require()


def reset_peak_memory_stats(device=None) -> None:
    """Accepted: XLA's peak statistics cannot be reset."""


reset_max_memory_allocated = reset_peak_memory_stats


# ---------------------------------------------------------------------------
# Streams and events


class Stream:
    """Matches `torch.cuda.Stream`; XLA orders the work, so waiting is all it does."""

    def __init__(self, device=None, priority: int = 0, **kwargs):
        self.device = device
        self.priority = priority

    def wait_event(self, event) -> None:
        pass

    def wait_stream(self, stream) -> None:
        pass

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _wait_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_default_stream = Stream()


def current_stream(device=None) -> Stream:
    return _default_stream


def default_stream(device=None) -> Stream:
    return _default_stream


class StreamContext:
    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)


def _wait_all() -> None:
    for arr in jax.live_arrays():
        arr.block_until_ready()


class Event:
    """Matches `torch.cuda.Event`: `record()` waits for queued work, then notes the time."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        self.enable_timing = enable_timing
        self._time = None

    def record(self, stream=None) -> None:
        _wait_all()
        self._time = time.perf_counter()

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _wait_all()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and `end_event`, as PyTorch reports."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

from .._errors import OutOfMemoryError  # noqa: E402,F401
from . import amp, nvtx  # noqa: E402,F401
from . import graphs, memory, random, streams  # noqa: E402,F401
from .graphs import (  # noqa: E402,F401
    CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables,
)


def reset_accumulated_memory_stats(device=None) -> None:
    """Accepted: XLA keeps no accumulated statistics to reset."""


reset_max_memory_cached = reset_peak_memory_stats


def _default_generators() -> tuple:
    # One generator per CUDA device; jtorch's streams are jax keys, shared by all devices,
    # so each entry is torch's default generator. A CPU build has none.
    from .._random import default_generator
    return tuple(default_generator for _ in range(device_count()))
from .._legacy_types import CUDA_TYPES as _CUDA_TYPES  # noqa: E402

globals().update(_CUDA_TYPES)  # torch.cuda.FloatTensor, ..., torch.cuda.BoolTensor


def __getattr__(name):
    if name == "default_generators":
        return _default_generators()
    raise AttributeError(f"module 'torch.cuda' has no attribute '{name}'")
