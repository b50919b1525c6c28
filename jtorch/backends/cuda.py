"""`torch.backends.cuda`: the TF32 switch and the SDPA backend switches.

`matmul.allow_tf32` is PyTorch's other face of `torch.set_float32_matmul_precision`
("highest" <-> False, "high" <-> True), which jtorch maps onto jax's matmul precision.
The SDPA switches are recorded; jtorch's attention is one XLA computation either way.
"""

import contextlib


class _Matmul:
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        from .._knobs import get_float32_matmul_precision

        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        from .._knobs import set_float32_matmul_precision

        set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """False, as on PyTorch's CPU build."""
    return False


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Matches the deprecated `torch.backends.cuda.sdp_kernel` context manager."""
    saved = dict(_sdp)
    _sdp.update(
        flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn
    )
    try:
        yield
    finally:
        _sdp.update(saved)


def preferred_linalg_library(backend=None):
    """Accepted; returns the default backend's name."""
    return "default"


class SDPAParams:
    """Matches `torch.backends.cuda.SDPAParams`: the arguments of one attention call, as the
    `can_use_*` queries take them."""

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa=False):
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = dropout, is_causal, enable_gqa


# jtorch has no fused CUDA attention kernels (XLA compiles attention like any other program),
# so these answer as PyTorch's build without them does.
def is_flash_attention_available() -> bool:
    return False


def can_use_flash_attention(params: SDPAParams, debug: bool = False) -> bool:
    return False


def can_use_efficient_attention(params: SDPAParams, debug: bool = False) -> bool:
    return False


def can_use_cudnn_attention(params: SDPAParams, debug: bool = False) -> bool:
    return False


def allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    _sdp["fp16_bf16_reduction_math"] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed() -> bool:
    return _sdp.get("fp16_bf16_reduction_math", False)
