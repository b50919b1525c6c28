"""Row buckets: a small eager kernel of a new row count runs padded to a bucket (DESIGN 13).

A `generate` loop without a key-value cache calls its model on a sequence one token longer
at each step, so every linear, layer_norm, gelu and causal attention kernel meets a row
count it has not met, and XLA compiles each (30-150 ms on a CPU) for one use. An op declared
with `rows=Rows(...)` computes each row (each position along one dim) from that row alone,
so a call can run on its inputs padded with zero rows to a bucket size (16, 24, 32, 48,
64, ...: under 50% waste past 16 rows) and slice the real rows out: one program per bucket, not per
length. Zero rows keep every value finite (a zero row's layer_norm is its bias). With a
key-value cache, attention meets a key length one longer at each step: keys and values pad
to their own bucket, the padded positions masked out (`AttentionRows`).

What the numbers are: the bucket program's. XLA vectorises a program by its shapes, so a
row computed in a padded program may differ in its last bits from the same row computed
unpadded (PyTorch's CPU kernels likewise round a row by the batch around it). They depend
only on the call (op, arguments, shapes), never on which shapes came before.

When: eager calls on one CPU device whose arrays are concrete and that record nothing on
the autograd tape (a call the tape records keeps its exact kernel: a training step's
programs, forward and backward, stay as they were), with at most `_MAX` elements in the
padded inputs and output (past that, padding and copying cost more than a compile saves).
"""

from __future__ import annotations

import collections
import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.array import ArrayImpl as _ArrayImpl

from .. import _programs

__all__ = [
    "BROADCAST",
    "ELEMENTWISE",
    "AttentionRows",
    "EinsumRows",
    "ElementwiseRows",
    "MatmulRows",
    "Plan",
    "ReductionRows",
    "Rows",
    "SoftmaxRows",
    "bucket",
    "run",
]

# Calls whose padded inputs and output hold more elements than this run at their own shape:
# past it, the host's copies cost more than a compile saves. Measured on a CPU for a decode
# step's attention (12 heads of 64, one query): 0.17 -> 0.75 ms a call at 500 keys (768K
# elements), against ~0.3 s to compile each new length; 0.38 -> 5.9 ms at 1300 keys.
_MAX = 1 << 20
_NUMBERS = (bool, int, float, complex)
# Up to this many rows, one bucket: a few padded rows cost microseconds (within the bound,
# `_MAX`), each further bucket a compile (30-150 ms), and a prompt's first lengths are short.
_SMALLEST = 16


def bucket(n: int) -> int:
    """The bucket of `n` rows: 16, then the next of 24, 32, 48, 64, 96, ... (2^k, 1.5 * 2^k).

    One row is its own bucket: a loop that decodes one token at a time (a key-value cache)
    meets that shape at every step, and padding it would multiply its work sixteenfold.
    """
    if n <= _SMALLEST:
        return n if n <= 1 else _SMALLEST
    p = 1 << (n - 1).bit_length()  # the power of two at or above n
    three_quarters = p // 4 * 3
    return three_quarters if three_quarters >= n else p


class Plan:
    """How one call runs padded: `pads` are (slot, dim, rows, bucket, fill) -- the slot's
    array padded along `dim` (from the end) from `rows` to `bucket` with `fill`; `sets` are
    (slot, value): numpy values taking a slot's place (a mask of the padded positions); the
    output's real part is the first `rows` along each `dim` of `cuts`, (dim, rows) pairs
    (none: an output without rows, as a reduction's)."""

    __slots__ = ("pads", "sets", "cuts")

    def __init__(self, pads: tuple, sets: tuple, cuts: tuple):
        self.pads, self.sets, self.cuts = pads, sets, cuts

    def elements(self, arrays) -> int:
        """How many elements the padded inputs hold."""
        grown: dict = {}
        for i, _, n, b, _ in self.pads:
            size = grown.get(i, arrays[i].size)
            grown[i] = size // max(n, 1) * b
        return sum(grown.values()) + sum(v.size for _, v in self.sets)


