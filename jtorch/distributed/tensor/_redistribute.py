"""Moving a DTensor between placements over a mesh of several ranks, with autograd.

A rank holds its local piece of the global tensor. Placements change in two passes over the
mesh dimensions: first to a replicated whole (mesh dimensions from last to first: a
`Shard(d)` is all-gathered and concatenated along d, a `Partial` all-reduced), then to the
target (first to last: a `Shard(d)` keeps this rank's `torch.chunk` of dimension d).
Collectives run over the group of ranks along one mesh dimension (the ranks that differ from
this one only in that coordinate). Shards may be uneven, as `torch.chunk` makes them: they
are padded to the largest for the gather and trimmed after.

`Redistribute` is the autograd function, as in PyTorch: the gradient moves back from the
target placements to the source ones, a source `Partial` receiving a replicated gradient.
"""

from __future__ import annotations

import jax.numpy as jnp

from ..._tensor import Tensor
from ...autograd import Function
from .. import _comm_debug
from .. import distributed_c10d as c10d
from .placement_types import Partial, Replicate, Shard

__all__ = ["Redistribute", "global_shape", "is_pointwise", "local_chunk", "mesh_group"]


def mesh_group(mesh, dim: int):
    """The process group of this rank's line along mesh dimension `dim` (cached per mesh)."""
    groups = mesh.__dict__.setdefault("_line_groups", {})
    if dim not in groups:
        groups[dim] = mesh.get_group(dim)
    return groups[dim]


def global_shape(local_shape, mesh, placements) -> tuple:
    """The global shape of evenly sharded pieces of `local_shape` (PyTorch's assumption in
    `from_local` without `shape=`)."""
    shape = list(local_shape)
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            shape[p.dim] *= mesh.size(i)
    return tuple(shape)


def _chunk_bounds(size: int, n: int) -> list:
    """(start, length) of each of `torch.chunk`'s n pieces of `size` (empty ones included)."""
    return [Shard.local_shard_size_and_offset(size, n, i)[::-1] for i in range(n)]


def local_chunk(arr, mesh, placements, shape: tuple):
    """This rank's piece of the replicated global array `arr` (of `shape`)."""
    coord = mesh.get_coordinate()
    shape = list(shape)
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            start, length = _chunk_bounds(shape[p.dim], mesh.size(i))[coord[i]]
            arr = jnp.take(arr, jnp.arange(start, start + length), axis=p.dim)
            shape[p.dim] = length
    return arr


def _sizes_along(shape: tuple, mesh, placements, upto: int, dim: int) -> list:
    """The sizes along tensor dim `dim` of the pieces the ranks of mesh dim `upto` hold,
    given the shardings of the mesh dims before it (this rank's coordinates)."""
    coord = mesh.get_coordinate()
    size = shape[dim]
    for i in range(upto):
        p = placements[i]
        if isinstance(p, Shard) and p.dim == dim:
            size = _chunk_bounds(size, mesh.size(i))[coord[i]][1]
    return [length for _, length in _chunk_bounds(size, mesh.size(upto))]


def _to_replicate(arr, mesh, placements, shape: tuple):
    for i in reversed(range(len(placements))):
        p = placements[i]
        if isinstance(p, Replicate) or mesh.size(i) == 1:
            continue
        pg = mesh_group(mesh, i)
        if isinstance(p, Partial):
            _comm_debug.note("c10d_functional", "all_reduce")
            arr = c10d._reduced(arr, _REDUCE_OPS[p.reduce_op], pg)
        elif isinstance(p, Shard):
            _comm_debug.note("c10d_functional", "all_gather_into_tensor")
            sizes = _sizes_along(shape, mesh, placements, i, p.dim)
            width = max(sizes)
            pad = [(0, 0)] * arr.ndim
            pad[p.dim] = (0, width - arr.shape[p.dim])
            gathered = c10d._gathered(jnp.pad(arr, pad), pg)
            pieces = [jnp.take(gathered[j], jnp.arange(s), axis=p.dim) for j, s in enumerate(sizes)]
            arr = jnp.concatenate(pieces, axis=p.dim)
        else:
            raise NotImplementedError(f"redistributing a {p} placement is not supported")
    return arr


