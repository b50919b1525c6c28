"""Row buckets: a small eager kernel of a new row count runs padded to a bucket (DESIGN 13).

A `generate` loop without a key-value cache calls its model on a sequence one token longer
at each step, so every linear, layer_norm, gelu and causal attention kernel meets a row
count it has not met, and XLA compiles each (30-150 ms on a CPU) for one use. An op declared
with `rows=Rows(...)` computes each row (each position along one dim) from that row alone,
so a call can run on its inputs padded with zero rows to a bucket size (8, 12, 16, 24, 32,
48, ...: under 50% waste) and slice the real rows out: one program per bucket, not per
length. Zero rows keep every value finite (a zero row's layer_norm is its bias).

What the numbers are: the bucket program's. XLA vectorises a program by its shapes, so a
row computed in a padded program may differ in its last bits from the same row computed
unpadded (PyTorch's CPU kernels likewise round a row by the batch around it). They depend
only on the call (op, arguments, shapes), never on which shapes came before.

When: eager calls on one CPU device whose arrays are concrete and that record nothing on
the autograd tape (a call the tape records keeps its exact kernel: a training step's
programs, forward and backward, stay as they were), with at most `_MAX` elements in the
padded inputs (past that, padding and copying cost more than a compile saves).
"""

from __future__ import annotations

import collections
import inspect

import jax
import numpy as np

from .. import _programs

__all__ = ["ELEMENTWISE", "Rows", "bucket", "run"]

_ArrayImpl = type(jax.numpy.zeros(()))
# Padded inputs bigger than this (elements) run at their own shape.
_MAX = 1 << 16
_SMALLEST = 8


def bucket(n: int) -> int:
    """The bucket of `n` rows: 8, then the next of 12, 16, 24, 32, 48, 64, ... (2^k, 1.5 * 2^k)."""
    if n <= _SMALLEST:
        return _SMALLEST
    p = 1 << (n - 1).bit_length()  # the power of two at or above n
    three_quarters = p // 4 * 3
    return three_quarters if three_quarters >= n else p


class Rows:
    """How an op's call runs at a bucketed row count.

    Args:
      slots: the tensor parameters padded along the row dim (others enter as they are).
      dim: the row dim, counted from the end (the output's is the same), or a function of
        the op's parameters (by name) giving it.
      when: a function of the op's parameters (by name) saying whether a call's rows are
        independent (e.g. attention only when causal, so padded keys stay unseen).
    """

    __slots__ = ("slots", "dim", "when", "_names", "_dim_params", "_when_params")

    def __init__(self, slots: tuple, dim=-2, when=None):
        self.slots = tuple(slots)
        self.dim = dim
        self.when = when
        self._names = None
        self._dim_params = tuple(inspect.signature(dim).parameters) if callable(dim) else ()
        self._when_params = tuple(inspect.signature(when).parameters) if when else ()

    def bind(self, op) -> None:
        """Checks the declaration against `op`'s parameters (at import, as node rules are)."""
        names = [p.name for p in op.params]
        for p in self.slots + self._dim_params + self._when_params:
            if p not in names:
                raise TypeError(f"op {op.name}: rows= names {p!r}, not a parameter of it")
        self._names = names

    def plan(self, op, statics: tuple, arrays: tuple):
        """(slot indices padded, axis from the end, rows, bucket) for a call, or None."""
        values = {}
        slot_names = [op.params[i].name for i in op.slot_pos]
        values.update(zip(slot_names, arrays))
        values.update(zip(op.static_names, statics))
        if self.when is not None and not self.when(*[values[p] for p in self._when_params]):
            return None
        dim = self.dim(*[values[p] for p in self._dim_params]) if callable(self.dim) else self.dim
        padded = tuple(slot_names.index(s) for s in self.slots)
        n = None
        elements = 0
        for i in padded:
            a = arrays[i]
            if type(a) is not _ArrayImpl or a.ndim < -dim:
                return None
            if n is None:
                n = a.shape[dim]
            elif a.shape[dim] != n:
                return None
            elements += a.size // max(n, 1)
        b = bucket(n)
        if b == n or n == 0 or elements * b > _MAX:
            return None
        return padded, dim, n, b


# An elementwise op: any dim is a row dim; a sequence's length is the second-to-last one.
ELEMENTWISE = Rows(("input",), dim=lambda input: -2 if input.ndim >= 2 else -1)

# kernel key -> plan (or None): decided once per key. Bounded like the kernels.
_PLANS: collections.OrderedDict = collections.OrderedDict()
_PLANS_MAX = 4096


def run(op, key, fn, statics: tuple, arrays: tuple, call_args: list, kernels, build):
    """The call's result through its row bucket's kernel, or None where it runs as it is.

    `key` is the call's kernel key in `kernels` (the dispatcher's) and `fn` its kernel,
    `arrays` its inputs and `call_args` what `fn` is called with; `build(arrays)` makes the
    op's kernel for inputs of other shapes. The bucket's kernel is the one a call of the
    bucket's shape uses.
    """
    plan = _PLANS.get(key, False)
    if plan is False:
        plan = _plan(op, fn, statics, arrays, call_args)
        _PLANS[key] = plan
        if len(_PLANS) > _PLANS_MAX:
            _PLANS.popitem(last=False)
    if plan is None:
        return None
    padded, dim, n, b = plan
    rows = (Ellipsis, slice(0, n)) + (slice(None),) * (-dim - 1)
    first = arrays[padded[0]]
    device = next(iter(first.devices()))
    committed = first.committed
    args = list(call_args)
    inputs = list(arrays)
    sig = list(key[-1])
    for i in padded:
        a = np.asarray(arrays[i])
        shape = list(a.shape)
        shape[dim] = b
        z = np.zeros(shape, a.dtype)
        z[rows] = a
        args[i] = inputs[i] = _programs.to_device(z, device, committed)
        sig[i] = args[i].aval
    bkey = key[:-1] + (tuple(sig),)
    fn = kernels.get(bkey)
    if fn is None:
        fn = kernels.put(bkey, build(tuple(inputs)))
    out = np.asarray(fn(*args))
    return _programs.to_device(np.array(out[rows], order="C"), device, committed)


def _plan(op, fn, statics, arrays, call_args):
    for a in arrays:
        if type(a) is _ArrayImpl and next(iter(a.devices())).platform != "cpu":
            return None
    plan = op.rows.plan(op, statics, arrays)
    if plan is None:
        return None
    # Traced (not compiled) at the call's own shapes: its errors name them, and its result
    # must have the rows where the declaration says.
    out = jax.eval_shape(fn, *call_args)
    dim, n = plan[1], plan[2]
    if not isinstance(out, jax.ShapeDtypeStruct) or len(out.shape) < -dim or out.shape[dim] != n:
        return None
    return plan
