"""`torch.utils.data.datapipes`: composable iterable datasets (PyTorch's, deprecated there).

jtorch keeps the base classes, the functional-form registry and the shuffler that
`DataLoader`-wrapping libraries look for; see `datapipe` and `iter.combinatorics`.
"""

from . import datapipe, iter  # noqa: F401
