"""`torch.overrides`: `__torch_function__` for Tensor subclasses, tensor-likes and modes.

The dispatch itself is `jtorch._torch_function` (and, for the registry's ops,
`jtorch._ops._overrides`). Which functions take part: every op the registry declares
(functions, methods, in-place forms, dunders), every composite op, and the hand-written
functions that ask `has_torch_function_*` as PyTorch's Python functions do (`nn.init`).
Tensor properties and the few methods written directly on `Tensor` (`size`, `dim`,
`item`...) do not go through `__torch_function__` in jtorch.
"""

from __future__ import annotations

import contextlib
import functools
import warnings

from . import _torch_function as _tf
from ._tensor import Tensor
from ._torch_function import (  # noqa: F401
    get_default_nowrap_functions,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)
from ._torch_function import get_overloaded_args as _get_overloaded_args  # noqa: F401
from ._torch_function import is_mode_enabled as _is_torch_function_mode_enabled  # noqa: F401
from ._torch_function import pop_mode as _pop_mode  # noqa: F401
from ._torch_function import pop_mode_temporarily as _pop_mode_temporarily  # noqa: F401
from ._torch_function import push_mode as _push_mode  # noqa: F401

__all__ = [
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "get_default_nowrap_functions",
    "handle_torch_function",
    "has_torch_function",
    "resolve_name",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "wrap_torch_function",
    "enable_reentrant_dispatch",
    "TorchFunctionMode",
    "BaseTorchFunctionMode",
]


class TorchFunctionMode:
    """Matches `torch.overrides.TorchFunctionMode`: inside `with mode:`, every torch
    function call goes to `mode.__torch_function__(func, types, args, kwargs)` (with the mode
    taken off the stack while it runs, so that its own calls of `func` run normally)."""

    inner: TorchFunctionMode

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _tf.push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _tf.pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn(
            "`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
            stacklevel=2,
        )
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """Matches `torch.overrides.BaseTorchFunctionMode`: runs every function unchanged."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    """The innermost torch function mode of this thread, or None."""
    n = _tf.stack_len()
    return _tf.get_stack_at(n - 1) if n else None


def _get_current_function_mode_stack() -> list:
    return [_tf.get_stack_at(i) for i in range(_tf.stack_len())]


def is_tensor_like(inp) -> bool:
    """Matches `torch.overrides.is_tensor_like`: a Tensor, or defines `__torch_function__`."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def wrap_torch_function(dispatcher):
    """Matches `torch.overrides.wrap_torch_function`: makes a function dispatch on the
    arguments `dispatcher(*args, **kwargs)` names."""

    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """Matches `torch.overrides.enable_reentrant_dispatch` (jtorch has one dispatch level)."""
    yield


@functools.lru_cache(maxsize=1)
def _overridable() -> dict:
    """{namespace object: [functions]} over what the registry declares, as PyTorch's
    `get_overridable_functions` maps torch, torch.Tensor, torch.nn.functional, ..."""
    import importlib

    from ._ops import _registry

    out = {}
    for ns, names in _registry.NAMESPACES.items():
        module = importlib.import_module("jtorch" + ("." + ns if ns else ""))
        fns = [f for f in names.values() if callable(f)]
        out.setdefault(module, []).extend(fns)
    out[Tensor] = [getattr(Tensor, name) for name in _registry.METHODS]
    return out


def get_overridable_functions() -> dict:
    """Matches `torch.overrides.get_overridable_functions`: {namespace: [functions]}."""
    return {ns: list(fns) for ns, fns in _overridable().items()}


def get_ignored_functions() -> set:
    """Matches `torch.overrides.get_ignored_functions`: public torch functions that do not
    dispatch on `__torch_function__` (those that are not ops: `typename`, `set_rng_state`...)."""
    import jtorch

    overridable = {id(f) for fns in _overridable().values() for f in fns}
    return {
        f
        for name, f in vars(jtorch).items()
        if not name.startswith("_")
        and callable(f)
        and not isinstance(f, type)
        and id(f) not in overridable
    }


def get_testing_overrides() -> dict:
    """Matches `torch.overrides.get_testing_overrides`: {function: a dummy returning -1}."""
    return {f: (lambda *args, **kwargs: -1) for fns in _overridable().values() for f in fns}


def resolve_name(f):
    """Matches `torch.overrides.resolve_name`: "torch.add" for `torch.add`, else None."""
    for ns, fns in _overridable().items():
        prefix = "torch.Tensor" if ns is Tensor else "torch" + ns.__name__[len("jtorch") :]
        for fn in fns:
            if fn is f:
                return f"{prefix}.{getattr(f, '__name__', '')}"
    return None


def is_tensor_method_or_property(func) -> bool:
    """Matches `torch.overrides.is_tensor_method_or_property`."""
    return func in _overridable()[Tensor] or getattr(func, "__name__", None) == "__get__"
