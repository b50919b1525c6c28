"""A compiled step over several processes: one SPMD program with its collectives inside.

DESIGN 7, 14. `jtorch.compile` traces a step in each process on that process's arrays. A
collective over several processes met inside that trace (DDP's gradient all-reduce in
`loss.backward()`, its buffer broadcast in `forward`) cannot run there: the eager collective
is a program of its own over global arrays. It raises `NeedsWorld` instead, and the step is
traced again as one program of every process of the group: each of its inputs becomes this
process's block of a global array (`[1, *shape]` of `[n, *shape]`, sharded over a one-axis
mesh of the group's devices), the step runs under `jax.shard_map` on the blocks, and the
collectives inside it are `jax.lax` collectives over the mesh axis (`psum`, `all_gather`...:
the bodies of `distributed._xla`), which XLA lowers to gloo, NCCL or ICI. Each process gets
its block of every output back.

Every process must run the same program in the same order, as with any collective: a step
whose Python bakes the rank into the program (a constant, a branch) is not one program.
"""

from __future__ import annotations

import threading

import jax
import numpy as np
from jax._src.lax.lax import _convert_element_type
from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["AXIS", "NeedsWorld", "SpmdProgram", "world"]

AXIS = "r"  # the mesh axis of a group's processes (also `distributed._xla`'s)

_state = threading.local()


class NeedsWorld(Exception):
    """Raised inside a trace by a collective over several processes: the step must be
    traced again as one program of `devices` (each process's device, in group-rank order),
    given the platform its arrays live on."""

    def __init__(self, devices_of):
        super().__init__("a collective over several processes inside a compiled function")
        self.devices_of = devices_of


def world():
    """The devices of the SPMD program being traced on this thread, or None."""
    return getattr(_state, "devices", None)


class SpmdProgram:
    """`fn(*args) -> pytree of arrays`, run by every process of `devices` as one program.

    Called like `jax.jit(fn)`: with this process's arrays and Python numbers, returning this
    process's results. `fn` sees its own process's values (Python numbers as weakly typed
    scalars, as `jax.jit` gives them) and `world()` while it is traced.
    """

    def __init__(self, fn, devices: tuple):
        self.fn = fn
        self.devices = devices
        (self.me,) = [i for i, d in enumerate(devices) if d.process_index == jax.process_index()]
        self.mesh = Mesh(np.array(devices, dtype=object), (AXIS,))
        self.sharding = NamedSharding(self.mesh, PartitionSpec(AXIS))
        self._jitted: dict = {}  # per input structure (which leaves were Python numbers)

    def _lift(self, leaf):
        """This process's block of the global array of `leaf`."""
        arr = jax.numpy.asarray(leaf)
        local = jax.device_put(arr.reshape((1,) + arr.shape), self.devices[self.me])
        return jax.make_array_from_single_device_arrays(
            (len(self.devices),) + arr.shape, self.sharding, [local]
        )

    def _program(self, treedef, weak: tuple):
        key = (treedef, weak)
        jitted = self._jitted.get(key)
        if jitted is None:
            fn, devices = self.fn, self.devices

            def body(blocks):
                leaves = [
                    _convert_element_type(b[0], None, weak_type=True) if w else b[0]
                    for b, w in zip(blocks, weak)
                ]
                saved, _state.devices = world(), devices
                try:
                    out = fn(*jax.tree_util.tree_unflatten(treedef, leaves))
                finally:
                    _state.devices = saved
                return jax.tree_util.tree_map(lambda x: x[None], out)

            spec = PartitionSpec(AXIS)
            jitted = jax.jit(
                jax.shard_map(
                    body, mesh=self.mesh, in_specs=(spec,), out_specs=spec, check_vma=False
                )
            )
            self._jitted[key] = jitted
        return jitted

    def _lifted(self, args):
        leaves, treedef = jax.tree_util.tree_flatten(args)
        weak = tuple(isinstance(x, (bool, int, float, complex)) for x in leaves)
        return self._program(treedef, weak), [self._lift(x) for x in leaves]

    def __call__(self, *args):
        jitted, blocks = self._lifted(args)
        out = jitted(blocks)
        return jax.tree_util.tree_map(lambda g: g.addressable_shards[0].data[0], out)

    def trace(self, *args):
        """Traces the program for these arguments (jax's `Traced`: `.lower()` etc.)."""
        jitted, blocks = self._lifted(args)
        return jitted.trace(blocks)
