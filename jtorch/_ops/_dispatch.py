"""The dispatcher (DESIGN 6): how a call of a declared op runs.

A call promotes dtypes the torch way, then runs the op's implementation compiled once per
(op, statics, promoted dtype, input shapes) under `jax.jit`, from a bounded cache of kernels
(`KERNELS`, a `_programs.ProgramCache`: evicting a kernel frees its program); view ops
return a `Step` and produce view tensors; in-place and `out=` calls write into their targets.
The hooks below are how autograd, forward AD, autocast, sparse tensors and the profilers join
a call; None costs nothing.
"""

from __future__ import annotations

import collections
import time

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _errors, _meta, _programs, _stored
from .._dtype import c10_name, category, result_type_of
from .._stored import StoredKernel
from .._tensor import SparseOperand, Tensor, wrap
from . import _host, _rows
from ._opdef import (
    ALWAYS_BOOL,
    BOOL_TO_LONG,
    COMPLEX_TO_FLOAT,
    INT_TO_FLOAT,
    NONE,
    TI,
    TL,
    OpDef,
    S,
    _freeze,
    invoke,
)

# Set by autograd (jtorch/autograd/_engine.py):
#   record(op, fn, slot_values, arrays, result) after a differentiable kernel call,
#   record_view(op, steps, base, views) after a view op,
#   inplace_hook(target, result) before `result` is written into `target`,
#   grad_enabled() whether grad mode is on in this thread.
record = None
grad_enabled = None
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


class _Hosted:
    """A call `_kernel` computed on the host (`out`) instead of returning a kernel."""

    __slots__ = ("out",)

    def __init__(self, out):
        self.out = out


def _kernel(op: OpDef, statics: tuple, ct, rt, arrays, host: bool = False):
    """The compiled kernel for one (statics, dtype, input shapes) combination.

    One `jax.jit` wrapper per shape, so that the bounded cache can drop one shape's
    program: a wrapper keeps every shape it has run on. With `host`, a data-movement kernel
    of a shape seen only a few times runs on the host instead (`_Hosted`; see `_host`).
    """
    # Implementations may read the default dtype while tracing: it is part of the key.
    # True == 1 == 1.0 in Python, but they are different statics (keepdim=True vs dim=1).
    kinds = tuple(type(v) for v in statics)
    key = (op, statics, kinds, ct, rt, _dtype._default["float"], _shapes(arrays))
    fn = KERNELS.get(key)
    if fn is not None:
        return fn
    fn = _build(op, statics, ct, rt, arrays)
    if (
        host
        and all(type(a) is _ArrayImpl or type(a) in _NUMBERS for a in _flat(arrays))
        and not _kept(fn, arrays, False)
    ):
        try:
            out = _host.evaluate(key, fn, arrays)
        except (TypeError, ValueError) as e:
            raise _translate(e, arrays) from None
        if out is not None:
            return _Hosted(out)
    return KERNELS.put(key, fn)


def _builder(op: OpDef, statics: tuple, slot_values: tuple):
    """`build(arrays)`: `op`'s kernel for a call like this one on inputs of other shapes."""

    def build(arrays):
        ct, rt = _promotion(op, statics, slot_values)
        return _build(op, statics, ct, rt, arrays)

    return build


def _requires_grad(slot_values) -> bool:
    for v in slot_values:
        if isinstance(v, Tensor):
            if v._rg:
                return True
        elif isinstance(v, (tuple, list)) and any(isinstance(x, Tensor) and x._rg for x in v):
            return True
    return False


def _host_allowed(op: OpDef, rg: bool) -> bool:
    """Whether a call of a new kernel may run on the host (`_host`): eager, recording nothing
    on the tape (what the tape records needs the kernel), where no platform has several
    devices (an array's layout is then its device; `_host` and `_rows` take CPU inputs only)."""
    return (
        op.jit
        and forward_ad is None
        and not (rg and record is not None and (grad_enabled is None or grad_enabled()))
        and not _device.several_local()
        and not _programs.tracing()
    )


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

    if op.jit:
        # (named for jtorch's store of executables by everything `run` depends on)
        fn = _stored.wrap(
            jax.jit(run),
            op,
            (statics, ct and ct.np.name, rt and rt.np.name, numbers, str(_dtype._default["float"])),
        )
    else:
        fn = run
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


def _scalars_placed(arrays) -> list:
    return [_device_scalar(a) if type(a) in _NUMBERS else a for a in arrays]


# kernel key -> its kernel, built (not compiled) while its calls run on the host
# (`_host`), its executable not kept on disk: built and looked up once, not at every call
_HOSTED: collections.OrderedDict = collections.OrderedDict()
_HOSTED_MAX = 1024


def _kept(fn, arrays, place_numbers: bool) -> bool:
    """Whether `fn`'s executable for these arguments (Python numbers placed as the call
    places them, with `place_numbers`) was kept by jtorch's key (`_stored`): loaded (~1 ms),
    it runs instead of the host's numpy, whose plan would trace the kernel."""
    if type(fn) is not StoredKernel:
        return False
    return fn.load(*(_scalars_placed(arrays) if place_numbers else arrays))


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
            fn = _HOSTED.pop(key, None)
            fresh = fn is None
            if fresh:
                ct, rt = _promotion(op, statics, slot_values)
                fn = _build(op, statics, ct, rt, arrays)
            if (
                plain
                and _host_allowed(op, rg)
                and not (fresh and _kept(fn, arrays, numbers and op.jit))
            ):
                try:
                    out = _host.evaluate(key, fn, arrays)
                except (TypeError, ValueError) as e:
                    raise _translate(e, arrays) from None
                if out is not None:
                    _HOSTED[key] = fn
                    if len(_HOSTED) > _HOSTED_MAX:
                        _HOSTED.popitem(last=False)
                    return _wrap_out(op, out)
            KERNELS.put(key, fn)
        multi = _device.multi_device()
        if multi:
            arrays = _device.check_same_device(arrays, cpu_scalars=op.promote is not NONE)
        if not plain and _meta.used and _meta.any_meta(arrays):
            _meta.check_devices(arrays)
            out = _meta.eval_shape(fn, *arrays)
        else:
            call_args = arrays
            # (one device only: an uncommitted scalar must not pull a computation elsewhere)
            if numbers and plain and op.jit and not multi:
                call_args = _scalars_placed(arrays)
            try:
                out = None
                # (a kernel whose calls are known to run as they are skips the rest at once)
                padded = op.rows is not None and plain and not _rows.unpadded(key)
                if padded and _host_allowed(op, rg):
                    build = _builder(op, statics, slot_values)
                    out = _rows.run(op, key, fn, statics, arrays, call_args, KERNELS, build)
                if out is None:
                    if plain and type(fn) is StoredKernel and fn.call is not None:
                        # (its executable's C++ entry, without the wrapper's Python frame)
                        try:
                            out = fn.call(*call_args)
                        except (TypeError, ValueError):
                            out = fn.jitted(*call_args)
                    else:
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
        fn = _kernel(op, statics, ct, rt, arrays, _host_allowed(op, _requires_grad(slot_values)))
        if type(fn) is _Hosted:
            return _wrap_out(op, fn.out)
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
