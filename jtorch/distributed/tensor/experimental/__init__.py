"""`torch.distributed.tensor.experimental`: implicit replication, local maps, custom sharding
rules and context parallelism."""

from __future__ import annotations

import contextlib
import functools

from ...._tensor import Tensor
from .._api import _IMPLICIT_REPLICATION, DTensor
from ..placement_types import Placement

__all__ = ["context_parallel", "implicit_replication", "local_map", "register_sharding"]


@contextlib.contextmanager
def implicit_replication():
    """Inside, a plain tensor in an op with DTensors is taken as replicated (PyTorch's)."""
    old = _IMPLICIT_REPLICATION[0]
    _IMPLICIT_REPLICATION[0] = True
    try:
        yield
    finally:
        _IMPLICIT_REPLICATION[0] = old


def local_map(
    func=None,
    out_placements=None,
    in_placements=None,
    in_grad_placements=None,
    device_mesh=None,
    *,
    redistribute_inputs: bool = False,
):
    """Matches `local_map`: `func` runs on the local tensors of DTensor arguments, and its
    tensor outputs become DTensors with `out_placements` (None: returned as they are)."""
    if func is None:
        return functools.partial(
            local_map,
            out_placements=out_placements,
            in_placements=in_placements,
            in_grad_placements=in_grad_placements,
            device_mesh=device_mesh,
            redistribute_inputs=redistribute_inputs,
        )

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        mesh = device_mesh
        local_args = []
        for i, a in enumerate(args):
            if isinstance(a, DTensor):
                mesh = mesh or a.device_mesh
                want = in_placements[i] if in_placements is not None else None
                if want is not None and tuple(a.placements) != tuple(want):
                    if not redistribute_inputs:
                        raise ValueError(
                            f"arg {a} in local_map has a mismatched placements: "
                            f"arg placements is {a.placements} but the input "
                            f"placements is {want}! If "
                            f"redistribute_inputs is wanted, set "
                            f"redistribute_inputs=True to local_map."
                        )
                    a = a.redistribute(a.device_mesh, want)
                a = a.to_local()
            local_args.append(a)
        out = func(*local_args, **kwargs)
        if out_placements is None or mesh is None:
            return out

        def wrap(o, placements):
            if isinstance(o, Tensor) and placements is not None:
                return DTensor.from_local(o, mesh, placements)
            return o

        if isinstance(out, (tuple, list)):
            specs = (
                out_placements
                if out_placements and not isinstance(out_placements[0], Placement)
                else [out_placements] * len(out)
            )
            return type(out)(wrap(o, p) for o, p in zip(out, specs))
        return wrap(out, out_placements)

    return wrapped


_SHARDING_RULES: dict = {}


def register_sharding(op):
    """Registers a sharding-strategy function for `op` (or ops). jtorch keeps the rule: over
    one rank placements do not change values, so it is not consulted."""
    ops = op if isinstance(op, list) else [op]

    def register(fn):
        for o in ops:
            _SHARDING_RULES[o] = fn
        return fn

    return register


@contextlib.contextmanager
def context_parallel(mesh, *, buffers=None, buffer_seq_dims=None, no_restore_buffers=None):
    """Matches `context_parallel`: shards `buffers` along their sequence dims over `mesh`
    inside the block (over a mesh of one rank each shard is the whole buffer) and restores
    them after."""
    buffers = [] if buffers is None else list(buffers)
    seq_dims = [] if buffer_seq_dims is None else list(buffer_seq_dims)
    if len(buffers) != len(seq_dims):
        raise ValueError("`seq_dims` must have the same number of elements as `buffers`.")
    for b in no_restore_buffers or ():
        if not any(b is x for x in buffers):
            raise ValueError("`no_restore_buffers` must be a subset of `buffers`.")
    if mesh.size() != 1:
        raise RuntimeError(
            "context_parallel over several ranks needs processes that this "
            "world of one process does not have"
        )
    yield