class Rows:
    """How an op's call runs at a bucketed row count.

    Args:
      slots: the tensor parameters padded along the row dim (others enter as they are).
      dim: the row dim, counted from the end (the output's is the same), or a function of
        the op's parameters (by name) giving it.
      when: a function of the op's parameters (by name) saying whether a call's rows are
        independent (e.g. softmax only over the last dim).
    """

    __slots__ = ("slots", "dim", "when", "_dim_params", "_when_params")

    def __init__(self, slots: tuple, dim=-2, when=None):
        self.slots = tuple(slots)
        self.dim = dim
        self.when = when
        self._dim_params = tuple(inspect.signature(dim).parameters) if callable(dim) else ()
        self._when_params = tuple(inspect.signature(when).parameters) if when else ()

    def names(self) -> tuple:
        """The op parameters the declaration reads."""
        return self.slots + self._dim_params + self._when_params

    def bind(self, op) -> None:
        """Checks the declaration against `op`'s parameters (at import, as node rules are)."""
        names = [p.name for p in op.params]
        for p in self.names():
            if p not in names:
                raise TypeError(f"op {op.name}: rows= names {p!r}, not a parameter of it")

    def plan(self, values: dict, slot_names: list, site: tuple):
        """The `Plan` of a call whose parameters are `values` (by name), or None. `site`
        names the op and its static arguments (what `_varies` tells calls apart by)."""
        if self.when is not None and not self.when(*[values[p] for p in self._when_params]):
            return None
        dim = self.dim(*[values[p] for p in self._dim_params]) if callable(self.dim) else self.dim
        pads = []
        n = None
        for name in self.slots:
            a = values[name]
            if type(a) is not _ArrayImpl or a.ndim < -dim:
                return None
            if n is None:
                n = a.shape[dim]
            elif a.shape[dim] != n:
                return None
            pads.append((slot_names.index(name), dim, n, bucket(n), 0))
        if not n or bucket(n) == n:
            return None
        return Plan(tuple(pads), (), ((dim, n),))


class AttentionRows(Rows):
    """Attention: each query row is its own (its output reads that query and every key), and
    keys padded after the last one are masked out, so queries and keys pad to their own
    buckets. Dropout draws by shape: calls with dropout run as they are."""

    def __init__(self):
        super().__init__(("query", "key", "value", "attn_mask"))

    def names(self) -> tuple:
        return self.slots + ("dropout_p", "is_causal")

    def plan(self, values: dict, slot_names: list, site: tuple):
        q, k, v, mask = values["query"], values["key"], values["value"], values["attn_mask"]
        if values["dropout_p"] or any(type(a) is not _ArrayImpl or a.ndim < 2 for a in (q, k, v)):
            return None
        lq, lk = q.shape[-2], k.shape[-2]
        if not lq or not lk or v.shape[-2] != lk:
            return None
        bq, bk = bucket(lq), bucket(lk)
        # Without a mask, the bucket's program takes one saying which keys are real, also
        # where none is padded (a length at a bucket's size then shares its program); a
        # causal call's padded keys come after every real query's, unseen already.
        unmasked = mask is None and not (values["is_causal"] and lq <= lk)
        if bq == lq and bk == lk and not unmasked:
            return None
        index = slot_names.index
        pads = [(index("query"), -2, lq, bq, 0)] if bq != lq else []
        sets = [(index("attn_mask"), np.arange(bk) < lk)] if unmasked else []
        if bk != lk:
            pads += [(index("key"), -2, lk, bk, 0), (index("value"), -2, lk, bk, 0)]
            if type(mask) is _ArrayImpl and mask.ndim and mask.shape[-1] == lk:
                fill = False if mask.dtype == np.bool_ else -np.inf
                pads.append((index("attn_mask"), -1, lk, bk, fill))
            elif mask is not None:
                return None
        if mask is not None and mask.ndim >= 2 and mask.shape[-2] == lq and bq != lq:
            pads.append((index("attn_mask"), -2, lq, bq, 0))  # (rows only a padded query reads)
        return Plan(tuple(pads), tuple(sets), ((-2, lq),))


