"""`torch.cpu`: the CPU device module (always available) and `torch.cpu.amp`."""

from . import amp  # noqa: F401


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """Waits for queued jax work, as `torch.cpu.synchronize` would for CPU streams."""
    import jax

    for arr in jax.live_arrays():
        arr.block_until_ready()
