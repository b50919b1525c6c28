"""The op registry and dispatcher (DESIGN 3, 6).

An op is declared once, as a jax implementation whose signature is torch's::

    @pointwise(promote=DEFAULT, dunder="add")
    def add(input: T, other: T, *, alpha=1):
        return input + alpha * other if alpha != 1 else input + other

Annotations mark the tensor slots: `T` (a tensor or Python scalar that takes
part in type promotion), `TI` (a tensor passed through as it is: indices,
masks, conditions), `TL` (a sequence of tensors that is promoted), `S` (a
Python number the kernel sees traced, weakly typed as jax types Python
scalars: `alpha=`, `value=`; a new value does not compile a new kernel).
Every other parameter is static: part of the compile key, seen by the
implementation as a plain Python value.

From the declaration the registry generates, with the same signature:
`torch.add` (with `out=`), `Tensor.add`, `Tensor.add_`, dunders and
namespace aliases. A call promotes dtypes the torch way, then runs the
implementation compiled once per (op, statics, promoted dtype, input shapes)
under `jax.jit`, from a bounded cache of kernels (`_programs.ProgramCache`:
evicting a kernel frees its program). View ops return a `Step` instead of an
array and produce view tensors.
"""

from __future__ import annotations

import collections
import functools
import inspect
import operator
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _errors, _meta, _programs, _tracebacks
from .._dtype import c10_name, category, result_type_of
from .._tensor import SparseOperand, Tensor, wrap


class _Slot:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


T = _Slot("T")  # tensor or scalar, promoted
TI = _Slot("TI")  # tensor passed as is (indices, masks, conditions); numbers are wrapped
TL = _Slot("TL")  # sequence of tensors, promoted together
S = _Slot("S")  # Python number passed traced (weakly typed), not promoted
_SLOTS = {"T": T, "TI": TI, "TL": TL, "S": S}

# Promotion kinds, named as PyTorch's ELEMENTWISE_TYPE_PROMOTION_KIND.
DEFAULT = "DEFAULT"
INT_TO_FLOAT = "INT_TO_FLOAT"
ALWAYS_BOOL = "ALWAYS_BOOL"
COMPLEX_TO_FLOAT = "COMPLEX_TO_FLOAT"
BOOL_TO_LONG = "BOOL_TO_LONG"
NONE = None  # the implementation handles dtypes itself

OPS: dict[str, "OpDef"] = {}
NAMESPACES: dict[str, dict] = collections.defaultdict(dict)  # "" is torch itself
METHODS: dict[str, object] = {}

_NO_JIT = os.environ.get("JTORCH_EAGER_JIT", "1") == "0"

# Set by autograd (jtorch/autograd/_engine.py):
#   record(op, fn, slot_values, arrays, result) after a differentiable kernel call,
#   record_view(op, steps, base, views) after a view op,
#   inplace_hook(target, result) before `result` is written into `target`.
record = None
record_view = None
inplace_hook = None
# Set by jtorch.sparse: `sparse_hook(op, args, mode, out)` runs a call that has a sparse
# argument ("call", "inplace" or "out" mode); dense kernels never see sparse tensors.
sparse_hook = None
# Set by jtorch.amp while autocast is on in some thread: `autocast_hook(op, args) -> args`
# casts the floating inputs of the ops on autocast's lists. None costs nothing.
autocast_hook = None
# Set by jtorch.autograd.forward_ad while a dual level is open (the module itself: its
# on_call / on_view / on_write / check_out propagate tangents). None costs nothing.
forward_ad = None
# Set by jtorch's profilers (through `set_profile_hook`) while one records:
# `profile_hook(name)` opens a range for an op call, whose `end` the dispatcher sets
# (perf_counter_ns) when the call returns.
profile_hook = None