class SoftmaxRows(Rows):
    """softmax and log_softmax over the last dim: each row along -2 is its own, and the
    last dim pads with -inf: a padded position's exponential is 0, so every sum over a row
    is its real positions' (a decode step's single query meets keys one longer each step)."""

    def __init__(self):
        super().__init__(("input",), when=lambda input, dim: dim in (-1, input.ndim - 1))

    def plan(self, values: dict, slot_names: list, site: tuple):
        x = values["input"]
        if type(x) is not _ArrayImpl or not x.ndim or not jnp.issubdtype(x.dtype, jnp.floating):
            return None
        if not self.when(x, values["dim"]):
            return None
        i = slot_names.index("input")
        pads = []
        for dim, fill in ((-2, 0), (-1, -np.inf)):
            n = x.shape[dim] if x.ndim >= -dim else 0
            if n and bucket(n) != n:
                pads.append((i, dim, n, bucket(n), fill))
        if pads and pads[-1][1] == -1 and not _varies(site + x.shape[:-2], x.shape[-1]):
            pads.pop()  # (a size that has not changed: a vocabulary's, say)
        return Plan(tuple(pads), (), tuple(p[1:3] for p in pads)) if pads else None


class ReductionRows(Rows):
    """A reduction of every element: once the size along an elementwise op's row dim
    changes, the input pads there with the reduction's identity, `identity(dtype)` (None:
    the call runs as it is), which changes no result; the output has no rows to cut."""

    __slots__ = ("identity",)

    def __init__(self, identity):
        super().__init__(("input",), dim=_sequence_dim)
        self.identity = identity

    def plan(self, values: dict, slot_names: list, site: tuple):
        plan = super().plan(values, slot_names, site)
        if plan is None:
            return None
        x = values["input"]
        fill = self.identity(x.dtype)
        if fill is None or not _varies(site + (x.ndim,), plan.cuts[0][1]):
            return None
        return Plan(tuple(p[:4] + (fill,) for p in plan.pads), (), ())


class EinsumRows(Rows):
    """An einsum of two operands, `equation` without an ellipsis: each label but the batch
    ones (in both operands and the output) is a row dim of its own. A label of the output
    has its padded positions cut from it; a contracted label's padded positions add
    products of zeros (attention's probabilities times values over a growing key cache)."""

    def __init__(self):
        super().__init__(("a", "b"))

    def names(self) -> tuple:
        return self.slots + ("equation",)

    def plan(self, values: dict, slot_names: list, site: tuple):
        lhs, arrow, out = values["equation"].replace(" ", "").partition("->")
        terms = lhs.split(",")
        arrays = (values["a"], values["b"])
        if not arrow or "." in lhs + out or len(terms) != 2:
            return None
        for term, a in zip(terms, arrays):
            if type(a) is not _ArrayImpl or len(term) != a.ndim or len(set(term)) != a.ndim:
                return None
        labels = {}
        for label in sorted(set(lhs) - {","}):
            if all(label in t for t in terms) and label in out:
                continue  # (a batch label)
            spans = [(k, t.index(label) - len(t)) for k, t in enumerate(terms) if label in t]
            labels[label] = (spans, out.index(label) - len(out) if label in out else None)
        return _labelled(site, labels, arrays, [slot_names.index(n) for n in self.slots])


class MatmulRows(Rows):
    """`matmul`/`bmm` of two operands of 2 dims or more: each of the product's rows,
    contracted dim and columns (i, j, k in `...ij, ...jk -> ...ik`) pads once its size
    changes, as an einsum's labels do; the batch dims enter as they are (scores and
    weighted values of attention written with `@`, over a sequence one longer each step)."""

    def plan(self, values: dict, slot_names: list, site: tuple):
        arrays = [values[name] for name in self.slots]
        if any(type(a) is not _ArrayImpl or a.ndim < 2 for a in arrays):
            return None
        site += (arrays[0].shape[:-2], arrays[1].shape[:-2])
        labels = {"i": ([(0, -2)], -2), "j": ([(0, -1), (1, -2)], None), "k": ([(1, -1)], -1)}
        return _labelled(site, labels, arrays, [slot_names.index(n) for n in self.slots])


