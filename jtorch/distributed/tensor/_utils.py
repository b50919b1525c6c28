"""`torch.distributed.tensor._utils`: where this rank's shard of a DTensor lies."""

from __future__ import annotations

from .placement_types import Shard, _StridedShard

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(global_shape, mesh, placements) -> tuple:
    """This rank's local shape and its offset in the global tensor, as PyTorch computes them.

    Shards are taken mesh dimension by mesh dimension, each splitting what the earlier ones
    left (`torch.chunk`'s split). A rank outside the mesh holds an empty shard.
    """
    coord = mesh.get_coordinate()
    if coord is None:
        return ((0,), ())
    shape, offset = list(global_shape), [0] * len(global_shape)
    for mesh_dim, p in enumerate(placements):
        if isinstance(p, _StridedShard):
            raise NotImplementedError(
                "compute_local_shape_and_global_offset of a "
                "_StridedShard placement is not supported"
            )
        if isinstance(p, Shard):
            size, start = Shard.local_shard_size_and_offset(
                shape[p.dim], mesh.size(mesh_dim), coord[mesh_dim]
            )
            shape[p.dim] = size
            offset[p.dim] += start
    return tuple(shape), tuple(offset)