def _freeze(v):
    """A hashable form of a static argument."""
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, Tensor):
        return _freeze(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


class OpDef:
    """One declared op: its implementation, slots, promotion rule and compiled-kernel cache."""

    def __init__(
        self,
        impl,
        name,
        promote,
        jit,
        returns,
        differentiable,
        view,
        check=None,
        scalar_opmath=False,
    ):
        self.impl = impl
        self.scalar_opmath = scalar_opmath
        self.name = name
        self.promote = promote
        self.jit = jit and not _NO_JIT
        self.returns = returns
        self.differentiable = differentiable
        self.view = view
        self.check = check
        sig = inspect.signature(impl)
        self.params = list(sig.parameters.values())
        self.slots = []
        for i, p in enumerate(self.params):
            ann = p.annotation
            ann = _SLOTS.get(ann, ann) if isinstance(ann, str) else ann
            if isinstance(ann, _Slot):
                self.slots.append((i, ann))
        self.slot_pos = tuple(i for i, _ in self.slots)
        self.take_slots = _taker(self.slot_pos)
        self.slot_kinds = tuple(k for _, k in self.slots)
        self.static_pos = tuple(i for i in range(len(self.params)) if i not in self.slot_pos)
        self.static_names = tuple(self.params[i].name for i in self.static_pos)
        self.take_statics = _taker(self.static_pos)
        # The dispatcher's fast path takes only tensors, Python numbers and None in slots.
        self.fast = TL not in self.slot_kinds
        self.n_positional = sum(
            1 for p in self.params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        )
        self.has_varargs = any(p.kind == p.VAR_POSITIONAL for p in self.params)
        first_kw = self.n_positional + self.has_varargs
        self.kw_names = tuple(p.name for p in self.params[first_kw:])
        self.namedtuple = collections.namedtuple(name, returns) if returns else None
        if self.namedtuple is not None:
            self.namedtuple.__module__ = "torch.return_types"
            self.namedtuple.__qualname__ = name
            self.namedtuple.__repr__ = _return_types_repr

    def __repr__(self):
        return f"<op {self.name}>"


def _taker(positions: tuple):
    """`args -> tuple(args[p] for p in positions)`, as cheap as Python allows."""
    if not positions:
        return lambda args: ()
    if len(positions) == 1:
        p = positions[0]
        return lambda args: (args[p],)
    return operator.itemgetter(*positions)


def invoke(op: "OpDef", args):
    """Calls the implementation with wrapper-ordered `args` (varargs arrive as one tuple)."""
    n = op.n_positional
    if op.has_varargs:
        return op.impl(*args[:n], *args[n], **dict(zip(op.kw_names, args[n + 1 :])))
    return op.impl(*args[:n], **dict(zip(op.kw_names, args[n:])))


def _return_types_repr(self):
    fields = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{fields})"


# ---------------------------------------------------------------------------
# Dispatch


_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}


def _fast_common_dtype(slots, values):
    """The promoted dtype when every tensor shares one dtype and no scalar outranks it.

    That is the common case (`x + y`, `x * 2.5`), and there torch's three-tier rule
    always gives the tensors' dtype. Returns None when the full rule is needed.
    """
    np_dt = None
    scalar_cat = -1
    for (_, kind), v in zip(slots, values):
        if kind is TI or kind is S or v is None:
            continue
        if kind is TL:
            return None
        if isinstance(v, Tensor):
            d = v._array.dtype
            if np_dt is None:
                np_dt = d
            elif d != np_dt:
                return None
        else:
            c = _SCALAR_CATEGORY.get(type(v))
            if c is None:
                return None
            scalar_cat = max(scalar_cat, c)
    if np_dt is None:
        return None
    dt = _dtype.from_np(np_dt)
    return dt if scalar_cat <= category(dt) else None


def _promote(promote, slots, values):
    """Computation and result dtypes of a call, from its promoted slots."""
    ct = _fast_common_dtype(slots, values)
    if ct is None:
        ct = _full_result_type(slots, values)
        if ct is None:
            return None, None
    kind = promote
    rt = ct
    if kind is INT_TO_FLOAT:
        if category(ct) < 2:
            ct = rt = _dtype.get_default_dtype()
    elif kind is ALWAYS_BOOL:
        rt = _dtype.bool
    elif kind is COMPLEX_TO_FLOAT:
        rt = ct.to_real()
    elif kind is BOOL_TO_LONG:
        if ct is _dtype.bool:
            ct = rt = _dtype.int64
    return ct, rt


def _full_result_type(slots, values):
    """torch.result_type over the promoted slots (dimensioned > zero-dim > scalars)."""
    dims, zeros, scalars = [], [], []
    for (_, kind), v in zip(slots, values):
        if kind is TI or kind is S or v is None:
            continue
        items = v if kind is TL else (v,)
        for x in items:
            if isinstance(x, Tensor):
                arr = x._array
                (dims if arr.ndim else zeros).append(_dtype.from_np(arr.dtype))
            elif x is not None:
                scalars.append(x)
    if not (dims or zeros or scalars):
        return None
    return result_type_of(dims, zeros, scalars)


def _unwrap(v):
    """A slot value as the kernel sees it: arrays for tensors, Python numbers as they are."""
    if isinstance(v, Tensor):
        return v._array
    if isinstance(v, (list, tuple)):
        return tuple(_unwrap(x) for x in v)
    if isinstance(v, np.generic):
        return v.item()
    return v


