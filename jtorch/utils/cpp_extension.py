"""`torch.utils.cpp_extension`: building C++/CUDA extensions against libtorch, which
jtorch does not have. Importing it works (setup scripts import `BuildExtension` at top
level); building or loading an extension raises."""

from .._unsupported import unsupported_module_getattr

CUDA_HOME = None
ROCM_HOME = None
SYCL_HOME = None

__getattr__ = unsupported_module_getattr(
    "torch.utils.cpp_extension",
    "jtorch has no libtorch to compile C++/CUDA extensions "
    "against; write the kernel with jax (jax.pure_callback, jax.ffi or Pallas) and register "
    "it with torch.library.custom_op",
)
