"""`torch.quantization`: PyTorch's older name of `torch.ao.quantization`; not available in
jtorch (see `jtorch._unsupported`)."""

from ._unsupported import unsupported_module_getattr

__getattr__ = unsupported_module_getattr(
    "torch.quantization",
    "jtorch has no quantized tensors or quantized kernels; use "
    "float16/bfloat16 (torch.autocast) for reduced precision",
)
