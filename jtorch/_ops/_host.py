"""Kernels of a new shape that move data, or do exact arithmetic, run on the host (DESIGN 13).

A kernel call whose (op, statics, shapes, dtypes) key is not yet due for its program
(`_programs.Rent`: until the host's runs of it have cost about a compile) is not compiled
when numpy can give its result bit for bit:
the kernel is traced to a jaxpr (no compile), and when every equation is one of the
primitives below, numpy evaluates it on the host and the result is placed on the device.
That is `embedding`, `index_select`, `take`, `gather`, indexing with an integer tensor,
`cat`, `stack`, `where`, `masked_fill`, dtype casts, integer arithmetic (division and
remainder too: `arange(n) % k`), and `add`/`sub`/`mul`/`neg` of floats: a
`generate` loop's growing length then compiles none of them until the length comes back.

Exact by construction: the rules copy, select and reorder elements, do integer arithmetic
(two's complement in numpy as in XLA), and float add/sub/mul, which IEEE rounds alike in
both (float16 and bfloat16 through float32 in both). Where XLA's CPU code and numpy part, a
rule checks the values and declines, and the call compiles as before: XLA flushes subnormal
floats to zero (inputs and results); NaN payloads; an out-of-range index XLA clamps or
fills; a float-to-int cast out of range; an inexact product feeding an add (XLA contracts
the two into one rounding). Division, comparisons and max/min of floats are not here: see
the README's "Not chosen".
"""

from __future__ import annotations

import collections
import time

import jax
import ml_dtypes
import numpy as np

from .. import _programs

try:  # (jax.extend.core's own class; importing jax.extend loads pallas too: ~20 ms)
    from jax._src.core import Literal
except ImportError:
    from jax.extend.core import Literal

__all__ = ["evaluate"]


class _Decline(Exception):
    """The host cannot reproduce this kernel's result exactly: compile it."""


# (A bounded map) kernel key -> (closed jaxpr, output tree, whether products must be exact,
# whether it does float arithmetic, whether it was traced at the key's sizes), or None where
# the kernel is not data movement. Built once per key: the tracing costs ~1 ms, a compile
# tens.
_PLANS: collections.OrderedDict = collections.OrderedDict()
_PLANS_MAX = 4096
_seen = _programs.Rent()
# Per op: how many of its kernels were not data movement, or -1 once one was.
_declined: collections.defaultdict = collections.defaultdict(int)
_GIVE_UP = 4
# Inputs bigger than this (elements) are left to XLA: numpy's one thread, and for arithmetic
# its value checks, would cost more than a compile.
_MAX = 1 << 22
_MAX_ARITHMETIC = 1 << 18


def evaluate(key, fn, args: tuple):
    """The kernel's result computed on the host, or None where it must be compiled.

    `args` are what `fn` is called with (jax arrays on one CPU device, Python numbers, None,
    tuples of arrays). Raises what tracing `fn` raises (the op's own errors), as a compiled
    call would.
    """
    op = key[0]
    if _declined[op] >= _GIVE_UP or _seen.due(key):
        return None
    plan = _PLANS.get(key, False)
    if plan is False:
        family = _family(key, args)
        plan = _SHAPELESS.get(family)
        if plan is not None:
            plan = plan[:4] + (False,)  # (traced at other sizes of the family)
        else:
            plan = _plan(fn, args)
            if plan is not None and _shape_free(plan[0]):
                _SHAPELESS[family] = plan
                if len(_SHAPELESS) > _PLANS_MAX:
                    _SHAPELESS.popitem(last=False)
        _PLANS[key] = plan
        if len(_PLANS) > _PLANS_MAX:
            _PLANS.popitem(last=False)
        # an op none of whose kernels moved data (arithmetic) is not traced again
        _declined[op] = _declined[op] + 1 if plan is None and _declined[op] >= 0 else -1
    if plan is None:
        return None
    start = time.perf_counter()
    closed, tree, exact_products, arithmetic, sized = plan
    leaves = jax.tree_util.tree_leaves(args)
    if sum(getattr(a, "size", 1) for a in leaves) > (_MAX_ARITHMETIC if arithmetic else _MAX):
        return None
    device = None
    committed = False
    values = []
    for leaf, var in zip(leaves, closed.jaxpr.invars):
        if isinstance(leaf, jax.Array):
            if device is None or (leaf.committed and not committed):
                device = next(iter(leaf.devices()))
            committed = committed or leaf.committed
            values.append(np.asarray(leaf))
        else:
            try:
                values.append(np.asarray(leaf, var.aval.dtype))
            except (OverflowError, TypeError, ValueError):
                return None
    if device is None or device.platform != "cpu":
        return None
    try:
        with np.errstate(all="ignore"):
            outs = _eval(closed.jaxpr, closed.consts, values, exact_products, sized)
    except _Decline:
        return None
    # (a copy: never a view of an input's buffer)
    arrays = [_programs.to_device(np.array(o, order="C"), device, committed) for o in outs]
    _seen.pay(key, time.perf_counter() - start)
    return jax.tree_util.tree_unflatten(tree, arrays)