class ElementwiseRows(Rows):
    """Elementwise ops: the row dim (the second-to-last of the output, its only one for one
    dim) pads as `Rows` does (with `vary_rows`, once its size changes), and the last dim
    once its size changes (a causal mask's (T, T) comparison over a growing T). Operands
    that broadcast along a dim (a number, an array without that dim or of size 1 there)
    enter as they are. A padded position's zeros may divide by zero: its values are cut."""

    __slots__ = ("vary_rows",)

    def __init__(self, slots: tuple, vary_rows: bool = False):
        super().__init__(slots)
        self.vary_rows = vary_rows

    def plan(self, values: dict, slot_names: list, site: tuple):
        arrays = [values[name] for name in self.slots]
        if any(type(a) is not _ArrayImpl and type(a) not in _NUMBERS for a in arrays):
            return None
        ndim = max((a.ndim for a in arrays if type(a) is _ArrayImpl), default=0)
        if not ndim:
            return None
        dims = (-2, -1) if ndim >= 2 else (-1,)  # (the first: the row dim)
        labels = {
            d: ([(k, d) for k, a in enumerate(arrays) if type(a) is _ArrayImpl and a.ndim >= -d], d)
            for d in dims
        }
        slots = [slot_names.index(name) for name in self.slots]
        return _labelled(site + (ndim,), labels, arrays, slots, () if self.vary_rows else dims[:1])


def _labelled(site: tuple, labels: dict, arrays, slots, at_once=()) -> Plan | None:
    """The plan padding each label of `labels` (label -> ((operand, dim), ...), its output
    dim or None) whose size has changed at `site` (those of `at_once`: whatever their size),
    in every operand where it has that size (size 1 broadcasts), and cutting it from the
    output."""
    pads, cuts = [], []
    for label, (spans, out_dim) in labels.items():
        sizes = {arrays[k].shape[d] for k, d in spans} - {1}
        if len(sizes) != 1:
            continue
        (n,) = sizes
        if bucket(n) == n or (label not in at_once and not _varies(site + (label,), n)):
            continue
        pads += [(slots[k], d, n, bucket(n), 0) for k, d in spans if arrays[k].shape[d] == n]
        if out_dim is not None:
            cuts.append((out_dim, n))
    return Plan(tuple(pads), (), tuple(cuts)) if pads else None


# (an op and its statics, where in its calls) -> the size first met there. Dims that pad
# only once a second size comes there: softmax's last dim, an elementwise op's last dim, an
# einsum's or matmul's labels; a size that never changes (a vocabulary's, a head's width)
# runs as it is. Bounded like the plans.
_FIRST_SIZES: collections.OrderedDict = collections.OrderedDict()


def _varies(site: tuple, n: int) -> bool:
    first = _FIRST_SIZES.get(site)
    if first is None:
        _FIRST_SIZES[site] = first = n
        if len(_FIRST_SIZES) > _PLANS_MAX:
            _FIRST_SIZES.popitem(last=False)
    return first != n


def _sequence_dim(input) -> int:
    return -2 if input.ndim >= 2 else -1


# A unary elementwise op (gelu, exp, ...: a generate loop's (B, T, C) activations) pads its
# rows at once; a binary one (everywhere: data, metrics, masks) once they change too, so a
# call whose sizes never change runs as it is, without host copies.
ELEMENTWISE = ElementwiseRows(("input",))
BROADCAST = ElementwiseRows(("input", "other"), vary_rows=True)

# kernel key -> plan (or None): decided once per key. Bounded like the kernels.
_PLANS: collections.OrderedDict = collections.OrderedDict()
_PLANS_MAX = 4096


def unpadded(key) -> bool:
    """Whether calls of kernel `key` are known to run at their own shape (no plan)."""
    return _PLANS.get(key, False) is None


def run(op, key, fn, statics: tuple, arrays: tuple, call_args: list, kernels, build):
    """The call's result through its row bucket's kernel, or None where it runs as it is.

    `key` is the call's kernel key in `kernels` (the dispatcher's) and `fn` its kernel,
    `arrays` its inputs and `call_args` what `fn` is called with; `build(arrays)` makes the
    op's kernel for inputs of other shapes. The bucket's kernel is the one a call of the
    bucket's shape uses.
    """
    plan = _PLANS.get(key, False)
    if plan is False:
        plan = _plan(op, key, fn, statics, arrays, call_args)
        _PLANS[key] = plan
        if len(_PLANS) > _PLANS_MAX:
            _PLANS.popitem(last=False)
    if plan is None:
        return None
    first = next(a for a in arrays if type(a) is _ArrayImpl)
    device = next(iter(first.devices()))
    if device.platform != "cpu":  # (an accelerator's data stays there)
        return None
    committed = first.committed
    args = list(call_args)
    inputs = list(arrays)
    sig = list(key[-1])
    padded = {}
    for i, dim, n, b, fill in plan.pads:
        a = padded.get(i)
        a = np.asarray(arrays[i]) if a is None else a
        shape = list(a.shape)
        shape[dim] = b
        z = np.full(shape, fill, a.dtype)
        z[_first(dim, n)] = a
        padded[i] = z
    for i, value in plan.sets:
        padded[i] = value
    for i, value in padded.items():
        args[i] = inputs[i] = _programs.to_device(value, device, committed)
        sig[i] = args[i].aval
    bkey = key[:-1] + (tuple(sig),)
    fn = kernels.get(bkey)
    if fn is None:
        fn = kernels.put(bkey, build(tuple(inputs)))
    out = np.asarray(fn(*args))
    real = out[_cut(out.ndim, plan.cuts)]
    return _programs.to_device(np.array(real, order="C"), device, committed)


