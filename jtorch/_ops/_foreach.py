"""`torch._foreach_*`: PyTorch's multi-tensor ops, one compiled program per call (DESIGN 6, 13).

`torch._foreach_mul_(grads, coef)` applies one single-tensor op (`mul`) to each element of
its lists. `FOREACH` says which op each foreach name applies and which arguments it takes
(its form); the single op's declaration supplies everything else: promotion, checks,
implementation, errors. Eagerly, a call runs ONE compiled XLA program per (op, statics,
list of shapes and dtypes), made of the kernels the dispatcher would compile for each
element alone: each element is computed by the single op's own formula (elementwise ops
give the same bits inside the bigger program), and clipping 50 gradients of 50 shapes
compiles one program, not 50. The programs live in a bounded `ProgramCache`.

A call runs element by element instead, through the dispatcher as `t.mul_(c)` would, where
that is what PyTorch's semantics need or the one program cannot express it: under grad mode
with a tensor that requires grad (autograd records each element's op; PyTorch records one
foreach node for the list, with the same gradients), while tracing (`jtorch.compile`: the
ops join the traced program), with meta tensors or tensors on different devices, with
forward AD, autocast, a profiler or a `__torch_function__` override active, and for
in-place calls whose targets share storage with each other or with another element's
input (PyTorch updates them one after the other).

As in PyTorch, the out-of-place forms return a tuple and the in-place forms return their
first argument, after writing every element (nothing is written when an element fails
its checks). `__torch_function__` overrides see the single ops, not the foreach call.
"""

from __future__ import annotations

import math
import numbers

import jax
import numpy as np

from .. import _device, _dtype, _errors, _programs, _stored
from .. import _torch_function as _tf
from .._tensor import SparseOperand, Tensor, wrap
from . import _dispatch, conversion, indexing, linalg, pointwise, pointwise_math, reduction, special
from ._opdef import OPS, _freeze
from ._registry import composite

__all__ = ["FOREACH"]

# The families that declare the ops FOREACH applies: declared before the table is read.
_FAMILIES = (conversion, indexing, linalg, pointwise, pointwise_math, reduction, special)

# Forms: the argument lists a foreach op takes (PyTorch's overloads of it).
UNARY = "unary"  # (self)
BINARY = "binary"  # (self, other): a tensor list, a number (a 0-dim tensor too), a number list
BINARY_ALPHA = "binary_alpha"  # ... with `alpha=` for a tensor list (sub)
BINARY_TENSOR = "binary_tensor"  # ... or a 0-dim tensor, as a tensor (mul, div)
# ... both (add); a 0-dim tensor without `alpha=` is a number there, as PyTorch's parser
# tries that overload first (a float16 list plus a float32 0-dim tensor stays float16)
BINARY_TENSOR_ALPHA = "binary_tensor_alpha"
POW = "pow"  # (self, exponent), or (number, exponent list)
POINTWISE = "pointwise"  # (self, tensor1, tensor2, value): addcmul, addcdiv
LERP = "lerp"  # (self, tensors1, weight): a number, a number list or a tensor list
NORM = "norm"  # (self, ord=2, dtype=None)
REDUCE = "reduce"  # (self): a reduction over all elements
COPY = "copy"  # (self, src, non_blocking=False)
FILL_ZERO = "fill_zero"  # (self)