def _flat(values):
    for v in values:
        if isinstance(v, tuple):
            yield from v
        else:
            yield v


# Compiled kernels of every op, one per (op, statics, dtypes, input shapes).
KERNELS = _programs.ProgramCache("kernels")


def _shapes(arrays) -> tuple:
    """The input shapes part of a kernel's key (None for a Python number or None)."""
    out = []
    for a in arrays:
        if type(a) is tuple:
            out.append(tuple(getattr(x, "shape", None) for x in a))
        else:
            out.append(getattr(a, "shape", None))
    return tuple(out)


def _kernel(op: OpDef, statics: tuple, ct, rt, arrays):
    """The compiled kernel for one (statics, dtype, input shapes) combination.

    One `jax.jit` wrapper per shape, so that the bounded cache can drop one shape's
    program: a wrapper keeps every shape it has run on.
    """
    # Implementations may read the default dtype while tracing: it is part of the key.
    # True == 1 == 1.0 in Python, but they are different statics (keepdim=True vs dim=1).
    kinds = tuple(type(v) for v in statics)
    key = (op, statics, kinds, ct, rt, _dtype._default["float"], _shapes(arrays))
    fn = KERNELS.get(key)
    if fn is not None:
        return fn
    return KERNELS.put(key, _build(op, statics, ct, rt, arrays))


def _build(op: OpDef, statics: tuple, ct, rt, arrays):
    """A new kernel: `op`'s implementation under `jax.jit`, casting its promoted inputs."""
    pos = op.slot_pos
    slot_kinds = op.slot_kinds
    ct_np = None if ct is None else ct.np
    rt_np = None if rt is None else rt.np
    # A Python number meeting a float16/bfloat16 tensor in an op declared `scalar_opmath`
    # enters in float32, unrounded: PyTorch's kernels read it as their float32 opmath type.
    opmath_np = np.dtype(np.float32) if op.scalar_opmath and ct_np in _HALF else None
    numbers = tuple(isinstance(a, (bool, int, float)) for a in arrays)

    def cast(v, kind, number):
        if ct_np is None or kind is TI or kind is S or v is None:
            return v
        if kind is TL:
            return tuple(jnp.asarray(x, ct_np) for x in v)
        return jnp.asarray(v, opmath_np if number and opmath_np is not None else ct_np)

    def run(*slot_values):
        args = list(statics)
        for p, kind, v, number in zip(pos, slot_kinds, slot_values, numbers):
            args.insert(p, cast(v, kind, number))
        out = invoke(op, args)
        if rt_np is not None:
            if isinstance(out, tuple):
                return out
            return out.astype(rt_np) if out.dtype != rt_np else out
        return out

    fn = jax.jit(run) if op.jit else run
    fn.statics = statics  # PyTorch names some backward nodes by them (autograd/_names.py)
    return fn


def broadcast_error(a_shape, b_shape):
    """PyTorch's error for shapes that do not broadcast, or None when they do."""
    n = max(len(a_shape), len(b_shape))
    for i in range(1, n + 1):
        sa = a_shape[-i] if i <= len(a_shape) else 1
        sb = b_shape[-i] if i <= len(b_shape) else 1
        if sa != sb and sa != 1 and sb != 1:
            return RuntimeError(
                f"The size of tensor a ({sa}) must match the size of tensor b "
                f"({sb}) at non-singleton dimension {n - i}"
            )
    return None


def _translate(e: Exception, arrays):
    """Turns jax's broadcasting errors into PyTorch's; other errors pass through."""
    if "broadcast" in str(e) or "incompatible shapes" in str(e):
        shapes = [a.shape for a in arrays if hasattr(a, "shape") and a.ndim]
        for i, a in enumerate(shapes):
            for b in shapes[i + 1 :]:
                err = broadcast_error(a, b)
                if err is not None:
                    return err
    return e


from jax._src.array import ArrayImpl as _ArrayImpl  # noqa: E402 (not an array made at

# import: that would start jax's backends before `jax.distributed` can be joined)
_HALF = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))


def _wrap_out(op: OpDef, out):
    if type(out) is _ArrayImpl or type(out) is _meta.MetaArray:
        return wrap(out)
    if isinstance(out, (tuple, list)):
        res = tuple(_wrap_out(op, o) for o in out)
        return op.namedtuple(*res) if op.namedtuple is not None else res
    if isinstance(out, (jax.Array, jax.core.Tracer)):
        return wrap(out)
    if isinstance(out, np.ndarray):
        return wrap(jnp.asarray(out))
    return out


