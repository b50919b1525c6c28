"""`torch.distributed.tensor`: DTensor, its placements and factories (see `_api`)."""

from ..device_mesh import DeviceMesh, init_device_mesh  # noqa: F401
from . import placement_types  # noqa: F401
from ._api import (  # noqa: F401
    DTensor,
    distribute_module,
    distribute_tensor,
    empty,
    full,
    ones,
    rand,
    randn,
    zeros,
)
from .placement_types import Partial, Placement, Replicate, Shard, _StridedShard  # noqa: F401

__all__ = [
    "DTensor",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_module",
    "distribute_tensor",
    "empty",
    "full",
    "ones",
    "rand",
    "randn",
    "zeros",
]