def _plan(fn, args):
    # Traced through the kernel's own `jax.jit` wrapper where it has one: jax keeps the trace,
    # and a kernel that is not data movement is then compiled without tracing it again
    # (~8 ms a kernel, about a third of what a cached kernel costs a script's second run).
    if hasattr(fn, "trace"):
        traced = fn.trace(*args)
        closed, shapes = traced.jaxpr, traced.out_info
    else:
        closed, shapes = jax.make_jaxpr(fn, return_shape=True)(*args)
    arithmetic: list = []
    if not _movable(closed.jaxpr, arithmetic) or any(
        v.aval.weak_type for v in closed.jaxpr.outvars
    ):
        return None
    # XLA contracts a multiply feeding an add into one rounding (FMA) where numpy rounds
    # twice: with more than one float op, each product must be exact (then both agree).
    tree = jax.tree_util.tree_structure(shapes)
    return closed, tree, len(arithmetic) > 1, bool(arithmetic), True


# (A bounded map) a family of calls (`_family`) -> the plan of one of them, where that plan
# holds no size (`_shape_free`): a `generate` loop's `cat` of a cache one longer each step,
# or its elementwise adds, trace once, not at every length (~1-3 ms a trace).
_SHAPELESS: collections.OrderedDict = collections.OrderedDict()


def _family(key, args) -> tuple:
    """What a kernel's plan depends on besides sizes: the op and its statics, the arguments'
    structure, ranks and dtypes, and which sizes are 0, 1 or equal to which."""
    leaves, tree = jax.tree_util.tree_flatten(args)
    kinds, sizes = [], []
    for leaf in leaves:
        aval = getattr(leaf, "aval", None)
        if aval is None:
            kinds.append(type(leaf))
        else:
            kinds.append((aval.dtype, aval.weak_type, len(aval.shape)))
            sizes += aval.shape
    first: dict = {}
    classes = tuple(n if n < 2 else first.setdefault(n, -2 - len(first)) for n in sizes)
    return key[:-1], tree, tuple(kinds), classes


def _shape_free(closed) -> bool:
    """Whether a traced plan holds no size: each equation's parameters name none, and no
    constant could be one (an index wrapped by `+ n`): constants and literals are 0, 1 or -1
    (a size 0 or 1 is fixed by the family)."""
    if not all(_unsized(c) for c in closed.consts):
        return False

    def free(jaxpr) -> bool:
        for eqn in jaxpr.eqns:
            if eqn.primitive.name not in _NO_SIZES:
                return False
            if not all(_unsized(v.val) for v in eqn.invars if isinstance(v, Literal)):
                return False
            if eqn.primitive.name in _CALLS and not free(eqn.params["jaxpr"].jaxpr):
                return False
        return True

    return free(closed.jaxpr)


def _unsized(value) -> bool:
    return np.ndim(value) == 0 and value in (0, 1, -1)


