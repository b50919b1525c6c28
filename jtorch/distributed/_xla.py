"""The XLA programs behind the collectives: one `jax.jit` of a `shard_map` per collective.

Every process of a group holds its own array. The group is a one-axis `jax.sharding.Mesh`
(axis "r") of its ranks' devices, in group-rank order; each process hands its array to the
program as its block of a global array sharded over that axis (`[1, *shape]` per rank), and
gets back its block of the result. The program's body is the collective in `jax.lax`
(`psum`, `pmax`, `all_gather`, `psum_scatter`, `all_to_all`), which XLA lowers to gloo on
CPU, NCCL on GPU and ICI on TPU. A program is compiled once per (collective, group, shape,
dtype, options) and kept in a bounded `ProgramCache`.

What `jax.lax` has no collective for is composed of those it has, exactly: a product or a
bitwise reduction reduces the gathered blocks; a broadcast sums the source's bits with
zeros from the other ranks (integers added to zero are exact); a scatter is an all-to-all of
which each rank keeps the source's block.
"""

from __future__ import annotations

import contextlib
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .. import _spmd, _tracing
from .._programs import ProgramCache
from . import _runtime

__all__ = ["all_gather", "all_reduce", "all_to_all", "broadcast", "reduce_scatter", "scatter"]

_PROGRAMS = ProgramCache("distributed collectives", share=0.25)
_AXIS = _spmd.AXIS

# ReduceOp's names, as the programs are keyed by them.
SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR = (
    "sum",
    "avg",
    "product",
    "min",
    "max",
    "band",
    "bor",
    "bxor",
)


def _same_width_int(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"int{8 * np.dtype(dtype).itemsize}")


def _gathered_reduce(x, op: str):
    """Reduces the blocks of all ranks (gathered along a new axis 0) with `op`."""
    g = jax.lax.all_gather(x, _AXIS)
    if x.dtype == jnp.bool_:
        return (
            jnp.all(g, 0)
            if op in (PRODUCT, BAND, MIN)
            else (jnp.any(g, 0) if op != BXOR else jnp.sum(g, 0, dtype=jnp.int32) % 2 == 1)
        )
    if op == PRODUCT:
        return jnp.prod(g, 0, dtype=x.dtype)
    fn = {BAND: jax.lax.bitwise_and, BOR: jax.lax.bitwise_or, BXOR: jax.lax.bitwise_xor}[op]
    out = g[0]
    for i in range(1, g.shape[0]):
        out = fn(out, g[i])
    return out


def _reduce(x, op: str, n: int):
    """`x` reduced over the group with `op` (every rank gets the result)."""
    if x.dtype == jnp.bool_ and op in (SUM, MAX):
        return jax.lax.pmax(x.astype(jnp.uint8), _AXIS).astype(jnp.bool_)
    if x.dtype == jnp.bool_ and op == MIN:
        return jax.lax.pmin(x.astype(jnp.uint8), _AXIS).astype(jnp.bool_)
    if op in (SUM, AVG):
        s = jax.lax.psum(x, _AXIS)
        if op == AVG:
            s = s // n if jnp.issubdtype(x.dtype, jnp.integer) else (s / n).astype(x.dtype)
        return s
    if op == MAX:
        return jax.lax.pmax(x, _AXIS)
    if op == MIN:
        return jax.lax.pmin(x, _AXIS)
    return _gathered_reduce(x, op)


def _broadcast(x, src: int):
    """`x` of rank `src` on every rank, bit for bit (see the module doc)."""
    mine = jax.lax.axis_index(_AXIS) == src
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        return jax.lax.all_gather(x, _AXIS)[src]
    if x.dtype == jnp.bool_:
        return jax.lax.psum(jnp.where(mine, x, False).astype(jnp.uint8), _AXIS).astype(bool)
    bits = jax.lax.bitcast_convert_type(x, _same_width_int(x.dtype))
    total = jax.lax.psum(jnp.where(mine, bits, jnp.zeros_like(bits)), _AXIS)
    return jax.lax.bitcast_convert_type(total, x.dtype)


def _body(kind: str, n: int, static: tuple):
    """The per-rank body of collective `kind`: block `[1, *shape]` in, `[1, *out]` out."""

    def body(block):
        x = block[0]
        if kind == "all_reduce":
            out = _reduce(x, static[0], n)
        elif kind == "all_gather":
            out = jax.lax.all_gather(x, _AXIS)
        elif kind == "reduce_scatter":
            (op,) = static
            if op in (SUM, AVG) and x.dtype != jnp.bool_:
                out = jax.lax.psum_scatter(x, _AXIS, scatter_dimension=0, tiled=True)
                if op == AVG:
                    out = (
                        out // n
                        if jnp.issubdtype(x.dtype, jnp.integer)
                        else (out / n).astype(x.dtype)
                    )
            else:
                k = x.shape[0] // n
                full = _reduce(x, op, n)
                out = jax.lax.dynamic_slice_in_dim(full, jax.lax.axis_index(_AXIS) * k, k)
        elif kind == "all_to_all":
            out = jax.lax.all_to_all(x, _AXIS, 0, 0, tiled=True)
        elif kind == "broadcast":
            out = _broadcast(x, static[0])
        elif kind == "scatter":
            # x: [n, *shape] on the source (zeros elsewhere); rank r keeps the source's block r.
            out = jax.lax.all_to_all(x, _AXIS, 0, 0, tiled=True)[static[0]]
        else:
            raise AssertionError(kind)
        return out[None]

    return body