def _first(dim: int, n: int) -> tuple:
    """The index of the first `n` positions along `dim` (counted from the end)."""
    return (Ellipsis, slice(0, n)) + (slice(None),) * (-dim - 1)


def _cut(ndim: int, cuts: tuple) -> tuple:
    """The index of an output's real part: the first `n` positions along each (dim, n)."""
    index = [slice(None)] * ndim
    for dim, n in cuts:
        index[dim] = slice(0, n)
    return tuple(index)


def _plan(op, key, fn, statics, arrays, call_args):
    for a in arrays:
        if type(a) is _ArrayImpl and next(iter(a.devices())).platform != "cpu":
            return None
    slot_names = [op.params[i].name for i in op.slot_pos]
    values = dict(zip(slot_names, arrays))
    values.update(zip(op.static_names, statics))
    site = key[:-1] + (tuple(getattr(a, "dtype", None) for a in arrays),)
    plan = op.rows.plan(values, slot_names, site)
    if plan is None or plan.elements(arrays) > _MAX:
        return None  # (checked before tracing: most big calls stop here)
    family = _family(key, plan, arrays)
    fits = _FAMILIES.get(family)
    if fits is None:
        fits = _FAMILIES[family] = _fits(plan, fn, arrays, call_args)
        if len(_FAMILIES) > _PLANS_MAX:
            _FAMILIES.popitem(last=False)
    return plan if fits else None


# family (`_family`) -> whether its calls run padded (`_fits`). Bounded like the plans.
_FAMILIES: collections.OrderedDict = collections.OrderedDict()


def _fits(plan, fn, arrays, call_args) -> bool:
    # Traced (not compiled) at the call's own shapes: its errors name them, and its result
    # must have the rows where the declaration says.
    out = jax.eval_shape(fn, *call_args)
    if not isinstance(out, jax.ShapeDtypeStruct):
        return False
    size = math.prod(out.shape)
    for dim, n in plan.cuts:
        if len(out.shape) < -dim or out.shape[dim] != n:
            return False
        size = size // n * bucket(n)
    return plan.elements(arrays) + size <= _MAX


def _family(key, plan, arrays) -> tuple:
    """What a call's plan and tracing depend on: its kernel key with each padded row count
    replaced by its bucket, which row counts are equal or smaller than which, and where else
    among the inputs' sizes each row count appears. Calls of one family differ only in how
    many of a bucket's rows are real, so one trace at its first call's shapes (`_fits`)
    answers for all: a `generate` loop traces each op once per bucket, not once per length
    (~4 ms a call, 0.35 s of a ten-token loop of a small GPT)."""
    sig = list(key[-1])
    shapes = {}
    rows = []
    for i, dim, n, b, _ in plan.pads:
        shape = shapes.setdefault(i, list(sig[i].shape))  # (a slot may pad two dims)
        shape[dim] = -b  # (negative: no real size)
        rows.append(n)
    for i, shape in shapes.items():
        sig[i] = (tuple(shape), sig[i].dtype)
    order = tuple((x > y) - (x < y) for x in rows for y in rows)
    sizes = [tuple(a.shape) if hasattr(a, "shape") else None for a in arrays]
    where = tuple(
        tuple((j, d) for j, s in enumerate(sizes) if s for d, m in enumerate(s) if m == n)
        for n in rows + [n for _, n in plan.cuts]
    )
    sets = tuple(i for i, _ in plan.sets)
    return (key[:-1], tuple(sig), tuple(p[:2] + p[3:] for p in plan.pads), sets, order, where)