# One table: foreach name -> (the single-tensor op each element applies, the form,
# the variants PyTorch has: "out" `_foreach_x`, "inplace" `_foreach_x_`).
_BOTH = ("out", "inplace")
FOREACH: dict[str, tuple[str, str, tuple]] = {
    "add": ("add", BINARY_TENSOR_ALPHA, _BOTH),
    "sub": ("sub", BINARY_ALPHA, _BOTH),
    "mul": ("mul", BINARY_TENSOR, _BOTH),
    "div": ("div", BINARY_TENSOR, _BOTH),
    "maximum": ("maximum", BINARY, _BOTH),
    "minimum": ("minimum", BINARY, _BOTH),
    "clamp_min": ("clamp_min", BINARY, _BOTH),
    "clamp_max": ("clamp_max", BINARY, _BOTH),
    "pow": ("pow", POW, _BOTH),
    "addcmul": ("addcmul", POINTWISE, _BOTH),
    "addcdiv": ("addcdiv", POINTWISE, _BOTH),
    "lerp": ("lerp", LERP, _BOTH),
    "norm": ("linalg.vector_norm", NORM, ("out",)),
    "max": ("amax", REDUCE, ("out",)),
    "copy_": ("_copy_from", COPY, ("inplace",)),
    "zero_": ("fill", FILL_ZERO, ("inplace",)),
    **{
        name: (name, UNARY, _BOTH)
        for name in (
            "abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 "
            "log1p log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc"
        ).split()
    },
}

# PyTorch's overloads per form, for its error on an argument combination that fits none.
_OVERLOADS = {
    BINARY: (
        "tuple of Tensors self, Number scalar",
        "tuple of Tensors self, tuple of Scalars scalars",
        "tuple of Tensors self, tuple of Tensors other",
    ),
    POW: (
        "Number self, tuple of Tensors exponent",
        "tuple of Tensors self, Number exponent",
        "tuple of Tensors self, tuple of Scalars exponent",
        "tuple of Tensors self, tuple of Tensors exponent",
    ),
    POINTWISE: (
        "tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, "
        "tuple of Scalars scalars",
        "tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, Tensor scalars",
        "tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, "
        "Number value = 1",
    ),
    LERP: (
        "tuple of Tensors self, tuple of Tensors tensors1, Number weight",
        "tuple of Tensors self, tuple of Tensors tensors1, tuple of Scalars weight",
        "tuple of Tensors self, tuple of Tensors tensors1, tuple of Tensors weights",
    ),
}
_OVERLOADS[BINARY_TENSOR] = _OVERLOADS[BINARY] + ("tuple of Tensors self, Tensor other",)
_OVERLOADS[BINARY_ALPHA] = _OVERLOADS[BINARY][:2] + (
    "tuple of Tensors self, tuple of Tensors other, *, Number alpha = 1",
)
_OVERLOADS[BINARY_TENSOR_ALPHA] = _OVERLOADS[BINARY_ALPHA] + (
    "tuple of Tensors self, Tensor other, *, Number alpha = 1",
)
_ALPHA = (BINARY_ALPHA, BINARY_TENSOR_ALPHA)

_NOARG = object()
_NUMBERS = (numbers.Number, np.generic)

# The compiled programs, one per (op, statics, element signatures).
PROGRAMS = _programs.ProgramCache("foreach", share=0.25)


# ---------------------------------------------------------------------------
# Arguments: lists, numbers and PyTorch's checks of them


def _bad_combination(fname: str, form: str, args: tuple, kwargs: dict) -> TypeError:
    got = ", ".join(
        [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    )
    lines = "".join(f"\n * ({o})" for o in _OVERLOADS[form])
    return TypeError(
        f"{fname}() received an invalid combination of arguments - got ({got}), "
        f"but expected one of:{lines}"
    )


def _tensor_list(value, position: int) -> list:
    """A list of tensors, or PyTorch's TypeError naming the first element that is not one."""
    items = list(value)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument {position}, but got {type(t).__name__}"
            )
    return items


def _is_number(v) -> bool:
    """A Python or NumPy number, or a 0-dim tensor (PyTorch's parser reads it as one)."""
    if isinstance(v, Tensor):
        return v.ndim == 0
    return isinstance(v, _NUMBERS) and not isinstance(v, np.ndarray)


def _number(v):
    if isinstance(v, Tensor):
        return v.item()
    return v.item() if isinstance(v, np.generic) else v


def _is_list(v) -> bool:
    return isinstance(v, (list, tuple))


