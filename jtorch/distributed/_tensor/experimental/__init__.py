"""`torch.distributed._tensor.experimental`: the former path of `tensor.experimental`."""

from ...tensor.experimental import *  # noqa: F401,F403
from ...tensor.experimental import __all__  # noqa: F401
