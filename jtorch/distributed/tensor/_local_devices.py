"""DTensors on a mesh of one process's local devices (a TPU host, a multi-GPU box, or
`XLA_FLAGS=--xla_force_host_platform_device_count=8` on a CPU).

jtorch's extension of PyTorch, where a mesh's ranks are processes: when a process that is
a world of one asks `init_device_mesh` for more ranks than the world has, the mesh's ranks
are its local devices of the mesh's type (rank i: the i-th). The process is then every rank
at once, so a DTensor holds the whole global tensor as one jax array laid out by its
placements' `jax.sharding.NamedSharding` (`Shard(d)` on mesh dim i: tensor dim d split over
mesh axis i), and jax's compiler (GSPMD) inserts the collectives that ops on such arrays
need. `full_tensor()` is the whole tensor on the mesh's first device (where the process's
plain tensors are), `to_local()` the DTensor's array itself. Redistributing re-lays the
array out (an all-gather, all-to-all or slice that XLA picks); the gradient goes back to
the source's layout. jax only splits a dimension into equal blocks: a `Shard(d)` whose
dimension the mesh axis does not divide keeps that dimension whole on every device (its
placement is still reported as `Shard(d)`). A `Partial` placement is not a layout: its
value is the reduced one.
"""

from __future__ import annotations

import jax

from ..._tensor import Tensor
from ...autograd import Function
from ._dtensor_spec import named_sharding
from .placement_types import Replicate, Shard

__all__ = ["Relayout", "laid_out", "sharding"]


def sharding(mesh, placements, shape: tuple) -> jax.sharding.NamedSharding:
    """The layout of a tensor of `shape` with `placements` on a local-device mesh."""
    kept = tuple(
        Replicate() if isinstance(p, Shard) and shape[p.dim % len(shape)] % mesh.size(i) else p
        for i, p in enumerate(placements)
    )
    return named_sharding(mesh, kept, len(shape))


def laid_out(arr, mesh, placements):
    """`arr` placed on the mesh's devices as `placements` lay it out (None: whole on the
    first device, where this process's plain tensors are)."""
    if placements is None:
        return jax.device_put(arr, mesh.jax_mesh.devices.flat[0])
    if arr.ndim == 0:
        placements = tuple(Replicate() for _ in placements)
    return jax.device_put(arr, sharding(mesh, placements, tuple(arr.shape)))


class Relayout(Function):
    """`t`'s values laid out for placements `dst` (None: a plain tensor, see `laid_out`);
    the gradient goes back to `src`'s layout."""

    @staticmethod
    def forward(ctx, t: Tensor, mesh, src: tuple, dst: tuple):
        from ..._tensor import wrap

        ctx.mesh, ctx.src = mesh, src
        return wrap(laid_out(t._array, mesh, dst))

    @staticmethod
    def backward(ctx, grad: Tensor):
        from ..._tensor import wrap

        return wrap(laid_out(grad._array, ctx.mesh, ctx.src)), None, None, None
