"""`torch.ao.nn`: quantized and quantization-aware modules, not available in jtorch."""

from ..._unsupported import unsupported_module_getattr

__getattr__ = unsupported_module_getattr(
    "torch.ao.nn", "jtorch has no quantized modules (quantized, qat, intrinsic, sparse)"
)