def _is_number_list(v) -> bool:
    return _is_list(v) and all(_is_number(x) and not isinstance(x, Tensor) for x in v)


def _check_lists(first: list, *others: list) -> None:
    """PyTorch's `check_foreach_api_restrictions`: non-empty lists of one length."""
    if not first:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in others:
        if len(other) != len(first):
            raise RuntimeError(
                "Tensor lists must have the same number of tensors, "
                f"got {len(first)} and {len(other)}"
            )


def _check_scalars(tensors: list, scalars) -> list:
    if len(scalars) != len(tensors):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return [_number(s) for s in scalars]


class _Args:
    """Builds one element's arguments for the single op: all its parameters, in order."""

    def __init__(self, op):
        self.op = op
        self.template = [None if p.default is p.empty else p.default for p in op.params]
        self.index = {p.name: i for i, p in enumerate(op.params)}

    def __call__(self, *positional, **named) -> tuple:
        a = list(self.template)
        a[: len(positional)] = positional
        for name, v in named.items():
            a[self.index[name]] = v
        return tuple(a)


# ---------------------------------------------------------------------------
# The forms: each turns a call's arguments into (targets, each element's arguments)


def _binary(fname, form, make, self, other, alpha, inplace, unexpected=None):
    if unexpected:
        raise _bad_combination(fname, form, (self, other), unexpected)
    if form == POW and _is_number(self) and _is_list(other) and not inplace:
        exponents = _tensor_list(other, 1)
        _check_lists(exponents)
        return exponents, [make(_number(self), e) for e in exponents]
    if not _is_list(self):
        raise _bad_combination(fname, form, (self, other), {})
    tensors = _tensor_list(self, 0)
    extra = {} if alpha is _NOARG else {"alpha": alpha}
    if _is_list(other) and not _is_number_list(other):
        others = _tensor_list(other, 1)
        _check_lists(tensors, others)
        return tensors, [make(t, o, **extra) for t, o in zip(tensors, others)]
    if isinstance(other, Tensor) and (
        form == BINARY_TENSOR or (form == BINARY_TENSOR_ALPHA and (extra or other.ndim != 0))
    ):
        _check_lists(tensors)
        if other.ndim != 0:
            raise RuntimeError(
                f"scalar tensor expected to be 0 dim but it has {other.ndim} dimensions and "
                f"{other.numel()} elements."
            )
        return tensors, [make(t, other, **extra) for t in tensors]
    if extra:
        if form == BINARY_ALPHA:  # one overload takes `alpha=`: PyTorch names its argument
            raise TypeError(
                f"{fname}(): argument 'other' (position 2) must be tuple of Tensors, not "
                f"{type(other).__name__}"
            )
        raise _bad_combination(fname, form, (self, other), extra)
    if _is_number_list(other):
        _check_lists(tensors)
        return tensors, [make(t, s) for t, s in zip(tensors, _check_scalars(tensors, other))]
    if _is_number(other):
        _check_lists(tensors)
        s = _number(other)
        return tensors, [make(t, s) for t in tensors]
    raise _bad_combination(fname, form, (self, other), {})


def _pointwise(fname, make, self, tensor1, tensor2, value):
    tensors = _tensor_list(self, 0)
    t1, t2 = _tensor_list(tensor1, 1), _tensor_list(tensor2, 2)
    _check_lists(tensors, t1, t2)
    if isinstance(value, Tensor):
        # PyTorch's packed scalars: a 1-D tensor of one value per element, read on the host
        if value.ndim != 1:
            raise RuntimeError(
                f"Expected packed scalar Tensor to be of dimension 1. Got {value.ndim} instead."
            )
        if value.numel() != len(tensors):
            raise RuntimeError(
                f"Expected length of scalars to match input of length {len(tensors)} but got "
                f"{value.numel()} instead."
            )
        values = value.tolist()
    elif _is_number_list(value):
        values = _check_scalars(tensors, value)
    elif _is_number(value):
        values = [_number(value)] * len(tensors)
    else:
        raise _bad_combination(fname, POINTWISE, (self, tensor1, tensor2, value), {})
    return tensors, [make(t, a, b, value=v) for t, a, b, v in zip(tensors, t1, t2, values)]