def call(op: OpDef, args: tuple):
    """Runs `op` on the arguments of a generated wrapper (all parameters, in order)."""
    try:
        if op.check is not None:
            op.check(*args)
        return _dispatch(op, args)
    except SparseOperand:  # a sparse argument (free for dense calls: no try cost)
        return sparse_hook(op, args, "call", None)


def call_out(op: OpDef, args: tuple, out):
    """`torch.op(..., out=out)`: runs `op` and writes the result into `out` when given."""
    try:
        if op.check is not None:
            op.check(*args, out=out)
        result = _dispatch(op, args)
    except SparseOperand:
        return sparse_hook(op, args, "out", out)
    if out is None:
        return result
    if forward_ad is not None:
        forward_ad.check_out(op, result)
    if any(
        r._rg for r in (result if isinstance(result, tuple) else (result,)) if isinstance(r, Tensor)
    ):
        raise RuntimeError(
            f"{op.name}(): functions with out=... arguments don't support "
            "automatic differentiation, but one of the arguments requires grad."
        )
    return write_out(result, out)


def _dispatch_profiled(op: OpDef, args: tuple):
    span = profile_hook(op.name)
    result = _dispatch_plain(op, args)
    span.end = time.perf_counter_ns()
    return result


def set_profile_hook(hook) -> None:
    """Installs (or with None removes) the profilers' per-op hook; without one, `_dispatch`
    is the plain dispatcher, so an idle profiler costs nothing."""
    global profile_hook, _dispatch
    profile_hook = hook
    _dispatch = _dispatch_plain if hook is None else _dispatch_profiled


# Static argument types that are hashable as they are (`_freeze` leaves them unchanged).
_PLAIN_STATICS = frozenset({int, float, bool, str, complex, type(None), _dtype.dtype})
_NUMBERS = frozenset({int, float, bool})

# Python numbers reach compiled kernels as device scalars made once: jax's C++ dispatch
# puts a Python number into a new device buffer on every call (microseconds); a cached
# scalar has the same abstract value (weakly typed, as jax types Python numbers), so the
# same program runs. One table per type: True == 1 == 1.0 are different scalars. 0.0 is
# not cached (-0.0 == 0.0 would find it), nor NaN (never equal), nor ints past 32 bits.
_DEVICE_SCALARS = {int: {}, float: {}, bool: {}}


def _device_scalar(v):
    table = _DEVICE_SCALARS[type(v)]
    a = table.get(v)
    if a is None:
        if (not v and type(v) is float) or v != v or not -(2**31) <= v < 2**31 or len(table) >= 256:
            return v
        with jax.ensure_compile_time_eval():  # never a tracer, whoever traces now
            a = table[v] = jax.device_put(v)
    return a


def _dispatch(op: OpDef, args: tuple):
    """Runs one op call: the fast path for tensors, Python numbers and None in its slots.

    The kernel's key there is the op, its statics and its inputs' shapes and dtypes, which
    fix the promotion: a cached kernel runs without promoting again.
    """
    if autocast_hook is not None:
        args = autocast_hook(op, args)
    slot_values = op.take_slots(args)
    if not op.fast:
        return _dispatch_general(op, args, slot_values)
    try:
        arrays = []
        sig = []
        rg = numbers = False
        plain = True  # every tensor's value is a concrete jax array (no tracer, meta)
        for v in slot_values:
            if isinstance(v, Tensor):
                # (a root's value without the `_array` property's call: the common case)
                a = v._array if v._chain else v._storage.value  # may materialise a view
                if v._rg:
                    rg = True
                if type(a) is _ArrayImpl:
                    sig.append(a.aval)  # shape and dtype, compared in C++
                else:
                    plain = False
                    sig.append(a.shape)
                    sig.append(a.dtype)
            elif type(v) in _NUMBERS:
                a = v
                numbers = True
                sig.append(type(v))
            elif v is None:
                a = None
                sig.append(None)
            else:
                return _dispatch_general(op, args, slot_values)
            arrays.append(a)
        arrays = tuple(arrays)
        if op.static_pos:
            statics = op.take_statics(args)
            kinds = tuple(map(type, statics))
            if not _PLAIN_STATICS.issuperset(kinds):
                statics = tuple(map(_freeze, statics))
                kinds = tuple(map(type, statics))
        else:
            statics = kinds = ()
        key = (op, statics, kinds, _dtype._default["float"], tuple(sig))
        fn = KERNELS.get(key)
        if fn is None:
            ct, rt = _promotion(op, statics, slot_values)
            fn = KERNELS.put(key, _build(op, statics, ct, rt, arrays))
        multi = _device.multi_device()
        if multi:
            _device.check_same_device(a for a in arrays)
        if not plain and _meta.used and _meta.any_meta(arrays):
            _meta.check_devices(arrays)
            out = _meta.eval_shape(fn, *arrays)
        else:
            call_args = arrays
            # (one device only: an uncommitted scalar must not pull a computation elsewhere)
            if numbers and plain and op.jit and not multi:
                call_args = [_device_scalar(a) if type(a) in _NUMBERS else a for a in arrays]
            try:
                out = fn(*call_args)
            except (TypeError, ValueError) as e:
                raise _translate(e, arrays) from None
    except jax.errors.JaxRuntimeError as e:
        raise _errors.translate_runtime_error(e) from e
    result = wrap(out) if type(out) is _ArrayImpl else _wrap_out(op, out)
    # `record` adds nothing when no input requires grad.
    if rg and record is not None and op.differentiable:
        record(op, fn, slot_values, arrays, result)
    if forward_ad is not None:
        forward_ad.on_call(op, fn, slot_values, arrays, result)
    return result


