"""The op families. Importing this package declares every op and installs Tensor methods."""

from . import (  # noqa: F401  # noqa: F401  # noqa: F401  # noqa: F401  # noqa: F401
    _foreach,  # noqa: F401  (torch._foreach_*)
    _registry,
    conversion,
    creation,
    differences,
    fft,
    histogram,
    indexing,
    linalg,  # noqa: F401  (torch.linalg and the legacy linear algebra; installs its checks)
    masked,
    masked_reductions,
    matmul,
    nn,  # noqa: F401  (the nn kernels: activations, norms, losses, conv, ...)
    pointwise,
    pointwise_math,
    random,
    reduction,
    scans,
    scatter,
    shape,
    sorting,
    special,
    statistics,
    tensor_methods,  # noqa: F401  (set_, storage, new, fill_diagonal_...)
    views,
    windows,
)

_registry.install_methods()

from . import _overrides  # noqa: E402,F401  (`__torch_function__` variants, off until needed)


def __getattr__(name: str):
    # `torch._ops` in PyTorch is where `torch.ops` lives: its names, for programs that
    # import them from there (this package is jtorch's op registry).
    if name in ("ops", "OpOverload", "OpOverloadPacket"):
        from ..library import _dispatch

        return getattr(_dispatch, name)
    raise AttributeError(f"module 'torch._ops' has no attribute '{name}'")