def _movable(jaxpr, arithmetic: list | None = None) -> bool:
    """Whether every equation has an exact rule (`arithmetic` collects the float ones)."""
    arithmetic = [] if arithmetic is None else arithmetic
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        ints = all(_kind(v.aval.dtype) in "biu" for v in eqn.invars)
        if name in _CALLS:
            if not _movable(eqn.params["jaxpr"].jaxpr, arithmetic):
                return False
        elif name in _FLOAT_ARITHMETIC and not ints:
            # (a literal operand is folded by XLA's simplifier: `x + 0.0` keeps -0.0)
            if any(isinstance(v, Literal) or v.aval.dtype not in _FLOATS for v in eqn.invars):
                return False
            arithmetic.append(eqn)
        elif name in _INT_ONLY:
            if not ints:
                return False
        elif name not in _RULES:
            return False
    return True


def _kind(dtype) -> str:
    return np.dtype(dtype).kind


def _eval(jaxpr, consts, args, exact_products: bool, sized: bool = True) -> list:
    """`jaxpr` evaluated by the rules. `sized`: the plan was traced at these inputs' sizes, and
    each result must have its traced shape (else, traced at other sizes of its family, its
    traced rank)."""
    env = {}

    def read(v):
        if isinstance(v, Literal):
            return np.asarray(v.val, v.aval.dtype)
        return env[v]

    for var, val in zip(jaxpr.constvars, consts):
        env[var] = np.asarray(val)
    for var, val in zip(jaxpr.invars, args):
        env[var] = val
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        name = eqn.primitive.name
        if name in _CALLS:
            inner = eqn.params["jaxpr"]
            outs = _eval(inner.jaxpr, inner.consts, ins, exact_products, sized)
        else:
            outs = [_RULES[name](*ins, **eqn.params)]
            if exact_products and name == "mul" and not _exact_product(*ins, outs[0]):
                raise _Decline
        for var, out in zip(eqn.outvars, outs):
            out = np.asarray(out)
            # a rule that does not give the traced shape and dtype is not trusted
            shape = out.shape if sized else len(out.shape)
            if shape != (var.aval.shape if sized else len(var.aval.shape)):
                raise _Decline
            if out.dtype != var.aval.dtype:
                raise _Decline
            env[var] = out
    return [read(v) for v in jaxpr.outvars]


# ---------------------------------------------------------------------------
# The rules: one per primitive, numpy's exact equivalent of XLA's.


def _is_float(dtype) -> bool:
    # (ml_dtypes' bfloat16 and float8 types have numpy kind "V")
    return np.issubdtype(dtype, np.floating) or dtype.kind == "V"


def _subnormal_or_nan(x) -> bool:
    if not _is_float(x.dtype) or x.size == 0:
        return False
    tiny = ml_dtypes.finfo(x.dtype).tiny
    a = np.abs(x.astype(np.float64))
    return bool(np.isnan(a).any() or ((a < tiny) & (a != 0)).any())


_FLOATS = frozenset(np.dtype(d) for d in ("float16", "float32", "float64")) | {
    np.dtype(jax.numpy.bfloat16)
}


def _convert(x, new_dtype, weak_type=False, sharding=None):
    dst = np.dtype(new_dtype)
    src = x.dtype
    src_float, dst_float = _is_float(src), _is_float(dst)
    if src.kind == "c" or dst.kind == "c":
        raise _Decline
    if (src_float and src not in _FLOATS) or (dst_float and dst not in _FLOATS):
        raise _Decline  # float8: XLA's conversions are not checked against ml_dtypes'
    if src_float:
        # XLA's CPU code treats subnormal inputs as zero; NaN payloads are its own
        if _subnormal_or_nan(x):
            raise _Decline
        if dst.kind in "iu":
            # (XLA saturates what is out of range; numpy's cast is undefined there)
            wide = x.astype(np.float64)
            info = np.iinfo(dst)
            if not (np.isfinite(wide).all() and (wide > info.min - 1.0).all()):
                raise _Decline
            if not (wide < info.max + 1.0).all():
                raise _Decline
    elif dst_float and x.size:
        exact = 2 ** (ml_dtypes.finfo(dst).nmant + 1)
        if np.abs(x.astype(np.float64)).max() > exact:
            raise _Decline  # an int that the float cannot hold exactly: XLA rounds it
    out = x.astype(dst)
    # (a subnormal result XLA flushes to zero; an overflow to inf is left to XLA too)
    if dst_float and (_subnormal_or_nan(out) or (np.isinf(out) & ~np.isinf(x)).any()):
        raise _Decline
    return out


