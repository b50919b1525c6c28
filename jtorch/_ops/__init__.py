"""The op families. Importing this package declares every op and installs Tensor methods."""

from . import _registry
from . import pointwise, pointwise_math, special, conversion, views, creation, indexing  # noqa: F401
from . import reduction, scans, statistics, differences  # noqa: F401
from . import sorting, shape, scatter, masked, matmul, linalg, linalg_norms  # noqa: F401
from . import fft, random  # noqa: F401
from . import linalg_lowrank  # noqa: F401
from . import nn  # noqa: F401  (the nn kernels: activations, norms, losses, conv, ...)
from . import masked_reductions, windows, histogram  # noqa: F401
from . import tensor_methods  # noqa: F401  (set_, storage, new, fill_diagonal_...)

linalg.install_checks()     # post-call checks, on ops of both linalg files
_registry.install_methods()

from . import _overrides  # noqa: E402,F401  (`__torch_function__` variants, off until needed)


def __getattr__(name: str):
    # `torch._ops` in PyTorch is where `torch.ops` lives: its names, for programs that
    # import them from there (this package is jtorch's op registry).
    if name in ("ops", "OpOverload", "OpOverloadPacket"):
        from ..library import _dispatch
        return getattr(_dispatch, name)
    raise AttributeError(f"module 'torch._ops' has no attribute '{name}'")
