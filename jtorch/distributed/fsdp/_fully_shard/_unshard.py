"""FSDP2's communication over several ranks: all-gather for compute, reduce-scatter of grads.

Before a module's forward, each of its sharded parameters is all-gathered into the whole
parameter (cast to the policy's `param_dtype`); the gathered tensor is what the module
computes with. Its backward is FSDP's gradient reduction: the whole gradient (cast to
`reduce_dtype`) is summed over the data-parallel ranks and each rank keeps its shard
(a reduce-scatter over the shard dimension of the mesh, an all-reduce over a replicate
dimension for HSDP), divided by the data-parallel size (or the module's
`set_gradient_divide_factor`), in the parameter's dtype. With gradient sync turned off
(`set_requires_gradient_sync(False)`) the whole gradients accumulate on the rank instead and
are reduced with the first synced backward.
"""

from __future__ import annotations

import jax.numpy as jnp

from ....autograd import Function
from ...tensor._redistribute import redistribute_array
from ...tensor.placement_types import Partial, Replicate

__all__ = ["ParamRef", "Unshard"]


class ParamRef:
    """The sharded parameter, handed to `Unshard` as a plain object (not an input)."""

    def __init__(self, param):
        self.param = param


class Unshard(Function):
    """The whole parameter from this rank's shard `local` (see the module doc)."""

    @staticmethod
    def forward(ctx, local, ref: ParamRef, state, key, dtype):
        from ...._tensor import wrap

        param = ref.param
        mesh, placements, shape = param.device_mesh, param.placements, tuple(param.shape)
        ctx.param, ctx.state, ctx.key = param, state, key
        full = redistribute_array(local._array, mesh, placements, (Replicate(),) * mesh.ndim, shape)
        if dtype is not None:
            full = full.astype(dtype.np)
        return wrap(full)

    @staticmethod
    def backward(ctx, grad):
        from ...._tensor import wrap

        param, state = ctx.param, ctx.state
        mesh, placements, shape = param.device_mesh, param.placements, tuple(param.shape)
        g = grad._array
        reduce_dtype = state.mp_policy.reduce_dtype
        if reduce_dtype is not None:
            g = g.astype(reduce_dtype.np)
        pending = state.unsharded_grads.pop(ctx.key, None)
        if pending is not None:
            g = g + pending.astype(g.dtype)
        if not state.requires_gradient_sync:
            state.unsharded_grads[ctx.key] = g
            zeros = jnp.zeros(param._array.shape, param._array.dtype)
            return wrap(zeros), None, None, None, None
        reduced = redistribute_array(g, mesh, (Partial(),) * mesh.ndim, placements, shape)
        factor = state.settings.get("gradient_divide_factor") or mesh.size()
        reduced = (reduced / factor).astype(param._array.dtype)
        return wrap(reduced), None, None, None, None
