"""`__torch_function__`: Tensor subclasses and torch function modes (PyTorch's overrides).

PyTorch checks every call of a torch function for arguments whose type overrides
`__torch_function__` (a Tensor subclass, a tensor-like object) and for an active
`TorchFunctionMode`, and hands such calls to them. jtorch keeps the common case free:
while no mode is on any thread's stack and no Tensor subclass overrides
`__torch_function__`, nothing checks anything. The first such mode or subclass turns the
checks on (`set_active`): the op registry then swaps its generated functions' code for a
variant that asks `wants` first (`jtorch/_ops/_registry.py`), and back when the last one
goes away. (A subclass counts from its first instance, `_subclass_instance`.)
Hand-written torch functions ask `has_torch_function_*` themselves, as
PyTorch's Python functions do.

The state (the mode stack, what is disabled) is per thread, as in PyTorch.
"""

from __future__ import annotations

import contextlib
import threading
import warnings

from . import _tensor
from ._tensor import Tensor

__all__ = [
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "disabled_torch_function_impl",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "handle_torch_function",
    "dispatch",
    "get_overloaded_args",
    "push_mode",
    "pop_mode",
    "pop_mode_temporarily",
    "stack_len",
    "get_stack_at",
    "is_enabled",
    "is_mode_enabled",
    "is_all_disabled",
    "wants",
    "set_active",
    "get_default_nowrap_functions",
]

_ENABLED, _SUBCLASSES_DISABLED, _ALL_DISABLED = 0, 1, 2


class _State(threading.local):
    def __init__(self):
        self.modes: list = []  # innermost mode last
        self.disabled = _ENABLED


_state = _State()
# Process-wide counts that decide whether any check is needed at all.
_counts = {"modes": 0, "subclasses": 0}
_active_hooks: list = []  # called with the new activity on each change (the registry's)
active = False


def set_active() -> None:
    """Recomputes whether torch-function checks are on, and tells the hooks on a change."""
    global active
    now = _counts["modes"] > 0 or _counts["subclasses"] > 0
    if now != active:
        active = now
        for hook in _active_hooks:
            hook(now)


def disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """Matches `torch._C._disabled_torch_function_impl`: a type whose `__torch_function__`
    is this one takes no part in dispatch (`nn.Parameter`); calling it runs `func`."""
    return func(*args, **(kwargs or {}))


_seen_subclasses: set = set()


def _subclass_instance(cls: type) -> None:
    """Told of each Tensor subclass instance made (`Tensor._make_subclass`): the first
    instance of a class that overrides `__torch_function__` turns the checks on, for good."""
    if cls in _seen_subclasses:
        return
    _seen_subclasses.add(cls)
    if getattr(cls, "__torch_function__", None) is not disabled_torch_function_impl:
        _counts["subclasses"] += 1
        set_active()


def tensor_like_seen(values) -> bool:
    """Told of a registry function's arguments when its call failed: whether, while no checks
    were on, one of them (or of a list or tuple among them) is a tensor-like object, not a
    Tensor, whose type overrides `__torch_function__`. The first such type turns the checks
    on for good, as a subclass's first instance does (the function is then called again)."""
    if active:
        return False
    found = {
        type(a)
        for v in values
        for a in (v if type(v) in (list, tuple) else (v,))
        if type(a) not in _seen_subclasses and not isinstance(a, Tensor) and _overrides(type(a))
    }
    for t in found:
        _subclass_instance(t)  # (counted as a subclass's first instance is)
    return bool(found)


# -- the per-thread state ----------------------------------------------------


def is_enabled() -> bool:
    """Matches `torch._C._is_torch_function_enabled`: neither subclasses nor all disabled."""
    return _state.disabled == _ENABLED


def is_all_disabled() -> bool:
    """Matches `torch._C._is_torch_function_all_disabled`."""
    return _state.disabled == _ALL_DISABLED


def is_mode_enabled() -> bool:
    """Matches `torch._C._is_torch_function_mode_enabled`: a mode is on this thread's stack
    and `DisableTorchFunction` is not in force."""
    return _state.disabled != _ALL_DISABLED and bool(_state.modes)


def stack_len() -> int:
    return len(_state.modes)


def get_stack_at(i: int):
    return _state.modes[i]


def push_mode(mode) -> None:
    _state.modes.append(mode)
    _counts["modes"] += 1
    set_active()


def pop_mode():
    if not _state.modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _state.modes.pop()
    _counts["modes"] -= 1
    set_active()
    return mode


@contextlib.contextmanager
def pop_mode_temporarily():
    """Takes the innermost mode off the stack while its `__torch_function__` runs (the
    process-wide count keeps it: the checks stay on for the calls it makes)."""
    modes = _state.modes
    if not modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = modes.pop()
    try:
        yield mode
    finally:
        modes.append(mode)


class _Disable:
    _level = _ALL_DISABLED

    def __enter__(self):
        self._prev = _state.disabled
        if self._prev < self._level:
            _state.disabled = self._level
        return self

    def __exit__(self, *exc):
        _state.disabled = self._prev


class DisableTorchFunctionSubclass(_Disable):
    """Matches `torch._C.DisableTorchFunctionSubclass`: inside, arguments' own
    `__torch_function__` are not called (modes still are)."""

    _level = _SUBCLASSES_DISABLED


class DisableTorchFunction(_Disable):
    """Matches `torch._C.DisableTorchFunction`: inside, neither subclasses nor modes are."""

    _level = _ALL_DISABLED