def _promotion(op: OpDef, statics: tuple, slot_values: tuple):
    """Computation and result dtypes of a call (None, None where the op promotes itself)."""
    kind = op.promote
    if callable(kind):
        kind = kind(**dict(zip(op.static_names, statics)))
    return (None, None) if kind is NONE else _promote(kind, op.slots, slot_values)


def _dispatch_general(op: OpDef, args: tuple, slot_values: tuple):
    """Any call: sequences of tensors, NumPy values and other objects in slots."""
    statics = tuple(_freeze(args[i]) for i in op.static_pos)
    kind = op.promote
    if callable(kind):
        kind = kind(**dict(zip(op.static_names, statics)))
    ct, rt = (None, None) if kind is NONE else _promote(kind, op.slots, slot_values)
    try:
        arrays = tuple(_unwrap(v) for v in slot_values)  # may materialise views
        fn = _kernel(op, statics, ct, rt, arrays)
        if _device.multi_device():
            _device.check_same_device(a for a in _flat(arrays))
        if _meta.used and _meta.any_meta(arrays):
            # Meta tensors: the kernel's output shapes and dtypes, without data.
            _meta.check_devices(arrays)
            out = _meta.eval_shape(fn, *arrays)
        else:
            try:
                out = fn(*arrays)
            except (TypeError, ValueError) as e:
                raise _translate(e, arrays) from None
    except jax.errors.JaxRuntimeError as e:
        raise _errors.translate_runtime_error(e) from e
    result = _wrap_out(op, out)
    if record is not None and op.differentiable:
        record(op, fn, slot_values, arrays, result)
    if forward_ad is not None:
        forward_ad.on_call(op, fn, slot_values, arrays, result)
    return result


_dispatch_plain = _dispatch


def call_view(op: OpDef, args: tuple):
    """A view op: the implementation returns the `Step`(s) deriving the view(s) from the input."""
    base = args[0]
    try:
        steps = invoke(op, args)
        if isinstance(steps, (tuple, list)):
            result = tuple(base._make_view(s) for s in steps)
        else:
            result = base._make_view(steps)
    except SparseOperand:
        return sparse_hook(op, args, "call", None)
    if record_view is not None:
        record_view(op, steps, base, result)
    if forward_ad is not None:
        forward_ad.on_view(op, steps, base, result)
    return result


def _check_result_fits(result: Tensor, target: Tensor, what: str) -> None:
    rdt, tdt = result.dtype, target.dtype
    if not _dtype.can_cast(rdt, tdt):
        raise RuntimeError(
            f"result type {c10_name(rdt)} can't be cast to the desired output type {c10_name(tdt)}"
        )
    if what == "inplace" and tuple(result.shape) != tuple(target.shape):
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast "
            f"shape {list(result.shape)}"
        )


def call_inplace(op: OpDef, args: tuple):
    """`x.op_(...)`: the functional result, checked and written into `x`."""
    self = args[0]
    if not isinstance(self, Tensor):
        raise TypeError(f"{op.name}_(): self must be a Tensor")
    try:
        if op.check is not None:
            op.check(*args, inplace=True)
        result = _dispatch(op, args)
    except SparseOperand:
        return sparse_hook(op, args, "inplace", None)
    _check_result_fits(result, self, "inplace")
    write_inplace(self, result)
    return self


def write_inplace(target: Tensor, result: Tensor) -> None:
    """Writes `result` into `target` in place, moving `result`'s history onto `target`."""
    if forward_ad is not None:
        forward_ad.on_write(target, result)
    if inplace_hook is not None:
        inplace_hook(target, result)
    target._write(result._array)


