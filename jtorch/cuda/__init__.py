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

from ._devices import (  # noqa: F401
    _capability,
    _current,
    _devices,
    _jax_device,
    _require,
    current_device,
    device,
    device_count,
    get_device_capability,
    get_device_name,
    init,
    is_available,
    is_bf16_supported,
    is_initialized,
    set_device,
    synchronize,
)
from .memory import (  # noqa: F401
    empty_cache,
    get_per_process_memory_fraction,
    ipc_collect,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)
from .random import (  # noqa: F401
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .streams import Event, Stream, StreamContext, current_stream, default_stream, stream  # noqa: F401


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
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
            f"minor={self.minor}, total_memory={self.total_memory // (1 << 20)}MB, "
            f"multi_processor_count={self.multi_processor_count})"
        )


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
    return True  # XLA moves data between its devices itself


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


from .._errors import OutOfMemoryError  # noqa: E402,F401
from . import amp, graphs, memory, nvtx, random, streams  # noqa: E402,F401  # noqa: E402,F401
from .graphs import (  # noqa: E402,F401
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)


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
