"""`torch.cuda.memory`: memory statistics, as the device's XLA allocator reports them."""

from __future__ import annotations

from ._devices import _jax_device, _require, is_available


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
    lines = [
        "|" + "=" * (width + 22) + "|",
        "|" + " jtorch memory summary (XLA allocator)".ljust(width + 22) + "|",
        "|" + "=" * (width + 22) + "|",
    ]
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


def empty_cache() -> None:
    """Accepted: XLA's allocator manages device memory itself."""


def ipc_collect() -> None:
    _require()


def reset_peak_memory_stats(device=None) -> None:
    """Accepted: XLA's peak statistics cannot be reset."""


reset_max_memory_allocated = reset_peak_memory_stats


def reset_accumulated_memory_stats(device=None) -> None:
    """Accepted: XLA keeps no accumulated statistics to reset."""


reset_max_memory_cached = reset_peak_memory_stats
