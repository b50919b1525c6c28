"""`torch.xpu`, `torch.mps`, `torch.mtia`: device modules of accelerators jtorch never has.

Each answers as PyTorch's CPU build does: `is_available()` is False, `device_count()` 0,
seeding does nothing, and calls that need the device raise PyTorch's error.
"""

from __future__ import annotations

__all__ = ["populate"]

# What PyTorch's CPU build raises for calls that need the device.
_ERRORS = {
    "xpu": lambda what: AssertionError("Torch not compiled with XPU enabled"),
    "mtia": lambda what: RuntimeError(f"Cannot execute {what}() without MTIA backend."),
    "mps": lambda what: RuntimeError(f"Cannot execute {what}() without MPS backend."),
}
_NEEDS_DEVICE = {
    "xpu": {
        "synchronize": "synchronize",
        "current_device": "current_device",
        "set_device": "set_device",
        "get_device_name": "get_device_name",
        "get_device_properties": "get_device_properties",
        "get_device_capability": "get_device_capability",
    },
    "mtia": {
        "synchronize": "getCurrentDevice",
        "current_device": "getCurrentDevice",
        "set_device": "setDevice",
        "get_device_properties": "getDeviceProperties",
    },
    "mps": {
        "synchronize": "deviceSynchronize",
        "empty_cache": "emptyCache",
        "current_allocated_memory": "getCurrentAllocatedMemory",
        "driver_allocated_memory": "getDriverAllocatedMemory",
        "recommended_max_memory": "getRecommendedMaxMemory",
        "set_per_process_memory_fraction": "setMemoryFraction",
    },
}


def populate(ns: dict, name: str) -> None:
    """Fills module namespace `ns` as `torch.<name>` for an accelerator jtorch lacks."""

    def fail(what):
        def call(*args, **kwargs):
            raise _ERRORS[name](what)

        call.__name__ = what
        return call

    def nothing(*args, **kwargs):
        return None

    ns.update(
        is_available=lambda: False,
        device_count=lambda: 0,
        is_initialized=lambda: False,
        init=nothing,
        manual_seed=nothing,
        manual_seed_all=nothing,
        seed=nothing,
        seed_all=nothing,
    )
    if name != "mps":
        ns.update(
            empty_cache=nothing,
            memory_allocated=lambda device=None: 0,
            max_memory_allocated=lambda device=None: 0,
            memory_reserved=lambda device=None: 0,
            reset_peak_memory_stats=nothing,
            is_bf16_supported=lambda *args, **kwargs: False,
        )
    for public, what in _NEEDS_DEVICE[name].items():
        ns[public] = fail(what)