def write_out(result, out):
    """`out=`: writes a result into the given tensor(s), resizing as PyTorch does."""
    if isinstance(result, tuple):
        for r, o in zip(result, out):
            write_out(r, o)
        return out
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    _check_result_fits(result, out, "out")
    arr = result._array
    if tuple(arr.shape) != tuple(out.shape):
        out._rebind(wrap(arr.astype(out.dtype.np)))
        out._vc[0] += 1
    else:
        out._write(arr)
    return out


# ---------------------------------------------------------------------------
# Declaration and generation


# NumPy's spellings PyTorch's argument parser accepts for two parameters: `x.sum(axis=0)`,
# `torch.prod(x, 1, keepdims=True)`.
_NUMPY_ALIASES = {"dim": "axis", "keepdim": "keepdims"}
_NOARG = object()


def _prelude(name: str, params) -> tuple[list, set, str]:
    """Keyword-only alias parameters, the required parameters an alias makes optional, and
    the lines that read them (and Python's dtypes)."""
    names = {p.name for p in params}
    extra, optional, lines = [], set(), []
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for canonical, alias in _NUMPY_ALIASES.items():
        p = next((p for p in params if p.name == canonical), None)
        if p is None or alias in names or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            later = positional[positional.index(p) + 1 :] if p in positional else []
            if any(q.default is q.empty for q in later):
                continue  # it cannot become optional in a Python signature
            optional.add(canonical)
            lines.append(
                f"if {canonical} is _NOARG:\n            if {alias} is _NOARG: raise "
                f'TypeError("{name}() missing 1 required positional argument: '
                f"'{canonical}'\")\n            {canonical} = {alias}\n        "
                f'elif {alias} is not _NOARG: raise TypeError("{name}() got an '
                f"unexpected keyword argument '{alias}'\")"
            )
        else:
            # Both spellings at once: PyTorch's parser reports the alias as unexpected.
            lines.append(
                f"if {alias} is not _NOARG:\n            if {canonical} is not "
                f'_d{params.index(p)}: raise TypeError("{name}() got an unexpected '
                f"keyword argument '{alias}'\")\n            {canonical} = {alias}"
            )
        extra.append(f"{alias}=_NOARG")
    # dtype=float means torch.float64, except in Tensor.type, which reads a class as a type name
    if name != "type" and "dtype" in names:
        lines.append("dtype = _from_python_type(dtype)")
    return extra, optional, "".join(line + "\n        " for line in lines)


def _gen(name: str, params, body: str, namespace: dict):
    """Builds a function with `params`' signature whose body is `body` (fast binding)."""
    parts, defaults, star = [], {}, False
    extra, optional, prelude = _prelude(name, params)
    for i, p in enumerate(params):
        s = p.name
        if p.kind == p.VAR_KEYWORD and extra:
            parts += ([] if star else ["*"]) + extra
            star, extra = True, []
        if p.kind == p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind == p.VAR_POSITIONAL:
            s = "*" + s
            star = True
        if p.kind == p.VAR_KEYWORD:
            s = "**" + s
        if p.default is not p.empty:
            defaults[f"_d{i}"] = p.default
            s += f"=_d{i}"
        elif p.name in optional:
            s += "=_NOARG"
        parts.append(s)
    if extra:
        parts += ([] if star else ["*"]) + extra
    # An exception leaving the op loses the registry's and jax's frames (_tracebacks), and
    # a bare `raise` adds no frame of its own: the traceback ends at the user's call.
    src = (
        f"def {name}({', '.join(parts)}):\n    try:\n        {prelude}{body}\n"
        "    except Exception as _e:\n        _clean(_e)\n        raise\n"
    )
    ns = dict(
        namespace,
        _clean=_tracebacks.clean,
        _from_python_type=_dtype.from_python_type,
        _NOARG=_NOARG,
        **defaults,
    )
    exec(compile(src, _tracebacks.GENERATED_FILE, "exec"), ns)
    GENERATED.append(ns[name])
    return ns[name]


# Every generated function: `_ops/_overrides.py` swaps their code for a trampoline that
# honours `__torch_function__` while a mode or Tensor subclass needs it.
GENERATED: list = []


def _arg_tuple(params) -> str:
    names = [p.name for p in params]
    return "(" + "".join(n + ", " for n in names) + ")"


