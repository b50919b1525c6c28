"""`torch.distributed.device_mesh`: `DeviceMesh` and `init_device_mesh`, on a `jax.sharding.Mesh`.

A `DeviceMesh` is an n-dimensional array of ranks; each rank computes on one device. Here
(DESIGN 14) the mesh is also a `jax.sharding.Mesh` of the jax devices the ranks compute on,
with the mesh's dimension names as its axis names, so a DTensor placement can be said as a
`jax.sharding.NamedSharding` over it. A rank is a process of the job (`jax.distributed`):
`_rank_device` says which jax device it computes on (its first of the mesh's device type),
and `get_group(dim)` is the process group of this rank's line along a mesh dimension.

jtorch's extension: a process that is a world of one may ask for a mesh of more ranks than
the world has when it has that many local devices of the mesh's type; the mesh's ranks are
then those devices (rank i: the i-th), the process is every rank at once (its coordinate is
rank 0's), and DTensors on it are jax arrays sharded over the devices
(`tensor._local_devices`). Such a mesh has no process groups: jax's compiler makes its
collectives.
"""

from __future__ import annotations

import math
import warnings

import jax
import numpy as np

from .. import _device
from . import distributed_c10d as c10d

__all__ = ["DeviceMesh", "init_device_mesh"]


_MESH_STACK: list = []


def _current_mesh() -> DeviceMesh:
    """The innermost mesh entered with `with mesh:` (PyTorch's error when there is none)."""
    if not _MESH_STACK:
        raise RuntimeError("No device mesh is currently active!")
    return _MESH_STACK[-1]


def _rank_device(device_type: str, rank: int):
    """The jax device that `rank` computes on for `device_type`."""
    from . import _runtime

    if _runtime.is_joined():
        return _runtime.rank_device(rank, _platform(device_type))
    if rank != c10d.get_rank():
        local = _local_devices(device_type)
        if rank < len(local):
            return local[rank]
        raise RuntimeError(
            f"rank {rank} is not this process (rank {c10d.get_rank()}): its "
            f"device lives in another process"
        )
    if device_type == "cpu":
        return _device.to_jax("cpu")
    return _device.to_jax(_device.device(device_type, 0))


def _platform(device_type: str) -> str:
    return (
        "cpu" if device_type == "cpu" else _device.to_jax(_device.device(device_type, 0)).platform
    )


def _local_devices(device_type: str) -> list:
    """This process's jax devices of `device_type` (those `cuda:0`, `cuda:1`... name: with
    `JTORCH_CUDA_IS_CPU=1` not all of the platform's)."""
    _platform(device_type)  # raises for a type with no device here
    return list(_device.accelerators(device_type))


