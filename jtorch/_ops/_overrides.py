"""`__torch_function__` for the registry's functions, at no cost while nobody needs it.

The registry generates every op's function, method and in-place form (`_registry._gen`),
and publishes composites (ops written on Tensors) as they are. While a torch function mode
is on a stack or a Tensor subclass overriding `__torch_function__` exists
(`jtorch._torch_function.active`), each of these functions runs a trampoline instead of
its code: it asks whether the call goes to `__torch_function__` (with the arguments exactly
as the caller gave them, as PyTorch passes them) and otherwise calls a copy of the original.
The functions keep their identity (`torch.add is torch.add`); only `__code__` and
`__kwdefaults__` change, and change back when the last mode or subclass is gone.
"""

from __future__ import annotations

import types

from .. import _torch_function as _tf
from .._tracebacks import clean as _clean
from . import _registry

__all__ = ["set_variants"]

# {function: (its code, its kwdefaults, a copy of the original, the trampoline's handler)}
_saved: dict = {}
_published: dict = {}  # id(function) -> its torch name, built on first use


def _qualname(fn) -> str:
    """PyTorch's name of a function, as its dispatch errors say ("torch.Tensor.add")."""
    if not _published:
        for ns, names in _registry.NAMESPACES.items():
            for short, f in names.items():
                _published.setdefault(id(f), "torch." + (ns + "." if ns else "") + short)
    return _published.get(id(fn), "torch.Tensor." + fn.__name__)


def _trampoline(*args, _jtorch_torch_function=None, **kwargs):
    # Runs as the code of a generated function, whose globals have `_clean` (`_gen`): its
    # errors leave it as the function's own would.
    try:
        return _jtorch_torch_function(args, kwargs)
    except Exception as _e:
        _clean(_e)
        raise


def _handler(public, original):
    qualname = _qualname(public)

    def handler(args, kwargs):
        relevant = args + tuple(kwargs.values()) if kwargs else args
        if _tf.wants(relevant):
            return _tf.dispatch(public, qualname, relevant, args, kwargs)
        return original(*args, **kwargs)

    return handler


def _functions():
    """Every generated function and every composite without a closure."""
    yield from _registry.GENERATED
    for impl in _registry.OPS.values():
        if isinstance(impl, types.FunctionType) and impl.__closure__ is None:
            yield impl


def set_variants(on: bool) -> None:
    """Swaps every registry function to the checking trampoline (or back)."""
    if not on:
        for fn, (code, kwdefaults, _, _) in _saved.items():
            fn.__code__ = code
            fn.__kwdefaults__ = kwdefaults
        return
    for fn in _functions():
        rec = _saved.get(fn)
        if rec is None:
            original = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__)
            original.__kwdefaults__ = fn.__kwdefaults__
            original.__qualname__ = fn.__qualname__
            rec = _saved[fn] = (
                fn.__code__,
                fn.__kwdefaults__,
                original,
                {"_jtorch_torch_function": _handler(fn, original)},
            )
        fn.__code__ = _trampoline.__code__
        fn.__kwdefaults__ = rec[3]


_tf._active_hooks.append(set_variants)