def op(
    impl=None,
    *,
    name=None,
    promote=DEFAULT,
    method=True,
    inplace=False,
    out=True,
    dunder=None,
    rdunder=None,
    aliases=(),
    jit=True,
    returns=None,
    differentiable=True,
    view=False,
    check=None,
    publish=None,
    scalar_opmath=False,
):
    """Declares an op. See the module docstring.

    Args:
      name: dotted torch name ("add", "linalg.norm", "nn.functional.relu"); defaults to the
        function's name in torch's namespace.
      promote: the promotion kind, or NONE when the implementation handles dtypes.
      method: install as a Tensor method (True, or the method's name).
      inplace: also generate `<name>_`: True means `Tensor.<name>_` (and `torch.<name>_` for
        torch-level ops); a tuple picks the places among "method", "torch", "nn.functional".
        An implementation parameter called `inplace` (as in `F.relu(x, inplace=True)`) makes
        the function itself switch to the in-place form; it is never part of the compile key.
      out: give the function an `out=` keyword.
      dunder / rdunder: Python operator names to install (`"add"` -> `__add__`, `__iadd__`).
      aliases: further dotted names the same function is published under.
      jit: compile per statics (False for data-dependent shapes: nonzero, unique, ...).
      returns: field names of a `torch.return_types` named tuple result.
      view: the implementation returns view `Step`s.
      differentiable: record calls on the autograd tape. The gradient is always `jax.vjp`
        of the implementation; an op whose gradient must differ from what jax derives (a
        PyTorch convention, a stabler formula) wraps its implementation, or the part of it
        concerned, in `jax.custom_vjp` / `jax.custom_jvp` (see `_ops/pointwise_math.py`).
      publish: publish the function under its torch name. By default a name starting with
        `_` is an internal kernel and is not published; PyTorch's own private APIs that
        jtorch provides (`torch._chunk_cat`) pass `publish=True`.
      check: `check(*args, inplace=False, out=None)`, run on the raw arguments before
        dispatch, for errors that depend on a Python scalar's value (which the compiled kernel
        only sees as a tracer), e.g. `int_tensor ** -1`.
      scalar_opmath: a Python number operand of a float16/bfloat16 call reaches the
        implementation in float32, not rounded to the half type (the implementation computes
        in float32: `opmath`), as PyTorch's mul/div kernels read their scalar.
    """
    if impl is None:
        return functools.partial(
            op,
            name=name,
            promote=promote,
            method=method,
            inplace=inplace,
            out=out,
            dunder=dunder,
            rdunder=rdunder,
            aliases=aliases,
            jit=jit,
            returns=returns,
            differentiable=differentiable,
            view=view,
            check=check,
            publish=publish,
            scalar_opmath=scalar_opmath,
        )
    full = name or impl.__name__
    short = full.rsplit(".", 1)[-1]
    d = OpDef(impl, short, promote, jit, returns, differentiable, view, check, scalar_opmath)
    if full in OPS:
        raise RuntimeError(f"op {full} declared twice")
    OPS[full] = d
    params = d.params
    names = [p.name for p in params]
    has_inplace_arg = "inplace" in names
    args = _arg_tuple(params)
    call_args = "(" + "".join(("False" if n == "inplace" else n) + ", " for n in names) + ")"
    env = {
        "_op": d,
        "_call": call_view if view else call,
        "_call_out": call_out,
        "_inplace": call_inplace,
    }
    if has_inplace_arg:
        fn = _gen(short, params, f"return (_inplace if inplace else _call)(_op, {call_args})", env)
    elif out and not view:
        fparams = params + [inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)]
        body = f"return _call_out(_op, {args}, out)"
        fn = _gen(short, fparams, body, env)
    else:
        fn = _gen(short, params, f"return _call(_op, {args})", env)
    fn.__doc__ = impl.__doc__ or f"Matches `torch.{full}`."
    fn.__qualname__ = short
    fn.__module__ = "jtorch"
    fn._op = d
    d.fn = fn
    d.inplace_fn = None
    d.published = _is_public(short) if publish is None else publish
    if d.published:
        _publish(full, fn)
    for a in aliases:
        _publish(a, fn)
    plain = out and not view and not has_inplace_arg
    mfn = _gen(short, params, f"return _call(_op, {args})", env) if plain else fn
    if method:
        METHODS[method if isinstance(method, str) else short] = mfn
    targets = ()
    if inplace:
        targets = (
            inplace
            if isinstance(inplace, tuple)
            else (("method",) + (("torch",) if "." not in full else ()))
        )
        iparams = [p for p in params if p.name != "inplace"]
        ifn = _gen(short + "_", iparams, f"return _inplace(_op, {call_args})", env)
        ifn.__doc__ = f"In-place `{short}`."
        d.inplace_fn = ifn
        if "method" in targets:
            METHODS[short + "_"] = ifn
        if "torch" in targets:
            NAMESPACES[""][short + "_"] = ifn
        if "nn.functional" in targets:
            NAMESPACES["nn.functional"][short + "_"] = ifn
        if dunder:
            METHODS[f"__i{dunder}__"] = ifn
    # torch-level aliases are methods too where the op is (Tensor.arcsin, Tensor.clip_)
    for a in aliases:
        if "." not in a:
            if method:
                METHODS[a] = mfn
            if d.inplace_fn is not None and "method" in targets:
                METHODS[a + "_"] = d.inplace_fn
            if d.inplace_fn is not None and "torch" in targets:
                NAMESPACES[""][a + "_"] = d.inplace_fn
    if dunder:
        METHODS[f"__{dunder}__"] = mfn
    if rdunder:
        rname = f"__r{rdunder}__"
        names[0], names[1] = names[1], names[0]
        swapped = "(" + "".join(n + ", " for n in names) + ")"
        METHODS[rname] = _gen(rname, params, f"return _call(_op, {swapped})", env)
    return fn


