"""`DTensorSpec`: a DTensor's mesh, placements and global metadata; its `jax.sharding` form."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax

from .placement_types import Partial, Placement, Shard, _StridedShard

__all__ = ["DTensorSpec", "TensorMeta", "named_sharding"]


class TensorMeta(NamedTuple):
    """Matches PyTorch's `TensorMeta`: the global shape, stride and dtype of a DTensor."""

    shape: tuple
    stride: tuple
    dtype: object


def named_sharding(mesh, placements, ndim: int) -> jax.sharding.NamedSharding:
    """The `jax.sharding.NamedSharding` that lays a tensor out as `placements` do on `mesh`.

    `Shard(d)` on mesh dimension i names mesh axis i on tensor dimension d (several mesh
    axes sharding one dimension are listed in mesh order, as PyTorch splits them); a
    `Replicate` or `Partial` dimension is left out of the spec. A `Partial` value is not a
    layout jax has: its pending reduction stays with the DTensor's placements.
    """
    names = mesh.jax_mesh.axis_names
    dims: list = [[] for _ in range(ndim)]
    for axis, p in zip(names, placements):
        if isinstance(p, _StridedShard):
            raise NotImplementedError(
                "a _StridedShard placement has no NamedSharding: its "
                "shards are not contiguous blocks"
            )
        if isinstance(p, Shard):
            dims[p.dim % ndim].append(axis)
    spec = [None if not a else a[0] if len(a) == 1 else tuple(a) for a in dims]
    return jax.sharding.NamedSharding(mesh.jax_mesh, jax.sharding.PartitionSpec(*spec))


@dataclasses.dataclass
class DTensorSpec:
    """Matches PyTorch's `DTensorSpec`: where and how a DTensor lies."""

    mesh: object
    placements: tuple
    tensor_meta: TensorMeta | None = None

    def __post_init__(self):
        self.placements = tuple(self.placements)
        for p in self.placements:
            if not isinstance(p, Placement):
                raise TypeError(f"placements must be Placement objects, got {p!r}")

    @property
    def device_mesh(self):
        return self.mesh

    @property
    def shape(self) -> tuple:
        if self.tensor_meta is None:
            raise ValueError("tensor_meta is not set")
        return self.tensor_meta.shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def num_shards(self) -> int:
        n = 1
        for i, p in enumerate(self.placements):
            if p.is_shard():
                n *= self.mesh.size(i)
        return n

    def is_replicated(self) -> bool:
        return all(p.is_replicate() for p in self.placements)

    def is_sharded(self) -> bool:
        return any(p.is_shard() for p in self.placements)

    def is_partial(self) -> bool:
        return any(isinstance(p, Partial) for p in self.placements)

    @property
    def sharding(self) -> jax.sharding.NamedSharding:
        """This spec as a `jax.sharding.NamedSharding` (see `named_sharding`)."""
        return named_sharding(self.mesh, self.placements, self.ndim)
