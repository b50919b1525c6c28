"""`torch.utils.benchmark`: not available in jtorch (see `jtorch._unsupported`)."""

from .._unsupported import unsupported_module_getattr

__getattr__ = unsupported_module_getattr(
    "torch.utils.benchmark",
    "jtorch has no benchmark Timer; time with timeit, calling "
    "jax.block_until_ready (or .item()) on the result so that XLA's asynchronous dispatch "
    "is measured",
)
