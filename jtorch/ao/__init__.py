"""`torch.ao`: PyTorch's architecture-optimization namespace (quantization, pruning
sparsity); jtorch has none of it (see `jtorch._unsupported`)."""

from .._unsupported import unsupported_module_getattr

__getattr__ = unsupported_module_getattr(
    "torch.ao",
    "jtorch has no quantization or structured-sparsity toolkit (XLA chooses "
    "kernels; float16/bfloat16 with torch.autocast is the reduced-precision path)",
)
