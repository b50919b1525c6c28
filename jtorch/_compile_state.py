"""What a compiled call reads and writes (DESIGN 7, step 1): its state, discovered.

From a function's roots (its arguments, the objects its closure and globals name: modules,
optimizers, tensors; and, for a bound method, its `self`) `_discover` collects every
reachable tensor: parameters and their `.grad`, buffers, tensor attributes, optimizer state.
Each is an `_Entry`: a path, and a way to get and set it on the live objects. The Python
state that shapes a program (`training` flags, optimizer options) is collected beside it.
`_compile` lifts these into the inputs and outputs of the jitted program.
"""

from __future__ import annotations

import functools
import inspect
import types

from ._tensor import Tensor


class _Entry:
    """One reachable tensor: its path, and how to read and write it on the live objects."""

    __slots__ = ("path", "get", "set")

    def __init__(self, path, get, set_):
        self.path = path
        self.get = get
        self.set = set_


def _is_module(obj) -> bool:
    from .nn import Module

    return isinstance(obj, Module)


def _is_optimizer(obj) -> bool:
    from .optim import Optimizer

    return isinstance(obj, Optimizer)


def _tensor_entries(path, t, get, set_, out):
    out.append(_Entry(path, get, set_))
    out.append(
        _Entry(
            path + ".grad",
            lambda: get()._grad if get() is not None else None,
            lambda v: setattr(get(), "_grad", v),
        )
    )


class _Collector:
    """Walks roots, collecting tensor entries and the Python state that shapes a program."""

    def __init__(self):
        self.entries: list = []
        self.python: list = []
        self.optimizers: list = []
        self.scalars: list = []  # (dict, key) of each learning rate, a program input
        self._seen: set = set()

    def visit(self, path, obj, depth=0):
        if depth > 6 or id(obj) in self._seen:
            return
        if isinstance(obj, Tensor):
            self._seen.add(id(obj))
            _tensor_entries(path, obj, lambda: obj, None, self.entries)
            return
        if _is_module(obj) or _is_optimizer(obj):
            self._seen.add(id(obj))
            self._take(obj._lifted_state(path))
            if _is_optimizer(obj):
                self.optimizers.append(obj)
            return
        if isinstance(obj, (list, tuple)):
            self._seen.add(id(obj))
            for i, v in enumerate(obj):
                self.visit(f"{path}[{i}]", v, depth + 1)
        elif isinstance(obj, dict):
            self._seen.add(id(obj))
            for k, v in list(obj.items()):
                if isinstance(k, (str, int)):
                    self.visit(f"{path}[{k!r}]", v, depth + 1)

    def _take(self, lifted) -> None:
        """Adds what an object's `_lifted_state` says its state is (`_tracing.Lifted`)."""
        self._seen.update(id(o) for o in lifted.objects)
        self.python.extend(lifted.facts)
        self.scalars.extend(lifted.scalars)
        for path, t, get, set_, grad in lifted.tensors:
            if not grad:  # (an optimizer's state: replaced whole by each step)
                self.entries.append(_Entry(path, get, set_))
            elif id(t) not in self._seen:
                self._seen.add(id(t))
                _tensor_entries(path, t, get, set_, self.entries)


def _roots(fn, args, kwargs) -> list:
    """(path, object) pairs the function can reach: arguments, `self`, closure, globals."""
    roots = [("args", args), ("kwargs", kwargs)]
    seen = set()

    def from_function(f, prefix, depth):
        if depth > 3 or id(f) in seen:
            return
        seen.add(id(f))
        if isinstance(f, types.MethodType):
            roots.append((f"{prefix}.self", f.__self__))
            f = f.__func__
        if isinstance(f, functools.partial):
            roots.append((f"{prefix}.partial", (f.args, f.keywords)))
            from_function(f.func, prefix, depth + 1)
            return
        code = getattr(f, "__code__", None)
        if code is None or (getattr(f, "__module__", "") or "").startswith("jtorch"):
            return
        for name, cell in zip(code.co_freevars, f.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            _consider(f"{prefix}.{name}", value, depth)
        g = f.__globals__
        for name in _global_names(code):
            if name in g:
                _consider(f"{prefix}.{name}", g[name], depth)

    def _consider(path, value, depth):
        if inspect.isfunction(value) or isinstance(value, (types.MethodType, functools.partial)):
            from_function(value, path, depth + 1)
        elif (
            isinstance(value, (Tensor, list, tuple, dict))
            or _is_module(value)
            or _is_optimizer(value)
        ):
            roots.append((path, value))
        elif hasattr(value, "__dict__") and _is_module_like(value):
            roots.append((path, value))

    from_function(fn, "fn", 0)
    # Functions passed as arguments (a `score_mod` closure, a callback) are state too: the
    # tensors they capture are lifted like the compiled function's own.
    for path, value in _callable_args(args, kwargs):
        from_function(value, path, 1)
    return roots


def _callable_args(args, kwargs):
    for i, a in enumerate(args):
        if inspect.isfunction(a) or isinstance(a, functools.partial):
            yield f"args[{i}]", a
    for k, a in kwargs.items():
        if inspect.isfunction(a) or isinstance(a, functools.partial):
            yield f"kwargs[{k!r}]", a


def _global_names(code) -> list:
    """The global names a function's code reads, its nested functions' and lambdas' included."""
    names = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.extend(n for n in _global_names(c) if n not in names)
    return names


def _is_module_like(value) -> bool:
    # An LR scheduler holds its optimizer; reaching the optimizer through it is enough.
    return hasattr(value, "optimizer") and _is_optimizer(getattr(value, "optimizer", None))


def _discover(fn, args, kwargs):
    c = _Collector()
    for path, obj in _roots(fn, args, kwargs):
        if _is_module_like(obj) and not _is_module(obj) and not _is_optimizer(obj):
            obj = obj.optimizer
        c.visit(path, obj)
    return c