def kernel(impl=None, *, name=None, promote=DEFAULT, jit=True, returns=None, differentiable=True):
    """A compiled kernel that composites call: dispatched and recorded like an op, unpublished.

    Returns `run(*args)` taking the implementation's arguments positionally, with
    `run.inplace(*args)` writing the result into the first argument.
    """
    if impl is None:
        return functools.partial(
            kernel,
            name=name,
            promote=promote,
            jit=jit,
            returns=returns,
            differentiable=differentiable,
        )
    d = OpDef(impl, name or impl.__name__, promote, jit, returns, differentiable, False)

    def run(*args):
        return call(d, args)

    run.inplace = lambda *args: call_inplace(d, args)
    run._op = d
    return run


def name_return_type(fn, name: str):
    """Names `fn`'s `torch.return_types` class when PyTorch's name is not the op's short name.

    E.g. `linalg.eigh` returns `torch.return_types.linalg_eigh`, and the private kernel
    behind `max(dim)` returns `torch.return_types.max`.
    """
    nt = fn._op.namedtuple
    nt.__name__ = nt.__qualname__ = name
    return fn


def _is_public(short: str) -> bool:
    """Names starting with one underscore are internal kernels unless declared otherwise."""
    return not short.startswith("_") or short.startswith("__")


def _publish(dotted: str, fn) -> None:
    ns, _, short = dotted.rpartition(".")
    NAMESPACES[ns][short] = fn


def install_methods() -> None:
    """Installs every declared method on `Tensor` (called once, after all families load)."""
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    _name_modules()


def _name_modules() -> None:
    """A generated function found only in a namespace module (`torch.nn.functional.gelu`,
    `torch.linalg.norm`) says that module: pickle finds a function by module and name, and
    a module holding it under any other object (or not at all) cannot be pickled."""
    top = NAMESPACES[""]
    for ns, names in NAMESPACES.items():
        if not ns:
            continue
        for short, fn in names.items():
            if (
                getattr(fn, "__module__", None) == "jtorch"
                and fn.__name__ == short
                and top.get(short) is not fn
            ):
                fn.__module__ = "jtorch." + ns


def _composite_entry(impl, short: str):
    """The public function of a composite: a generated one with `impl`'s signature that
    calls it, so that its errors leave it as a generated op's do (see `_gen`)."""
    params = list(inspect.signature(impl).parameters.values())
    call = []
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            call.append("*" + p.name)
        elif p.kind == p.VAR_KEYWORD:
            call.append("**" + p.name)
        elif p.kind == p.KEYWORD_ONLY:
            call.append(f"{p.name}={p.name}")
        else:
            call.append(p.name)
    fn = _gen(short, params, f"return _impl({', '.join(call)})", {"_impl": impl})
    fn.__doc__ = impl.__doc__
    fn.__qualname__ = short
    fn.__module__ = "jtorch"
    fn.__wrapped__ = impl
    return fn


def composite(impl=None, *, name=None, method=True, aliases=(), function=True, publish=None):
    """Declares an op written in terms of other ops, on Tensors (no kernel of its own).

    Like PyTorch's CompositeImplicitAutograd ops: autograd sees the ops it calls.
    """
    if impl is None:
        return functools.partial(
            composite, name=name, method=method, aliases=aliases, function=function, publish=publish
        )
    full = name or impl.__name__
    short = full.rsplit(".", 1)[-1]
    if full in OPS:
        raise RuntimeError(f"op {full} declared twice")
    impl = _composite_entry(impl, short)
    OPS[full] = impl
    impl.published = function = function and (_is_public(short) if publish is None else publish)
    if function:
        _publish(full, impl)
    for a in aliases:
        _publish(a, impl)
    if method:
        METHODS[method if isinstance(method, str) else short] = impl
    return impl