def _broadcast_in_dim(x, shape, broadcast_dimensions, sharding=None):
    full = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        full[d] = x.shape[i]
    return np.broadcast_to(x.reshape(full), shape)


def _reshape(x, new_sizes, dimensions=None, sharding=None):
    if dimensions is not None:
        raise _Decline
    return x.reshape(new_sizes)


def _slice(x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, strides))]


def _dynamic_slice(x, *starts, slice_sizes):
    # XLA clamps each start so that the slice fits
    index = []
    for n, s, k in zip(x.shape, starts, slice_sizes):
        s = int(min(max(int(s), 0), n - k))
        index.append(slice(s, s + k))
    return x[tuple(index)]


def _iota(dtype, shape, dimension, sharding=None):
    line = np.arange(shape[dimension], dtype=dtype)
    full = [1] * len(shape)
    full[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(full), shape)


def _select_n(which, *cases):
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]
    if which.size and (which.min() < 0 or which.max() >= len(cases)):
        raise _Decline
    return np.choose(which, cases)


def _gather(
    operand,
    indices,
    dimension_numbers,
    slice_sizes,
    indices_are_sorted,
    unique_indices,
    mode,
    fill_value,
):
    """Gathers that index whole rows (`take`, `embedding`, `x[idx]`); others decline."""
    dn = dimension_numbers
    if dn.operand_batching_dims or dn.start_indices_batching_dims:
        raise _Decline
    starts = tuple(dn.start_index_map)
    if sorted(starts) != sorted(dn.collapsed_slice_dims):
        raise _Decline
    rest = [d for d in range(operand.ndim) if d not in starts]
    if any(slice_sizes[d] != 1 for d in starts) or any(
        slice_sizes[d] != operand.shape[d] for d in rest
    ):
        raise _Decline
    if len(dn.offset_dims) != len(rest) or indices.shape[-1] != len(starts):
        raise _Decline
    mode = str(mode)
    idx = []
    for j, d in enumerate(starts):
        i = indices[..., j].astype(np.int64)
        n = operand.shape[d]
        if "CLIP" in mode:
            i = np.clip(i, 0, n - 1)
        elif i.size and (i.min() < 0 or i.max() >= n):
            raise _Decline  # filled, or clamped by a promise: left to XLA
        idx.append(i)
    if 0 in operand.shape and any(i.size for i in idx):
        raise _Decline
    moved = np.transpose(operand, starts + tuple(rest))
    taken = moved[tuple(idx)] if idx else moved
    nb = taken.ndim - len(rest)
    perm, b = [], 0
    offsets = list(dn.offset_dims)
    for p in range(taken.ndim):
        if p in offsets:
            perm.append(nb + offsets.index(p))
        else:
            perm.append(b)
            b += 1
    return np.transpose(taken, perm)


def _int_binary(f):
    return lambda a, b, **_: f(a, b)


def _int_division(a, b, remainder: bool):
    """XLA's integer `div`/`rem`: C's, truncating toward zero (numpy's `//` floors). A zero
    divisor, and the one overflow (the most negative value by -1), decline: XLA gives them
    values of its own."""
    if np.any(b == 0) or (a.dtype.kind == "i" and np.any((a == np.iinfo(a.dtype).min) & (b == -1))):
        raise _Decline
    q = np.floor_divide(a, b)
    r = a - q * b
    if a.dtype.kind == "i":
        fix = (r != 0) & ((a < 0) != (b < 0))  # floored where truncation rounds up
        q = np.where(fix, q + 1, q).astype(a.dtype)
        r = np.where(fix, r - b, r).astype(a.dtype)
    return r if remainder else q


