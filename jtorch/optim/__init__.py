"""`torch.optim`: optimizers (one compiled multi-tensor update per param group)."""

from . import optimizer  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