def _lerp(fname, make, self, tensors1, weight):
    tensors = _tensor_list(self, 0)
    ends = _tensor_list(tensors1, 1)
    _check_lists(tensors, ends)
    if _is_list(weight) and not _is_number_list(weight):
        weights = _tensor_list(weight, 2)
        _check_lists(tensors, weights)
    elif _is_number_list(weight):
        weights = _check_scalars(tensors, weight)
    elif _is_number(weight):
        weights = [_number(weight)] * len(tensors)
    else:
        raise _bad_combination(fname, LERP, (self, tensors1, weight), {})
    return tensors, [make(t, e, w) for t, e, w in zip(tensors, ends, weights)]


def _norm(make, self, ord, dtype):
    tensors = _tensor_list(self, 0)
    _check_lists(tensors)
    if isinstance(ord, Tensor) and ord.ndim == 0:
        ord = ord.item()
    if isinstance(ord, (bool, complex, np.bool_)):
        raise RuntimeError("foreach_tensor_norm_slow expects ord to be integer or float")
    if not isinstance(ord, _NUMBERS):
        raise TypeError(
            f"_foreach_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}"
        )
    ord = _number(ord)
    if ord == math.inf and any(t.numel() == 0 for t in tensors):
        raise RuntimeError(
            "_foreach_norm cannot compute the infinity norm on an empty tensor because the "
            "operation does not have an identity"
        )
    return tensors, [make(t, ord, dtype=dtype) for t in tensors]


def _reduce(make, self):
    tensors = _tensor_list(self, 0)
    _check_lists(tensors)
    if any(t.numel() == 0 for t in tensors):
        raise RuntimeError(
            "_foreach_max cannot compute the maximum of an empty tensor; max over zero "
            "elements is undefined."
        )
    return tensors, [make(t) for t in tensors]


def _copy(make, self, src):
    from .indexing import _check_broadcast  # copy_'s shape rule, stated once there

    tensors, sources = _tensor_list(self, 0), _tensor_list(src, 1)
    _check_lists(tensors, sources)
    for t, s in zip(tensors, sources):
        _check_broadcast(tuple(s.shape), tuple(t.shape))
    # (a source on another device moves to its target's first, as `copy_` moves it)
    sources = [
        s if s.device == t.device or t.is_meta or s.is_meta else s.to(t.device)
        for t, s in zip(tensors, sources)
    ]
    return tensors, [make(t, s) for t, s in zip(tensors, sources)]


def _unary(make, self):
    tensors = _tensor_list(self, 0)
    _check_lists(tensors)
    return tensors, [make(t) for t in tensors]


def _fill_zero(make, self):
    tensors = _tensor_list(self, 0)
    _check_lists(tensors)
    return tensors, [make(t, 0) for t in tensors]


# ---------------------------------------------------------------------------
# Running a call: one program for the list, or element by element


def _one_by_one(op, elements: list, inplace: bool, targets: list):
    """Each element through the dispatcher, as the single op's call would run it."""
    if inplace:
        if _dispatch.grad_enabled is not None and _dispatch.grad_enabled():
            from .views import _check_not_leaf  # the single op's leaf check, before any write

            for t in targets:
                if t._rg:
                    _check_not_leaf(t)
        for args in elements:
            _dispatch.call_inplace(op, args)
        return None
    return tuple(_dispatch.call(op, args) for args in elements)