for _cls in (DisableTorchFunctionSubclass, DisableTorchFunction, _Disable):
    _cls.__module__ = "torch._C"


# -- which calls are handled -------------------------------------------------


def _overrides(t: type) -> bool:
    if t is Tensor:
        return False
    impl = getattr(t, "__torch_function__", None)
    return (
        impl is not None
        and impl is not disabled_torch_function_impl
        and getattr(impl, "__func__", None) is not disabled_torch_function_impl
    )


def _has_overloaded(args) -> bool:
    for a in args:
        t = type(a)
        if t is list or t is tuple:
            if _has_overloaded(a):
                return True
        elif t.__module__ != "builtins" and _overrides(t):
            return True
    return False


def wants(relevant_args) -> bool:
    """Whether a torch function called with `relevant_args` goes to `handle_torch_function`
    (the variant code of the registry's functions asks this while checks are on)."""
    st = _state
    if st.disabled == _ALL_DISABLED:
        return False
    if st.modes:
        return True
    return st.disabled == _ENABLED and _has_overloaded(relevant_args)


def has_torch_function(relevant_args) -> bool:
    """Matches `torch.overrides.has_torch_function`."""
    return active and wants(tuple(relevant_args))


def has_torch_function_unary(arg) -> bool:
    """Matches `torch.overrides.has_torch_function_unary`."""
    return active and wants((arg,))


def has_torch_function_variadic(*args) -> bool:
    """Matches `torch.overrides.has_torch_function_variadic`."""
    return active and wants(args)


def get_overloaded_args(relevant_args, get_type_fn=None) -> list:
    """Matches `torch.overrides._get_overloaded_args`: arguments whose type overrides
    `__torch_function__`, one per type, subclasses before their bases, else left to right."""
    get_type = type if get_type_fn is None else get_type_fn
    if not is_enabled():
        return []
    types, out = set(), []
    for arg in relevant_args:
        t = get_type(arg)
        if t in types or t in (list, tuple):
            continue
        impl = getattr(t, "__torch_function__", None)
        if impl is None or impl is disabled_torch_function_impl:
            continue
        types.add(t)
        index = len(out)
        for i, old in enumerate(out):
            if issubclass(t, get_type(old)):
                index = i
                break
        out.insert(index, arg)
    return out


def _flatten_relevant(args) -> list:
    flat = []
    for a in args:
        if type(a) in (list, tuple):
            flat.extend(a)
        else:
            flat.append(a)
    return flat


def _overloaded_cpp(relevant_args) -> list:
    """The overloaded arguments as PyTorch's C++ ops find them: plain Tensors are not."""
    return [
        a for a in get_overloaded_args(_flatten_relevant(relevant_args)) if type(a) is not Tensor
    ]


def dispatch(public_api, qualname: str, relevant_args, args: tuple, kwargs: dict):
    """`handle_torch_function` as PyTorch's C++ ops do it (the registry's functions and
    composites): plain Tensors take no part, and PyTorch's "Multiple dispatch failed"
    TypeError when every handler returns NotImplemented."""
    overloaded = _overloaded_cpp(relevant_args)
    types = tuple(type(a) for a in overloaded)
    tried = []
    if is_mode_enabled():
        with pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
        tried.append(f"  - mode object {mode!r}")
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
        tried.append(f"  - tensor subclass {type(arg)!r}")
    raise TypeError(
        f"Multiple dispatch failed for '{qualname}'; all __torch_function__ "
        "handlers returned NotImplemented:\n\n"
        + "\n".join(tried)
        + "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented"
    )


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Matches `torch.overrides.handle_torch_function`: the innermost mode first (popped
    while it runs), then each overloaded argument's `__torch_function__`, until one does not
    return NotImplemented; TypeError when none implements the call."""
    overloaded = get_overloaded_args(_flatten_relevant(relevant_args))
    types = tuple(type(a) for a in overloaded)
    if is_mode_enabled():
        with pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg:
            warnings.warn(
                "Defining your `__torch_function__` as a plain method is deprecated "
                "and will be an error in future, please define it as a classmethod.",
                DeprecationWarning,
                stacklevel=2,
            )
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    module = str(getattr(public_api, "__module__", None))
    if module == "jtorch" or module.startswith("jtorch."):
        module = "torch" + module[len("jtorch") :]  # PyTorch's names, in messages
    name = f"{module}.{getattr(public_api, '__name__', '')}"
    msg = (
        f"no implementation found for '{name}' on types that implement "
        f"__torch_function__: {[type(a) for a in overloaded]}"
    )
    if is_mode_enabled():
        msg += f" nor in mode {_state.modes[-1]}"
    raise TypeError(msg)


# -- torch.Tensor's own __torch_function__ -----------------------------------


def get_default_nowrap_functions() -> set:
    """Matches `torch.overrides.get_default_nowrap_functions`: functions whose results
    `Tensor.__torch_function__` returns as they are (not converted to the subclass)."""
    return {Tensor._base.__get__, Tensor.grad.__get__, Tensor._grad.__get__}


def _convert(ret, cls):
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        # torch.return_types are structseqs, built from one iterable; jtorch's are namedtuples
        ret = type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """Matches `torch.Tensor.__torch_function__`: runs `func` with subclass dispatch off and
    makes Tensor results instances of `cls`."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in get_default_nowrap_functions():
            return ret
        return _convert(ret, cls)


Tensor.__torch_function__ = classmethod(_tensor_torch_function)
_tensor.subclass_hook = _subclass_instance
