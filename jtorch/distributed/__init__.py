"""`torch.distributed`: process groups, collectives, device meshes and their submodules.

Today's world is one process (see `distributed_c10d`); `device_mesh` builds meshes on
`jax.sharding.Mesh`, and `tensor`, `fsdp` and `checkpoint` give DTensor, FSDP and
distributed checkpointing over them (DESIGN 14).
"""

from __future__ import annotations

from . import distributed_c10d  # noqa: F401
from .constants import default_pg_timeout  # noqa: F401
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: E402,F401
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__ as _c10d_all
from .distributed_c10d import _get_default_group, get_default_backend_for_device, reduce_op  # noqa: F401

__all__ = list(_c10d_all) + ["DeviceMesh", "init_device_mesh"]
