"""Forward-mode AD: `torch.autograd.forward_ad`'s dual tensors.

Inside `dual_level()`, `make_dual(x, v)` gives a tensor carrying the tangent `v`.
Every op whose inputs carry tangents computes its outputs' tangents as the JVP of
its kernel (`jax.jvp`, compiled once per kernel as the tape compiles VJPs), so
composites, modules and losses get forward AD for free.

While a level is open, `_dispatch.forward_ad` is this module and the registry calls
its hooks; otherwise it is None and an op pays one `is not None` check:

- `on_call` after a kernel call: the outputs' tangents (None for integer/bool outputs);
- `on_view` after a view op: the view's tangent is the same view of the base's tangent;
- `on_write` before an in-place write: the target's tangent takes the result's;
- `check_out` before an `out=` write: PyTorch has no forward AD for `out=`.

A tensor keeps its tangent in `_fw`: None (none of its own: a view asks its base),
False (a forward root without a tangent: `detach()`, `unpack_dual(...).primal`), or the
tangent tensor. As in PyTorch, the tangents of a base and its views share storage: a
write through a view's tangent is seen by the base's, and a view made before its base
got a tangent (from an in-place write of a dual tensor) finds it through the base.
`make_dual`'s result aliases the primal's storage but is not a forward view of it: its
tangent is its own, and the primal does not get one.

The tangent computation is itself recorded on the tape, so `backward()` through a
tangent (reverse-over-forward) works.
"""

from __future__ import annotations

import functools
import sys
import weakref
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _programs, _views
from .._ops import _dispatch, _registry
from .._tensor import Tensor, wrap
from ._fn_node import _merge, _pick
from ._names import call_name
from ._node import DIFF_DTYPES

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]

_current_level = -1
_fwd_grad_enabled = True
# Tensors given a tangent (or the False marker) in the open level; exiting clears them.
_holders: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _inexact(t: Tensor) -> bool:
    return t._array.dtype in DIFF_DTYPES


def _set(t: Tensor, tangent) -> None:
    t._fw = tangent
    _holders[id(t)] = t


def _install() -> None:
    on = _current_level >= 0 and _fwd_grad_enabled
    _dispatch.forward_ad = sys.modules[__name__] if on else None


# ---------------------------------------------------------------------------
# Levels


def enter_dual_level() -> int:
    """Matches `torch.autograd.forward_ad.enter_dual_level` (one level at a time)."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    _install()
    return _current_level


def exit_dual_level(*, level: int | None = None) -> None:
    """Matches `torch.autograd.forward_ad.exit_dual_level`: every tangent of the level goes."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that "
            "was created. This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    for t in list(_holders.values()):
        t.__dict__.pop("_fw", None)
    _holders.clear()
    _current_level = level - 1
    _install()


class dual_level:  # noqa: N801 - PyTorch's name
    """Matches `torch.autograd.forward_ad.dual_level`: a context manager and a decorator."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> bool:
        exit_dual_level()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        return wrapper


def _is_fwd_grad_enabled() -> bool:
    return _fwd_grad_enabled


class _set_fwd_grad_enabled:  # noqa: N801 - PyTorch's name
    """PyTorch's private switch: while off, no op propagates tangents."""

    def __init__(self, mode: bool) -> None:
        global _fwd_grad_enabled
        self.prev = _fwd_grad_enabled
        _fwd_grad_enabled = bool(mode)
        _install()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        global _fwd_grad_enabled
        _fwd_grad_enabled = self.prev
        _install()
        return False


# ---------------------------------------------------------------------------
# make_dual / unpack_dual


class UnpackedDualTensor(NamedTuple):
    """Matches `torch.autograd.forward_ad.UnpackedDualTensor`."""

    primal: Tensor
    tangent: Tensor | None


class _ViewKind:
    """What the tape's `record_view` needs to know of a view made here."""

    differentiable = True

    def __init__(self, name: str, autograd_name: str):
        self.name = name
        self.autograd_name = autograd_name