def _element_by_element(inplace: bool, targets: list, elements: list, op) -> bool:
    """Whether the call must run element by element (see the module docstring)."""
    if (
        _programs.tracing()
        or _dispatch.forward_ad is not None
        or _dispatch.autocast_hook is not None
        or _dispatch.profile_hook is not None
        or not op.jit
    ):
        return True
    # (checks are on for good once any subclass overriding `__torch_function__` was made:
    # what counts is whether a mode is on or this call's tensors override it)
    if _tf.active and _tf.wants(tuple(v for args in elements for v in op.take_slots(args))):
        return True
    grad = _dispatch.grad_enabled is not None and _dispatch.grad_enabled()
    if grad and any(
        isinstance(v, Tensor) and v._rg for args in elements for v in op.take_slots(args)
    ):
        return True
    if inplace:
        try:
            return _aliased(op, targets, elements)
        except SparseOperand:  # sparse tensors have no storage: the single ops take them
            return True
    return False


def _aliased(op, targets: list, elements: list) -> bool:
    """Whether a target shares storage with another target or another element's input."""
    owner = {}
    for i, t in enumerate(targets):
        if owner.setdefault(id(t._storage), i) != i:
            return True
    for i, args in enumerate(elements):
        for v in op.take_slots(args)[1:]:
            if isinstance(v, Tensor) and owner.get(id(v._storage), i) != i:
                return True
    return False


_PLAIN_STATICS = _dispatch._PLAIN_STATICS
_SCALAR_TYPES = frozenset({int, float, bool})


def _signature(op, elements: list):
    """(flat kernel inputs, their signature, statics), or None where one element's input is
    not a concrete array on this process's one device or a Python int/float/bool."""
    flat, sig = [], []
    multi = _device.multi_device()
    devices = set()
    for args in elements:
        for v in op.take_slots(args):
            if isinstance(v, Tensor):
                try:
                    a = v._array
                except SparseOperand:  # the single op's sparse path takes it
                    return None
                if type(a) is not _dispatch._ArrayImpl:
                    return None
                if multi:
                    devices.add(a.sharding)
                sig.append(a.aval)
            elif type(v) in _SCALAR_TYPES:
                sig.append(type(v))
                a = v if multi else _dispatch._device_scalar(v)
            elif v is None:
                sig.append(None)
                a = None
            else:
                return None
            flat.append(a)
    if len(devices) > 1:
        return None
    statics = op.take_statics(elements[0])
    if not _PLAIN_STATICS.issuperset(map(type, statics)):
        statics = tuple(map(_freeze, statics))
    return flat, tuple(sig), statics


def _program(op, statics: tuple, elements: list):
    """One jitted program running each element's kernel (the dispatcher's, for it alone)."""
    n = len(op.slot_pos)
    kernels = []
    for args in elements:
        slot_values = op.take_slots(args)
        ct, rt = _dispatch._promotion(op, statics, slot_values)
        raw = tuple(v._array if isinstance(v, Tensor) else v for v in slot_values)
        kernels.append(_dispatch._build(op, statics, ct, rt, raw))

    def program(*inputs):
        return [kernel(*inputs[k * n : (k + 1) * n]) for k, kernel in enumerate(kernels)]

    jitted = jax.jit(program)
    if not all(type(k) is _stored.StoredKernel for k in kernels):
        return jitted
    # (kept by jtorch's own key where each of its kernels is: named by theirs)
    return _stored.program(jitted, "foreach", *(k.key for k in kernels))


def _run(op, inplace: bool, targets: list, elements: list):
    """Runs a parsed call; returns the out-of-place results (None for in-place)."""
    check = op.check
    if check is not None:
        for args in elements:
            check(*args, inplace=True) if inplace else check(*args)
    if _element_by_element(inplace, targets, elements, op):
        return _one_by_one(op, elements, inplace, targets)
    signed = _signature(op, elements)
    if signed is None:
        return _one_by_one(op, elements, inplace, targets)
    flat, sig, statics = signed
    key = (op, statics, tuple(map(type, statics)), _dtype._default["float"], sig)
    program = PROGRAMS.get(key)
    fresh = program is None
    try:
        if fresh:
            program = _program(op, statics, elements)
        outs = program(*flat)
    except (TypeError, ValueError):
        # A broadcasting or argument error: the single op's call of the failing element
        # says it as PyTorch does (out of place first, so that nothing is written).
        if inplace:
            for args in elements:
                _dispatch.call(op, args)
        return _one_by_one(op, elements, inplace, targets)
    except jax.errors.JaxRuntimeError as e:
        raise _errors.translate_runtime_error(e) from e
    if fresh:
        PROGRAMS.put(key, program)
    if not inplace:
        return tuple(wrap(o) for o in outs)
    # (committed, as the single op's kernels leave a tensor: see `_device.commit`)
    results = [wrap(_device.commit(o)) for o in outs]
    for t, r in zip(targets, results):
        _dispatch._check_result_fits(r, t, "inplace")
    for t, r in zip(targets, results):
        _dispatch.write_inplace(t, r)
    return None