class DeviceMesh:
    """Matches `torch.distributed.device_mesh.DeviceMesh` (see the module doc).

    Args:
        device_type: the device type of the mesh ("cpu", "cuda", ...).
        mesh: an n-d array (nested lists or a tensor) of global ranks.
        mesh_dim_names: one name per mesh dimension.
    """

    def __init__(
        self,
        device_type: str,
        mesh,
        *,
        mesh_dim_names=None,
        backend_override=None,
        _init_backend: bool = True,
        _root=None,
    ):
        ranks = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        if ranks.ndim == 0:
            raise ValueError("DeviceMesh's mesh must have at least one dimension")
        if mesh_dim_names is not None:
            mesh_dim_names = tuple(mesh_dim_names)
            if len(mesh_dim_names) != ranks.ndim:
                raise RuntimeError(
                    f"mesh_shape and mesh_dim_names should have same length! Found "
                    f"len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):"
                    f"{ranks.ndim}."
                )
            if len(set(mesh_dim_names)) != len(mesh_dim_names):
                raise RuntimeError(
                    f"Each mesh_dim_name must be unique. Found repeated "
                    f"mesh_dim_name in mesh_dim_names {mesh_dim_names}"
                )
        if _init_backend and not c10d.is_initialized():
            c10d.init_process_group()  # as PyTorch: the default group from env://
        world = c10d.get_world_size() if c10d.is_initialized() else 1
        # A world of one over several local devices: the ranks are the devices.
        self._local = (
            world == 1 and ranks.size > 1 and ranks.max() < len(_local_devices(device_type))
        )
        if ranks.size > world and not self._local:
            raise RuntimeError(
                f"Mesh should not be bigger than default world size {world}, "
                f"but found {ranks.size} ranks!"
            )
        if len(set(ranks.ravel().tolist())) != ranks.size:
            raise RuntimeError(
                f"DeviceMesh cannot have duplicate values, but found {ranks.tolist()}"
            )
        self.device_type = str(device_type)
        self._ranks = ranks
        self._mesh_dim_names = mesh_dim_names
        self._root = _root
        self._flattened: dict = {}  # name -> flattened mesh (kept on the root mesh)
        self._jax = None

    # -- what the mesh is ---------------------------------------------------

    @property
    def mesh(self):
        """The ranks as an int32 tensor, as PyTorch 2.13 reports it."""
        from .._dtype import int32
        from .._ops.creation import tensor

        return tensor(self._ranks.tolist(), dtype=int32)

    @property
    def mesh_dim_names(self):
        return self._mesh_dim_names

    @property
    def shape(self) -> tuple:
        return tuple(self._ranks.shape)

    @property
    def ndim(self) -> int:
        return self._ranks.ndim

    def size(self, mesh_dim=None) -> int:
        if mesh_dim is None:
            return int(self._ranks.size)
        return int(self._ranks.shape[self._dim(mesh_dim)])

    @property
    def jax_mesh(self) -> jax.sharding.Mesh:
        """This mesh as a `jax.sharding.Mesh` (axis names: the dimension names, or dim_i)."""
        if self._jax is None:
            devices = np.array(
                [_rank_device(self.device_type, int(r)) for r in self._ranks.ravel()], dtype=object
            )
            self._jax = jax.sharding.Mesh(devices.reshape(self._ranks.shape), self._axis_names())
        return self._jax

    def _axis_names(self) -> tuple:
        return self._mesh_dim_names or tuple(f"dim_{i}" for i in range(self.ndim))

    # -- this rank's place --------------------------------------------------

    def get_rank(self) -> int:
        return c10d.get_rank()

    def get_coordinate(self):
        """This rank's coordinate in the mesh, or None when the rank is not in it."""
        where = np.argwhere(self._ranks == (self._ranks.min() if self._local else c10d.get_rank()))
        return tuple(int(i) for i in where[0]) if len(where) else None

    def get_local_rank(self, mesh_dim=None) -> int:
        if mesh_dim is None and self.ndim > 1:
            raise RuntimeError(
                f"Found the DeviceMesh have {self.ndim} dimensions",
                "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
            )
        coord = self.get_coordinate()
        if coord is None:
            raise RuntimeError("the current rank is not part of this mesh")
        return coord[self._dim(0 if mesh_dim is None else mesh_dim)]

    def get_group(self, mesh_dim=None):
        """The process group of this rank along `mesh_dim` (needed when ndim > 1)."""
        if mesh_dim is None and self.ndim > 1:
            raise RuntimeError(
                f"Found the DeviceMesh have {self.ndim} dimensions",
                "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
                "If you want to get the list of all the ProcessGroups in the DeviceMesh,"
                "please use `get_all_groups()` instead.",
            )
        dim = self._dim(0 if mesh_dim is None else mesh_dim)
        if self._local and self._ranks.shape[dim] > 1:
            raise NotImplementedError(
                "a DeviceMesh of one process's local devices has no process group along a "
                "dimension of several devices: its collectives are made by jax's compiler "
                "from the DTensors' shardings"
            )
        coord = self.get_coordinate()
        if coord is None:
            raise RuntimeError("the current rank is not part of this mesh")
        line = self._ranks[tuple(slice(None) if i == dim else c for i, c in enumerate(coord))]
        ranks = sorted(int(r) for r in np.ravel(line))
        if ranks == list(range(c10d.get_world_size())):
            return c10d._get_default_group()  # a dim that spans the world is the world
        groups = self.__dict__.setdefault("_groups", {})
        if tuple(ranks) not in groups:
            groups[tuple(ranks)] = c10d.new_group(ranks)
        return groups[tuple(ranks)]

    def get_all_groups(self) -> list:
        return [self.get_group(i) for i in range(self.ndim)]

    # -- sub-meshes -----------------------------------------------------------

    def _dim(self, mesh_dim) -> int:
        if isinstance(mesh_dim, str):
            if not self._mesh_dim_names or mesh_dim not in self._mesh_dim_names:
                raise KeyError(
                    f"Mesh dimension '{mesh_dim}' does not exist. Available mesh "
                    f"dimensions are: mesh_dim_names={self._mesh_dim_names}"
                )
            return self._mesh_dim_names.index(mesh_dim)
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError("list index out of range")
        return mesh_dim % self.ndim

    def _root_mesh(self) -> DeviceMesh:
        return self._root if self._root is not None else self

    def __getitem__(self, mesh_dim_names) -> DeviceMesh:
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self._mesh_dim_names:
            return self
        root = self._root_mesh()
        if len(names) == 1 and names[0] in root._flattened:
            warnings.warn(
                "Slicing a flattened dim from root mesh will be deprecated in PT "
                "2.11. Users need to bookkeep the flattened mesh directly. ",
                UserWarning,
                stacklevel=2,
            )
            return root._flattened[names[0]]
        if not all(n in self._mesh_dim_names for n in names):
            valid = list(self._mesh_dim_names) + list(root._flattened)
            raise KeyError(
                f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are {valid}."
            )
        dims = [self._mesh_dim_names.index(n) for n in names]
        if dims != sorted(dims):
            raise KeyError(
                f"Invalid mesh_dim_names {names} specified. Mesh dim indices "
                f"should be in ascending order, but got {dims}."
            )
        coord = self.get_coordinate()
        index = tuple(slice(None) if i in dims else c for i, c in enumerate(coord))
        return DeviceMesh(
            self.device_type,
            self._ranks[index],
            mesh_dim_names=names,
            _init_backend=False,
            _root=root,
        )

    def _flatten(self, mesh_dim_name: str | None = None, backend_override=None) -> DeviceMesh:
        """A 1-d mesh of all this mesh's ranks, registered on the root mesh by name."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot flatten a DeviceMesh without mesh_dim_names!")
        name = mesh_dim_name or "_".join(self._mesh_dim_names)
        root = self._root_mesh()
        if root._mesh_dim_names and name in root._mesh_dim_names:
            raise RuntimeError(
                f"{name} already exists for submesh of the {root}. The mesh_dim_"
                f"names of submesh and flattened mesh are "
                f"{root._mesh_dim_names}. Please specify another valid "
                f"mesh_dim_name."
            )
        flat = DeviceMesh(
            self.device_type,
            self._ranks.ravel(),
            mesh_dim_names=(name,),
            _init_backend=False,
            _root=root,
        )
        root._flattened[name] = flat
        return flat

    @staticmethod
    def from_group(group, device_type: str, mesh=None, *, mesh_dim_names=None) -> DeviceMesh:
        """A mesh over an existing group (a list of groups needs `mesh`)."""
        if isinstance(group, (list, tuple)):
            if mesh is None:
                raise ValueError(
                    "Expects specifying the mesh when passing multiple groups but got None"
                )
            return DeviceMesh(device_type, mesh, mesh_dim_names=mesh_dim_names, _init_backend=False)
        ranks = c10d.get_process_group_ranks(group) if mesh is None else mesh
        return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names, _init_backend=False)

    # -- identity and printing ------------------------------------------------

    def _key(self) -> tuple:
        return (
            self._ranks.shape,
            tuple(self._ranks.ravel().tolist()),
            self.device_type,
            self._mesh_dim_names,
        )

    def __eq__(self, other) -> bool:
        return isinstance(other, DeviceMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        sizes = self.shape
        if self._mesh_dim_names:
            body = f"({', '.join(f'{k}={v}' for k, v in zip(self._mesh_dim_names, sizes))})"
        else:
            body = f"{sizes}"
        # PyTorch prints its layout's strides: a size-1 dimension coalesces to an empty one.
        strides = tuple(() if n == 1 else math.prod(sizes[i + 1 :]) for i, n in enumerate(sizes))
        return f"DeviceMesh({body}, '{self.device_type}', stride={strides})"

    def __enter__(self) -> DeviceMesh:
        """Makes this the current mesh (the default of DTensor calls made inside)."""
        _MESH_STACK.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _MESH_STACK.pop()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_jax"] = None  # jax devices are rebuilt where the mesh is loaded
        for key in ("_groups", "_line_groups", "_all_group"):
            state.pop(key, None)  # process groups belong to this process
        return state


def init_device_mesh(
    device_type: str, mesh_shape, *, mesh_dim_names=None, backend_override=None
) -> DeviceMesh:
    """Matches `torch.distributed.device_mesh.init_device_mesh`: ranks laid out row-major."""
    mesh_shape = tuple(int(n) for n in mesh_shape)
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError(
                f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name "
                f"in mesh_dim_names {tuple(mesh_dim_names)}"
            )
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError(
                f"mesh_shape and mesh_dim_names should have same length! Found "
                f"len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):"
                f"{len(mesh_shape)}."
            )
    if device_type and not device_type.isalpha():
        raise RuntimeError(
            f"Device type with index is not supported but got {device_type}. "
            f"If you maintained a 'torch.device' object, it's recommended to "
            f"pass in 'device.type'."
        )
    ranks = np.arange(math.prod(mesh_shape)).reshape(mesh_shape)
    return DeviceMesh(
        device_type, ranks, mesh_dim_names=mesh_dim_names, backend_override=backend_override
    )