_MAKE_DUAL = _ViewKind("_make_dual", "ViewBackward0")
_UNPACK_DUAL = _ViewKind("_unpack_dual", "torch::autograd::Identity")


def _alias(tensor: Tensor, kind: _ViewKind) -> Tensor:
    """A view of all of `tensor`, backward-differentiable like PyTorch's."""
    step = _views.Alias()
    view = tensor._make_view(step)
    if _dispatch.record_view is not None:
        _dispatch.record_view(kind, step, tensor, view)
    return view


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """Matches `torch.autograd.forward_ad.make_dual`: a view of `tensor` with `tangent`.

    The tangent is kept as it is (later in-place ops write into it) when its layout is the
    primal's, and copied otherwise, as in PyTorch.
    """
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, "
            "make sure to enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    if _tangent(tensor) is not None:
        raise RuntimeError(
            f"Making a dual Tensor based on a Tensor that already has a forward "
            f"gradient at the same level {level} is not supported."
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than "
            "that of the original Tensor, this is not supported. Tensor is of "
            f"size {list(tensor.shape)} while the given forward gradient is of "
            f"size {list(tangent.shape)}."
        )
    if (
        tangent.stride() != tensor.stride()
        or tangent.storage_offset() != tensor.storage_offset()
        or tangent._storage.value.size != tensor._storage.value.size
    ):
        # PyTorch keeps the tangent only when laid out as the primal; else a copy that is.
        from .._ops.creation import empty_strided

        tangent = empty_strided(
            tuple(tensor.shape), tensor.stride(), dtype=tangent.dtype, device=tangent.device
        ).copy_(tangent)
    dual = _alias(tensor, _MAKE_DUAL)
    _set(dual, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """Matches `torch.autograd.forward_ad.unpack_dual`: `(primal, tangent)`.

    The primal is a view of `tensor` without a tangent; the tangent is `tensor`'s own
    (None when it has none, or outside the level).
    """
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    tangent = None
    if level == _current_level and _fwd_grad_enabled:
        tangent = _tangent(tensor)
    primal = _alias(tensor, _UNPACK_DUAL)
    _set(primal, False)
    return UnpackedDualTensor(primal, tangent)


# ---------------------------------------------------------------------------
# Tangents of views


def _tangent(t: Tensor):
    """`t`'s tangent at the open level, or None."""
    fw = t._fw
    if fw is None:
        base = t._base
        return None if base is None else _from_base(t, base)
    return None if fw is False else fw


def _from_base(t: Tensor, base: Tensor):
    """A view's tangent from its base's, made on first use (the same view of it)."""
    root_t = base._fw
    if root_t is None or root_t is False:
        return None
    m = t._grad_state
    if m is not None and m.detached:
        return None
    # Views replay their chain from the storage: the base's tangent must be laid out alike.
    if (
        base._chain
        or root_t._chain
        or root_t._base is not None
        or root_t._storage.value.shape != base._storage.value.shape
        or any(isinstance(s, _views.Bitcast) for s in t._chain)
    ):
        return None
    v = root_t
    for step in t._chain:
        v = v._make_view(step)
    _set(t, v)
    return v


def on_view(op, steps, base: Tensor, views) -> None:
    """After a view op: each view's tangent is the same view of `base`'s tangent."""
    many = isinstance(views, tuple)
    fw = base._fw
    if not op.differentiable or fw is False:
        for v in views if many else (views,):
            _set(v, False)
        return
    bt = fw if fw is not None else _tangent(base)
    if bt is None:
        return
    for step, v in zip(steps if many else (steps,), views if many else (views,)):
        if isinstance(step, _views.Bitcast):
            _set(v, False)  # view(dtype): reinterpreted bits have no tangent
            continue
        if isinstance(step, _views.Strided) and not _same_layout(bt, base):
            # as_strided indexes the storage: give the tangent the base's storage layout
            # (a copy: writes through this view's tangent do not reach `base`'s).
            full = jnp.zeros(base._storage.value.shape, bt._array.dtype)
            if base._chain:
                full = _views.writeback(base._chain, full, bt._array)
            else:
                full = bt._array
            _set(v, wrap(full)._make_view(step))
        else:
            _set(v, bt._make_view(step))


def _same_layout(a: Tensor, b: Tensor) -> bool:
    return (
        a._storage.value.shape == b._storage.value.shape
        and a._chain == b._chain
        and a.stride() == b.stride()
        and a.storage_offset() == b.storage_offset()
    )


# ---------------------------------------------------------------------------
# In-place writes


def on_write(target: Tensor, result: Tensor) -> None:
    """Before `result` is written into `target`: `target`'s tangent becomes `result`'s."""
    rt = result._fw
    if rt is False:
        rt = None
    tt = _tangent(target)
    if (rt is None and tt is None) or not _inexact(target):
        return
    if tt is None:
        tt = _new_tangent(target)
    src = rt if rt is not None else wrap(jnp.zeros_like(tt._array))
    _registry.write_inplace(tt, src)


def _new_tangent(target: Tensor) -> Tensor:
    """A zero tangent for a tensor about to be written with a dual value.

    For a view, as in PyTorch, its base gets the zero tangent and the view's is the view of
    it, so the base and its other views see the write.
    """
    base = target._base
    m = target._grad_state
    if (
        base is not None
        and target._fw is None
        and base._fw is None
        and not base._chain
        and not (m is not None and m.detached)
        and _inexact(base)
    ):
        _set(base, wrap(jnp.zeros_like(base._storage.value)))
        t = _from_base(target, base)
        if t is not None:
            return t
    t = wrap(jnp.zeros_like(target._array))
    _set(target, t)
    return t


def check_out(op, result) -> None:
    """`out=` with a dual result: PyTorch has no forward AD for out= functions."""
    for r in result if isinstance(result, tuple) else (result,):
        if isinstance(r, Tensor) and r._fw is not None and r._fw is not False:
            raise NotImplementedError(
                f"Trying to use forward AD with {op.name}_out that does "
                "not support it because it is an out= function"
            )


# ---------------------------------------------------------------------------
# Kernel calls


# JVPs per (kernel, tangent inputs); a kernel is per shape, so is its JVP.
_JVP = _programs.ProgramCache("jvps", share=0.5)


def jvp_of(fn, mask, transpose: bool = False):
    """The cached `jvp(*args, *tangents) -> tangents of fn's inexact outputs` of `fn(*args)`.

    `mask` marks the args (elements of tuple args) that carry tangents, in `_pick` order.
    Tangents are cast to their primal's dtype (PyTorch allows a float64 tangent on a
    float32 primal; jax's JVP does not). `transpose`: compute it from the VJP, for kernels
    with a `custom_vjp` rule (see `_jvp_by_transposing`).
    """
    key = (fn, mask, transpose)
    j = _JVP.get(key)
    if j is not None:
        return j
    n = len(mask)
    push = _jvp_by_transposing if transpose else _jvp

    def jvp(*vals):
        args, tans = vals[:n], vals[n:]
        primals = tuple(_pick(args, mask))
        tans = tuple(t if t.dtype == p.dtype else t.astype(p.dtype) for p, t in zip(primals, tans))
        out, out_t = push(lambda *d: fn(*_merge(args, mask, d)), primals, tans)
        leaves, tree = jax.tree_util.tree_flatten(out)
        t_leaves = tree.flatten_up_to(out_t)
        return tuple(t for o, t in zip(leaves, t_leaves) if jnp.issubdtype(o.dtype, jnp.inexact))

    # A kernel that is not compiled (data-dependent shapes) cannot be traced by jit either.
    j = jax.jit(jvp) if hasattr(fn, "lower") else jvp
    return _JVP.put(key, j)


def _jvp(f, primals, tans):
    return jax.jvp(f, primals, tans)


def _jvp_by_transposing(f, primals, tans):
    """`jax.jvp` for a kernel with a `custom_vjp` rule (which jax cannot push tangents through).

    The rule's pullback `u -> J^T u` is linear; the pullback of that map, applied to the
    tangents, is `J t`.
    """
    out, pullback = jax.vjp(f, *primals)
    leaves, tree = jax.tree_util.tree_flatten(out)
    inexact = [jnp.issubdtype(o.dtype, jnp.inexact) for o in leaves]

    def full(parts):
        it = iter(parts)
        return [
            next(it) if ok else np.zeros(o.shape, jax.dtypes.float0)
            for o, ok in zip(leaves, inexact)
        ]

    def pull(*cts):
        return pullback(tree.unflatten(full(cts)))

    zeros = [jnp.zeros(o.shape, o.dtype) for o, ok in zip(leaves, inexact) if ok]
    _, pull_pull = jax.vjp(pull, *zeros)
    return out, tree.unflatten(full(pull_pull(tuple(tans))))


class _JvpOp:
    """The tape's view of a tangent computation (for backward through tangents)."""

    differentiable = True

    def __init__(self, op, n_tangents: int, name: str):
        self.name = op.name + "_jvp"
        self.autograd_name = name
        self.slot_kinds = tuple(op.slot_kinds) + (_registry.T,) * n_tangents


_JVP_OPS: dict = {}


def _flat_tensors(result) -> list:
    if isinstance(result, Tensor):
        return [result]
    out = []
    for r in result if isinstance(result, (tuple, list)) else ():
        out.extend(_flat_tensors(r))
    return out


# Kernels whose JVP comes from their VJP (custom_vjp rules), as keys of a bounded cache.
_TRANSPOSE = _programs.ProgramCache("jvp-transposed", share=0.25)


def _unsupported(op, e: Exception) -> NotImplementedError:
    return NotImplementedError(
        f"Trying to use forward AD with {op.name} that does not support it ({e})"
    )


def on_call(op, fn, slot_values, arrays, result) -> None:
    """After a kernel call: the outputs' tangents, when inputs carry tangents."""
    if not op.differentiable:
        return
    kinds = op.slot_kinds
    mask = None
    tans = []
    for i, v in enumerate(slot_values):
        if isinstance(v, Tensor):
            t = None if kinds[i] is _registry.S else _tangent(v)
            if t is not None:
                if mask is None:
                    mask = [False] * len(slot_values)
                mask[i] = True
                tans.append(t)
        elif type(v) is tuple or type(v) is list:
            m = []
            for x in v:
                t = _tangent(x) if isinstance(x, Tensor) else None
                m.append(t is not None)
                if t is not None:
                    tans.append(t)
            if any(m):
                if mask is None:
                    mask = [False] * len(slot_values)
                mask[i] = tuple(m)
    if mask is None:
        return
    outs = [o for o in _flat_tensors(result) if _inexact(o)]
    if not outs:
        return
    mask = tuple(mask)
    j = jvp_of(fn, mask, fn in _TRANSPOSE)
    t_arrays = tuple(t._array for t in tans)
    try:
        t_outs = j(*arrays, *t_arrays)
    except TypeError as e:
        # jax reports a custom_vjp rule when it compiles the JVP: transpose the VJP instead.
        if "custom_vjp" not in str(e) or fn in _TRANSPOSE:
            raise _unsupported(op, e) from None
        _TRANSPOSE.put(fn, True)
        j = jvp_of(fn, mask, True)
        t_outs = j(*arrays, *t_arrays)
    except (ValueError, NotImplementedError) as e:
        raise _unsupported(op, e) from None
    t_result = tuple(wrap(a) for a in t_outs)
    record = _dispatch.record
    if record is not None:
        name = call_name(op, slot_values)
        key = (op, len(tans), name)
        jop = _JVP_OPS.get(key)
        if jop is None:
            jop = _JVP_OPS[key] = _JvpOp(op, len(tans), name)
        record(jop, j, tuple(slot_values) + tuple(tans), tuple(arrays) + t_arrays, t_result)
    for o, t in zip(outs, t_result):
        _set(o, t)
