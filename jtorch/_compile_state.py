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
        self._seen: set = set()

    def visit(self, path, obj, depth=0):
        if depth > 6 or id(obj) in self._seen:
            return
        if isinstance(obj, Tensor):
            self._seen.add(id(obj))
            _tensor_entries(path, obj, lambda: obj, None, self.entries)
            return
        if _is_module(obj):
            self._seen.add(id(obj))
            self._module(path, obj)
            return
        if _is_optimizer(obj):
            self._seen.add(id(obj))
            self._optimizer(path, obj)
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

    def _module(self, prefix, m):
        self.python.append((prefix, "training", m.training))
        for name, sub in m.named_modules(prefix=prefix, remove_duplicate=True):
            self._seen.add(id(sub))
            self.python.append((name, "training", sub.training))
            for key, p in sub._parameters.items():
                if p is not None:
                    self._attr(f"{name}.{key}", sub._parameters, key)
            for key, b in sub._buffers.items():
                if b is not None:
                    self._attr(f"{name}.{key}", sub._buffers, key)
            for key, v in list(sub.__dict__.items()):
                if isinstance(v, Tensor):
                    self._obj_attr(f"{name}.{key}", sub, key)

    def _attr(self, path, table, key):
        def get():
            return table.get(key)

        def set_(v):
            table[key] = v

        if id(table[key]) in self._seen:
            return
        self._seen.add(id(table[key]))
        _tensor_entries(path, table[key], get, set_, self.entries)

    def _obj_attr(self, path, obj, key):
        if id(obj.__dict__[key]) in self._seen:
            return
        self._seen.add(id(obj.__dict__[key]))
        _tensor_entries(
            path,
            obj.__dict__[key],
            lambda: obj.__dict__.get(key),
            lambda v: obj.__dict__.__setitem__(key, v),
            self.entries,
        )

    def _optimizer(self, prefix, opt):
        self.optimizers.append(opt)
        for gi, group in enumerate(opt.param_groups):
            self.python.append(
                (
                    f"{prefix}.group{gi}",
                    "options",
                    tuple((k, _hashable(v)) for k, v in group.items() if k not in ("params", "lr")),
                )
            )
            for pi, p in enumerate(group["params"]):
                if id(p) not in self._seen:
                    self._seen.add(id(p))
                    _tensor_entries(f"{prefix}.p{gi}.{pi}", p, lambda p=p: p, None, self.entries)
                self._opt_state(f"{prefix}.state{gi}.{pi}", opt, p)

    def _opt_state(self, path, opt, p):
        state = opt.state.get(p)
        keys = sorted(state) if state else []
        self.python.append((path, "keys", tuple(keys)))

        def getter(k):
            def get():
                st = opt.state.get(p)
                return None if st is None else st.get(k)

            return get

        def setter(k):
            def set_(v):
                opt.state[p][k] = v

            return set_

        for k in keys:
            v = state[k]
            if isinstance(v, Tensor):
                self.entries.append(_Entry(f"{path}.{k}", getter(k), setter(k)))
            else:
                self.python.append((f"{path}.{k}", "value", _hashable(v)))


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((str(k), _hashable(x)) for k, x in v.items()))
    try:
        hash(v)
        return v
    except TypeError:
        return ("id", id(v))


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
