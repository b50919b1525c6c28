"""`torch.nn` (modules arrive with the nn work; `functional` holds the registry's kernels)."""

from . import functional  # noqa: F401
