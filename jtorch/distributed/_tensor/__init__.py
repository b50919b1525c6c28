"""`torch.distributed._tensor`: PyTorch's former name of `torch.distributed.tensor`."""

from ..tensor import *  # noqa: F401,F403
from ..tensor import (  # noqa: F401
    DeviceMesh,
    __all__,  # noqa: F401
    init_device_mesh,
    placement_types,
)
