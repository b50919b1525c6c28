"""`torch.nn.attention`: choosing the scaled-dot-product-attention backend.

PyTorch picks among fused kernels (flash, memory-efficient, cuDNN) and a math fallback.
jtorch's `scaled_dot_product_attention` is one XLA computation on every device, so the choice
is recorded (and read back through `torch.backends.cuda.*_sdp_enabled()`) but does not change
what runs; a choice PyTorch could not honour on some hardware does not raise here.
"""

from __future__ import annotations

import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """Matches `torch.nn.attention.SDPBackend` (the same members and values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# backend -> its switch in torch.backends.cuda
_SWITCH = {
    SDPBackend.MATH: "math",
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
    SDPBackend.CUDNN_ATTENTION: "cudnn",
}


def _enabled() -> list:
    return [b for b, name in _SWITCH.items() if _cuda._sdp[name]]


def _select(backends) -> None:
    for b, name in _SWITCH.items():
        _cuda._sdp[name] = b in backends


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Matches `torch.nn.attention.sdpa_kernel`: enables only `backends` inside the block."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend "
            f"instances, got {type(backends).__name__}"
        )
    if isinstance(backends, SDPBackend):
        backends = [backends]
    previous = _enabled()
    try:
        _select(list(dict.fromkeys(backends)))
        yield {}
    finally:
        _select(previous)