def _negate(x):
    """A sign flip, exact in both (-0.0 too); subnormals (flushed by XLA) and NaNs decline."""
    if _is_float(x.dtype) and _subnormal_or_nan(x):
        raise _Decline
    return np.negative(x)


def _arithmetic(f):
    """An elementwise float op IEEE rounds alike in numpy and XLA (float16/bfloat16 through
    float32 in both), except where XLA's CPU code flushes subnormals, or picks a NaN's
    payload otherwise: those values decline."""

    def rule(a, b, **_):
        if _is_float(a.dtype) and (_subnormal_or_nan(a) or _subnormal_or_nan(b)):
            raise _Decline
        out = f(a, b)
        if _is_float(out.dtype) and _subnormal_or_nan(out):
            raise _Decline
        return out

    return rule


def _exact_product(a, b, product) -> bool:
    """Whether `product` is `a * b` unrounded (float64 holds any product of two float32,
    float16 or bfloat16 values exactly; a float64 product is checked only against one)."""
    if not _is_float(product.dtype) or (a == 1).all() or (b == 1).all():
        return True  # (`add`'s alpha=1 multiplies by one)
    if product.dtype == np.float64:
        return False
    wide = a.astype(np.float64) * b.astype(np.float64)
    return bool(np.array_equal(wide, np.broadcast_to(product.astype(np.float64), wide.shape)))


_RULES = {
    "convert_element_type": _convert,
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": _reshape,
    "squeeze": lambda x, dimensions: np.squeeze(x, axis=tuple(dimensions)),
    "expand_dims": lambda x, dimensions: np.expand_dims(x, tuple(dimensions)),
    "transpose": lambda x, permutation: np.transpose(x, permutation),
    "slice": _slice,
    "dynamic_slice": _dynamic_slice,
    "concatenate": lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    "stack": lambda *xs, axis: np.stack(xs, axis=axis),
    "iota": _iota,
    "select_n": _select_n,
    "gather": _gather,
    "stop_gradient": lambda x: x,
    "copy": lambda x: x,
    "copy_p": lambda x: x,
    # integer and bool arithmetic only (checked by `_movable`): wraps as XLA's does
    "add": _arithmetic(np.add),
    "sub": _arithmetic(np.subtract),
    "mul": _arithmetic(np.multiply),
    "neg": lambda x: _negate(x),
    "max": _int_binary(np.maximum),
    "min": _int_binary(np.minimum),
    "clamp": lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
    "eq": _int_binary(np.equal),
    "ne": _int_binary(np.not_equal),
    "lt": _int_binary(np.less),
    "le": _int_binary(np.less_equal),
    "gt": _int_binary(np.greater),
    "ge": _int_binary(np.greater_equal),
    "and": _int_binary(np.bitwise_and),
    "or": _int_binary(np.bitwise_or),
    "not": lambda x: np.invert(x),
    "div": lambda a, b: _int_division(a, b, False),
    "rem": lambda a, b: _int_division(a, b, True),
    "abs": lambda x: np.abs(x),
    "sign": lambda x: np.sign(x),
}
# Float add/sub/mul of one dtype are exact (above); division is not: XLA multiplies by the
# reciprocal of a scalar divisor. Comparisons, max/min of floats: XLA reads subnormals as 0.
_FLOAT_ARITHMETIC = frozenset({"add", "sub", "mul"})
_INT_ONLY = frozenset(
    {"add", "sub", "mul", "max", "min", "clamp", "eq", "ne", "lt", "le", "gt", "ge"}
    | {"and", "or", "not", "div", "rem", "abs", "sign"}
)
_CALLS = frozenset({"jit", "pjit"})
# Primitives whose parameters name no size: their equations compute the same at any shapes
# (the family fixes which sizes are 0, 1 or equal, what an op's own checks look at).
_NO_SIZES = frozenset(_INT_ONLY | _FLOAT_ARITHMETIC | _CALLS) | {
    "convert_element_type", "concatenate", "stack", "select_n", "neg", "squeeze",
    "expand_dims", "transpose", "stop_gradient", "copy", "copy_p",
}  # fmt: skip