# ---------------------------------------------------------------------------
# The public functions, generated from the table


def _functions(name: str, op_name: str, form: str, inplace: bool):
    """The implementation of `torch._foreach_<name>` (or its in-place form), by form."""
    op = OPS[op_name]
    make = _Args(op)
    fname = "_foreach_" + name + ("_" if inplace and not name.endswith("_") else "")

    def done(self, parsed):
        targets, elements = parsed
        out = _run(op, inplace, targets, elements)
        return self if inplace else out

    if form == UNARY:

        def impl(self):
            return done(self, _unary(make, self))

    elif form in _ALPHA:

        def impl(self, other, *, alpha=_NOARG):
            return done(self, _binary(fname, form, make, self, other, alpha, inplace))

    elif form == POW:

        def impl(self, exponent, **unexpected):
            return done(
                self, _binary(fname, form, make, self, exponent, _NOARG, inplace, unexpected)
            )

    elif form in (BINARY, BINARY_TENSOR):

        def impl(self, other, **unexpected):
            return done(self, _binary(fname, form, make, self, other, _NOARG, inplace, unexpected))

    elif form == POINTWISE:

        def impl(self, tensor1, tensor2, value=1, *, scalars=None):
            value = value if scalars is None else scalars
            return done(self, _pointwise(fname, make, self, tensor1, tensor2, value))

    elif form == LERP:

        def impl(self, tensors1, weight):
            return done(self, _lerp(fname, make, self, tensors1, weight))

    elif form == NORM:

        def impl(self, ord=2, dtype=None):
            return done(self, _norm(make, self, ord, dtype))

    elif form == REDUCE:

        def impl(self):
            return done(self, _reduce(make, self))

    elif form == COPY:

        def impl(self, src, non_blocking=False):
            tensors, elements = _copy(make, self, src)
            if all(t.shape == s.shape and t.dtype == s.dtype for t, s in elements):
                # nothing to cast or broadcast: `copy_` rebinds each target to its source's
                # array, no program (as when a model's parameters are copied for an EMA)
                for t, s in elements:
                    t.copy_(s)
                return self
            return done(self, (tensors, elements))

    elif form == FILL_ZERO:

        def impl(self):
            return done(self, _fill_zero(make, self))

    else:
        raise ValueError(f"unknown foreach form {form!r}")
    verb = "in place " if inplace else ""
    # (for the stubs: the lists in, a tuple out; an in-place call returns its list)
    if form != POW:
        impl.__annotations__["self"] = "list | tuple"
    impl.__annotations__["return"] = "list | tuple" if inplace else "tuple[Tensor, ...]"
    impl.__name__ = impl.__qualname__ = fname
    impl.__doc__ = (
        f"Matches `torch.{fname}`: `torch.{op_name}` applied {verb}to each element of the "
        "lists, as one compiled program."
    )
    return fname, impl


for _name, (_op_name, _form, _variants) in FOREACH.items():
    for _inplace in (False, True):
        if ("inplace" if _inplace else "out") in _variants:
            _fname, _impl = _functions(_name, _op_name, _form, _inplace)
            composite(_impl, name=_fname, method=False, publish=True)
