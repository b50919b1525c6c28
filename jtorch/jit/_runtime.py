"""`torch.jit`'s decorators, `fork`/`wait`, `annotate`, `isinstance` and fuser switches.

Without TorchScript these are what PyTorch's are in eager Python: decorators return the
function, `fork` runs the call at once and returns a completed `Future`, and the fuser
switches only remember their setting.
"""

from __future__ import annotations

import builtins
import contextlib
import typing
from typing import Final  # noqa: F401 - torch.jit.Final is typing.Final


def _decorator(fn):
    """Matches `torch.jit.export`, `unused`, `interface`, ...: returns `fn` unchanged."""
    return fn


export = unused = script_method = interface = _overload = _overload_method = _decorator


def script_if_tracing(fn):
    """Matches `torch.jit.script_if_tracing`: the function, run as Python."""
    return fn


def ignore(drop=False, **kwargs):
    """Matches `torch.jit.ignore`, with or without arguments: returns the function unchanged."""
    if callable(drop):
        return drop
    return _decorator


def annotate(the_type, the_value):
    """Matches `torch.jit.annotate`: returns `the_value`."""
    return the_value


class Future:
    """A completed-or-pending result, as `torch.futures.Future` (the subset `fork` needs)."""

    def __init__(self, *, devices=None):
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self) -> bool:
        return self._done

    def set_result(self, result) -> None:
        self._finish(result, None)

    def set_exception(self, result) -> None:
        self._finish(None, result)

    def _finish(self, value, error) -> None:
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._value, self._error, self._done = value, error, True
        for cb in self._callbacks:
            cb(self)
        self._callbacks = []

    def wait(self):
        if not self._done:
            raise RuntimeError("jtorch Futures complete synchronously; this one was never set")
        if self._error is not None:
            raise self._error
        return self._value

    value = wait

    def then(self, callback) -> Future:
        out = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:  # noqa: BLE001 - carried to out.wait()
                out.set_exception(e)

        self.add_done_callback(run)
        return out

    def add_done_callback(self, callback) -> None:
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)


def fork(func, *args, **kwargs) -> Future:
    """Matches `torch.jit.fork` in eager mode: runs `func` now; its exception raises here."""
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future: Future):
    """Matches `torch.jit.wait`: the forked call's result."""
    return future.wait()


def isinstance(obj, target_type) -> bool:  # noqa: A001 - PyTorch's name
    """Matches `torch.jit.isinstance`: checks containers element by element.

    Understands `list[T]`, `dict[K, V]`, `tuple[...]`, `Optional[T]` / unions and plain types.
    """
    origin = typing.get_origin(target_type)
    args = typing.get_args(target_type)
    if target_type is typing.Any:
        return True
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return any(isinstance(obj, a) for a in args)
    if not builtins.isinstance(obj, origin):
        return False
    if origin is list:
        return all(isinstance(v, args[0]) for v in obj) if args else True
    if origin is dict:
        return (
            all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
            if args
            else True
        )
    if origin is tuple:
        if not args:
            return True
        if len(args) == 2 and args[1] is Ellipsis:
            return all(isinstance(v, args[0]) for v in obj)
        return len(obj) == len(args) and all(isinstance(v, a) for v, a in zip(obj, args))
    return True


# -- fusion and executor switches: remembered, nothing to switch --------------------------

_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")
_state = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


@contextlib.contextmanager
def fuser(name: str):
    """Matches `torch.jit.fuser` (a no-op context: XLA does the fusing)."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002
    yield


@contextlib.contextmanager
def optimized_execution(should_optimize: bool):
    """Matches `torch.jit.optimized_execution` (a no-op context)."""
    yield


def set_fusion_strategy(strategy):
    """Matches `torch.jit.set_fusion_strategy`: stores it and returns the previous one."""
    old, _state["strategy"] = _state["strategy"], list(strategy)
    return old


def enable_onednn_fusion(enabled: bool) -> None:
    """Matches `torch.jit.enable_onednn_fusion` (remembered only)."""
    _state["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _state["onednn"]


class strict_fusion:  # noqa: N801 - PyTorch's name
    """Matches `torch.jit.strict_fusion`: outside TorchScript it does nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def last_executed_optimized_graph():
    """Raises: jtorch runs no TorchScript graphs."""
    raise RuntimeError("jtorch has no TorchScript: there is no executed TorchScript graph")


class CompilationUnit:
    """`torch.jit.CompilationUnit`: compiling TorchScript source is not supported."""

    def __init__(self, lang=None, _frames_up: int = 0):
        if lang is not None:
            raise RuntimeError(
                "jtorch has no TorchScript: CompilationUnit cannot compile "
                "TorchScript source; define the functions in Python instead"
            )


class Error(RuntimeError):
    """`torch.jit.Error`: an error raised by TorchScript code (never raised by jtorch)."""


class TracerWarning(Warning):
    """`torch.jit.TracerWarning`."""


class ScriptWarning(Warning):
    """`torch.jit.ScriptWarning`."""


class TracingCheckError(Exception):
    """`torch.jit.TracingCheckError`."""