def _program(kind: str, devices: tuple, shape: tuple, dtype, static: tuple):
    key = (kind, tuple(d.id for d in devices), devices[0].platform, shape, str(dtype), static)
    fn = _PROGRAMS.get(key)
    if fn is None:
        mesh = Mesh(np.array(devices, dtype=object), (_AXIS,))
        spec = PartitionSpec(_AXIS)
        fn = jax.jit(
            jax.shard_map(
                _body(kind, len(devices), static),
                mesh=mesh,
                in_specs=spec,
                out_specs=spec,
                check_vma=False,
            )
        )
        fn = _PROGRAMS.put(key, (fn, NamedSharding(mesh, spec)))
    return fn


def group_devices(ranks: tuple, platform: str) -> tuple:
    """The devices of a group's ranks (each rank's first device of `platform`)."""
    return tuple(_runtime.rank_device(r, platform) for r in ranks)


def run(kind: str, devices: tuple, index: int, arr, static: tuple = (), wait: bool = True):
    """Runs collective `kind` over `devices` (this process is `devices[index]`) on `arr`.

    Returns this rank's result, ready: the call waits for the collective to finish, so
    collectives of different groups never overlap out of order. With `wait=False` (an
    `async_op=True` all-reduce: DDP's buckets) it returns as soon as the program is queued,
    and the result is a future. That keeps the order: jax's CPU client launches programs with
    collectives one at a time in the order they were queued, and a GPU runs them in stream
    order; what must be true, as in PyTorch, is that every rank queues them in one order.
    The first collective of a device set always waits (its gloo connection prints a line
    that `_quiet_stdout` keeps out of the program's output).
    """
    fn, sharding = _program(kind, devices, tuple(arr.shape), arr.dtype, static)
    me = devices[index]
    local = jax.device_put(arr[None], me)
    glob = jax.make_array_from_single_device_arrays(
        (len(devices),) + tuple(arr.shape), sharding, [local]
    )
    ids = tuple(d.id for d in devices)
    first = ids not in _CONNECTED
    with _quiet_stdout(devices[0].platform == "cpu" and first):
        out = fn(glob)
        (shard,) = out.addressable_shards
        result = shard.data[0]
        if wait or first:
            result.block_until_ready()
    _CONNECTED.add(ids)
    return result


_CONNECTED: set = set()  # the device sets whose gloo connections are made


@contextlib.contextmanager
def _quiet_stdout(quiet: bool):
    """Keeps gloo's C++ line "[Gloo] Rank i is connected to n peer ranks" (printed to the
    process's stdout when a group first connects) out of the program's output."""
    if not quiet:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def all_reduce(devices, index, arr, op: str):
    return run("all_reduce", devices, index, arr, (op,))


def all_gather(devices, index, arr):
    """[n, *shape]: every rank's `arr`, in group-rank order."""
    return run("all_gather", devices, index, arr)


def reduce_scatter(devices, index, arr, op: str):
    """Rank r's block of `arr` (dim 0 split n ways) reduced over the group."""
    return run("reduce_scatter", devices, index, arr, (op,))


def all_to_all(devices, index, arr):
    """Block j of rank i's `arr` (dim 0 split n ways) becomes block i of rank j's result."""
    return run("all_to_all", devices, index, arr)


def broadcast(devices, index, arr, src: int):
    return run("broadcast", devices, index, arr, (src,))


def scatter(devices, index, stacked, src: int):
    """Block r of the source's `stacked` ([n, *shape]) on rank r."""
    return run("scatter", devices, index, stacked, (src,))


def run_on_group(kind: str, pg, arr, *static, wait: bool = True):
    """Collective `kind` of this rank's `arr` over the process group `pg`: this rank's
    result (see `run` for `wait`)."""
    if isinstance(arr, jax.core.Tracer):
        return _traced(kind, tuple(pg.ranks), arr, tuple(static))
    devices = group_devices(tuple(pg.ranks), next(iter(arr.devices())).platform)
    return run(kind, devices, pg.rank(), arr, tuple(static), wait=wait)


def platform_of(arr) -> str:
    """The platform of `arr`'s device; for a traced value, that of the program's devices."""
    if isinstance(arr, jax.core.Tracer):
        world = _spmd.world()
        return world[0].platform if world else jax.default_backend()
    return next(iter(arr.devices())).platform


def _traced(kind: str, ranks: tuple, x, static: tuple):
    """A collective met while `jtorch.compile` traces a step: the body of its program, inside
    the step's own SPMD program over the group's processes (`_spmd`)."""
    world = _spmd.world()
    if world is None:
        raise _spmd.NeedsWorld(lambda platform: group_devices(ranks, platform))
    if group_devices(ranks, world[0].platform) != world:
        raise _tracing.GraphBreak(
            "a collective over a group other than the one the compiled function's first "
            "collective used"
        )
    return _body(kind, len(world), static)(x[None])[0]
