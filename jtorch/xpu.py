"""`torch.xpu`: PyTorch's CPU-build answers (no xpu device; see `_absent_device`)."""

from ._absent_device import populate as _populate

_populate(globals(), "xpu")
