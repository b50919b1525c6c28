"""`torch.mps`: PyTorch's CPU-build answers (no mps device; see `_absent_device`)."""

from ._absent_device import populate as _populate

_populate(globals(), "mps")
