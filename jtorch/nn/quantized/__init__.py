"""`torch.nn.quantized`: quantized modules; not available in jtorch."""

from ..._unsupported import unsupported_module_getattr

__getattr__ = unsupported_module_getattr(
    "torch.nn.quantized", "jtorch has no quantized tensors or modules"
)