def redistribute_array(arr, mesh, src: tuple, dst: tuple, shape: tuple):
    """This rank's piece for placements `dst` from its piece `arr` for placements `src`."""
    if tuple(src) == tuple(dst):
        return arr
    for s, d in zip(src, dst):
        if isinstance(d, Partial) and s != d:
            raise RuntimeError(
                f"Can not redistribute from {s} to {d}, redistributing to "
                f"Partial is for internal use only!"
            )
    if (
        len(src) == 1
        and isinstance(src[0], Partial)
        and isinstance(dst[0], Shard)
        and src[0].reduce_op in _SCATTER_OPS
    ):
        return _reduce_scatter(arr, mesh, src[0].reduce_op, dst[0].dim, shape)
    # A mesh dim that keeps a Partial placement is reduced by no one: leave it out.
    keep = [isinstance(s, Partial) and s == d for s, d in zip(src, dst)]
    src_r = tuple(Replicate() if k else p for k, p in zip(keep, src))
    dst_r = tuple(Replicate() if k else p for k, p in zip(keep, dst))
    full = _to_replicate(arr, mesh, src_r, shape)
    return local_chunk(full, mesh, dst_r, shape)


_REDUCE_OPS = {
    "sum": c10d.ReduceOp.SUM,
    "avg": c10d.ReduceOp.AVG,
    "max": c10d.ReduceOp.MAX,
    "min": c10d.ReduceOp.MIN,
    "product": c10d.ReduceOp.PRODUCT,
}
_SCATTER_OPS = ("sum", "avg")


def _reduce_scatter(arr, mesh, reduce_op: str, dim: int, shape: tuple):
    """Partial -> Shard(dim) on a 1-d mesh as one reduce-scatter: dimension `dim` is padded
    to n equal blocks of `torch.chunk`'s largest piece (its pieces start at multiples of
    it), and each rank trims its reduced block to its piece's length."""
    n = mesh.size(0)
    sizes = [length for _, length in _chunk_bounds(shape[dim], n)]
    width = max(sizes)
    x = jnp.moveaxis(arr, dim, 0)
    x = jnp.pad(x, [(0, width * n - x.shape[0])] + [(0, 0)] * (x.ndim - 1))
    _comm_debug.note("c10d_functional", "reduce_scatter_tensor")
    out = c10d._reduce_scattered(x, _REDUCE_OPS[reduce_op], mesh_group(mesh, 0))
    return jnp.moveaxis(out[: sizes[mesh.get_coordinate()[0]]], 0, dim)


def _grad_target(src: tuple) -> tuple:
    return tuple(Replicate() if isinstance(p, Partial) else p for p in src)


class Redistribute(Function):
    """The local piece for new placements, differentiable (see the module doc)."""

    @staticmethod
    def forward(ctx, local: Tensor, mesh, src: tuple, dst: tuple, shape: tuple):
        from ..._tensor import wrap

        ctx.mesh, ctx.src, ctx.dst, ctx.shape = mesh, src, dst, shape
        return wrap(redistribute_array(local._array, mesh, src, dst, shape))

    @staticmethod
    def backward(ctx, grad: Tensor):
        from ..._tensor import wrap

        # A Partial source gets the replicated gradient: each rank's share of a sum has
        # the gradient of the sum.
        g = redistribute_array(grad._array, ctx.mesh, ctx.dst, _grad_target(ctx.src), ctx.shape)
        return wrap(g), None, None, None, None


def _pointwise_names() -> frozenset:
    from ..._ops._registry import OPS

    names = set()
    for full, op in OPS.items():
        if getattr(getattr(op, "impl", None), "__module__", "") == "jtorch._ops.pointwise":
            short = full.rsplit(".", 1)[-1]
            names.update((short, short + "_"))
    return frozenset(names)


_POINTWISE: list = []


def is_pointwise(func) -> bool:
    """Whether `func` (a torch function or Tensor method) is an elementwise op."""
    if not _POINTWISE:
        _POINTWISE.append(_pointwise_names())
    name = getattr(func, "__name__", "")
    if name.startswith("__") and name.endswith("__"):
        core = name[2:-2]
        core = core[1:] if core.startswith(("r", "i")) and core[1:] in _POINTWISE[0] else core
        name = core + ("_" if name.startswith("__i") else "")
    return name in _POINTWISE[0]
