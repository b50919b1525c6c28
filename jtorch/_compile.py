"""`jtorch.compile`: a whole function, training step included, as one `jax.jit` program.

DESIGN 7. A call runs in four steps:

1. **Discover state.** From the function's roots (its arguments, the objects its
   closure and globals name: modules, optimizers, tensors; and, for a bound
   method, its `self`) collect every reachable tensor: parameters and their
   `.grad`, buffers, tensor attributes, optimizer state. Each has a path and a
   way to get and set it on the live objects.
2. **Guard.** The cache key is the state's structure (paths, shapes, dtypes,
   which paths share storage), the Python state that shapes the program
   (`training` flags, optimizer options other than `lr`), and the arguments'
   structure. A new key traces again; otherwise the cached program runs.
3. **Trace** (on a miss). A pure function of the state's storage values, the
   optimizers' learning rates and a PRNG key binds tracers into the live
   storages, runs the function (forward, `backward()`, `optimizer.step()` all
   record and update as in eager mode), collects the state again and returns
   its values with the outputs. What a call mutates or creates (`.grad`,
   optimizer state, running stats) is thereby an output.
4. **Write back.** The new values are bound into the live storages (creating
   `.grad`/optimizer-state tensors that did not exist), and storages the call
   dropped get their values back.

Data-dependent Python (`.item()`, `bool(tensor)`, `.numpy()`) cannot be traced:
that call falls back to eager with one warning, or raises under `fullgraph=True`.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
import traceback
import types
import warnings

import jax

from . import _random, _spmd
from . import _tensor as _tensor_mod
from ._ops import _dispatch
from ._tensor import Tensor, wrap
from ._tracing import ABORT_HOOKS, GraphBreak, _compiling, _effects, each_call, is_compiling  # noqa: F401 (the trace state; PyTorch's names are exported here)

__all__ = ["compile", "disable", "reset", "is_compiling"]

_GRAPH_BREAKS = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerBoolConversionError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
)

_DONATE = os.environ.get("JTORCH_COMPILE_DONATE", "1") != "0"


class _GradsTouched(Exception):
    """A call traced without `.grad` (see `CompiledFunction._grads_unused`) touched it."""


def disable(fn=None, recursive: bool = True):
    """Matches `torch.compiler.disable`: `fn` always runs eagerly; inside a compiled
    function, calling it makes that call fall back to eager mode."""
    if fn is None:
        return functools.partial(disable, recursive=recursive)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _compiling[0]:
            raise GraphBreak(f"jtorch.compiler.disable'd function {fn.__qualname__} called")
        return fn(*args, **kwargs)

    wrapper._jtorch_disabled = True
    return wrapper


# ---------------------------------------------------------------------------
# State discovery


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


# ---------------------------------------------------------------------------
# The compiled function


def _arg_signature(x, depth=0):
    if isinstance(x, Tensor):
        return ("T",)
    if inspect.isfunction(x) and depth < 4:
        # A function argument is keyed by its code and what it captures, not by identity:
        # a fresh closure of the same code (made anew for every call, as libraries make a
        # `score_mod`) reuses the program; its tensors are lifted inputs (see `_roots`).
        cells = []
        for cell in x.__closure__ or ():
            try:
                cells.append(_arg_signature(cell.cell_contents, depth + 1))
            except ValueError:
                cells.append(("empty",))
        return ("fn", x.__code__, tuple(cells), _arg_signature(x.__defaults__ or (), depth + 1))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__,) + tuple(_arg_signature(v, depth) for v in x)
    if isinstance(x, dict):
        return ("dict",) + tuple((k, _arg_signature(v, depth)) for k, v in sorted(x.items()))
    return ("v", _hashable(x))


_ARRAY = object()  # marks an output leaf that is a tensor


class _Program:
    def __init__(self):
        self.jitted = None
        self.post = None  # post-call entries (resolved on the live objects)
        self.post_shared = None  # for each post storage index, the entry index
        self.out_tree = None
        self.eager = False
        self.trains = False  # the traced call ran backward(): a training step
        self.donating = False
        self.once = None  # the quickly compiled executable of a state-creating call
        self.world = None  # the devices of its processes, for a step with collectives (_spmd)
        self.effects = []  # Python run again at each call of the program (`each_call`)


class CompiledFunction:
    """What `jtorch.compile(fn)` returns: call it like `fn`."""

    def __init__(
        self,
        fn,
        fullgraph=False,
        dynamic=None,
        mode=None,
        backend=None,
        options=None,
        disable=False,
    ):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._fullgraph = fullgraph
        self._disabled = disable
        self._programs: dict = {}
        self.trace_count = 0
        self.call_count = 0
        self._warned = False
        # Once a trace has shown that the function never touches `.grad` (a module's
        # forward), `.grad` is neither lifted nor part of the key: the first backward, which
        # creates `.grad` outside the call, does not make the next call trace again.
        self._grads_unused = False

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def __call__(self, *args, **kwargs):
        if self._disabled or _compiling[0]:
            return self._fn(*args, **kwargs)
        self.call_count += 1
        coll = _discover(self._fn, args, kwargs)
        tensors = [e.get() for e in coll.entries]
        skip_grads = self._grads_unused and not coll.optimizers
        lifted = [
            None if skip_grads and e.path.endswith(".grad") else t
            for e, t in zip(coll.entries, tensors)
        ]
        storages, index = [], {}
        layout = []
        for e, t in zip(coll.entries, lifted):
            if skip_grads and e.path.endswith(".grad"):
                continue
            if t is None:
                layout.append((e.path, None))
                continue
            st = t._storage
            k = index.get(id(st))
            if k is None:
                k = index[id(st)] = len(storages)
                storages.append(st)
            # A view's positions (`X[j*64:(j+1)*64]`) are inputs of the program, not keys.
            layout.append((e.path, k, t._rg, t._chain and tuple(s.key for s in t._chain)))
        lrs_slots = [(g, "lr") for opt in coll.optimizers for g in opt.param_groups]
        key = (
            tuple(layout),
            tuple(coll.python),
            tuple((s.value.shape, s.value.dtype) for s in storages),
            _arg_signature(args),
            _arg_signature(kwargs),
        )
        prog = self._programs.get(key)
        if prog is not None and prog.eager:
            return self._fn(*args, **kwargs)
        if prog is None:
            prog = self._programs[key] = _Program()
        values = tuple(s.value for s in storages)
        lrs = tuple(float(g[k]) for g, k in lrs_slots)
        rng = _random.default_generator.next_key()
        steps = _view_steps(lifted)
        positions = tuple(s.params for s in steps)
        fresh = prog.jitted is None
        touches = _tensor_mod.grad_touches[0]
        inputs = (values, lrs, rng, positions)
        try:
            try:
                outs, new_values = self._run(
                    prog, coll, storages, lrs_slots, steps, inputs, args, kwargs, skip_grads
                )
            except _spmd.NeedsWorld as e:
                # A collective over several processes: trace again as one program of them all.
                self._restore(coll, tensors, storages, values, lrs_slots, lrs)
                prog.jitted = None
                prog.world = e.devices_of(_platform(values))
                outs, new_values = self._run(
                    prog, coll, storages, lrs_slots, steps, inputs, args, kwargs, skip_grads
                )
        except _GradsTouched:
            # keyed without `.grad`, the function touched it after all: trace it with `.grad`
            self._restore(coll, tensors, storages, values, lrs_slots, lrs)
            del self._programs[key]
            self._grads_unused = False
            self.call_count -= 1
            return self(*args, **kwargs)
        except (GraphBreak, *_GRAPH_BREAKS) as e:
            self._restore(coll, tensors, storages, values, lrs_slots, lrs)
            where = _user_frame(e)
            why = str(e) if isinstance(e, GraphBreak) else "data-dependent Python"
            if self._fullgraph:
                raise RuntimeError(
                    f"jtorch.compile(fullgraph=True): {why} cannot be compiled "
                    f"({type(e).__name__}) at {where}"
                ) from e
            prog.eager = True
            self._programs[key] = prog
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"jtorch.compile: falling back to eager mode for "
                    f"{getattr(self._fn, '__qualname__', self._fn)}: {why} at "
                    f"{where} ({type(e).__name__})",
                    stacklevel=2,
                )
            return self._fn(*args, **kwargs)
        if (
            fresh
            and not skip_grads
            and not prog.trains
            and not coll.optimizers
            and _tensor_mod.grad_touches[0] == touches
            and all(t is None for e, t in zip(coll.entries, tensors) if e.path.endswith(".grad"))
        ):
            # No `.grad` was there and none was touched: the same program serves the calls
            # keyed without `.grad` from now on (moved to that key).
            self._grads_unused = True
            del self._programs[key]
            layout = tuple(x for x in layout if not x[0].endswith(".grad"))
            self._programs[(layout,) + key[1:]] = prog
        self._write_back(prog, coll, storages, values, new_values)
        results = [wrap(o) for o in outs]
        self._record(prog, coll, storages, inputs, results)
        it = iter(results)
        leaves = [next(it) if s is _ARRAY else s for s in prog.out_leaves]
        return jax.tree_util.tree_unflatten(prog.out_tree, leaves)

    def _record(self, prog, coll, storages, inputs, results):
        """With grad mode on and a lifted tensor requiring grad, the whole call is one node
        of the eager tape (so `compiled_model(x)` then `loss.backward()` works)."""
        from .autograd import _engine
        from .autograd._edges import edge_of
        from .autograd._fn_node import FnNode
        from .autograd._node import DIFF_DTYPES

        if not _engine._grad_enabled() or not results or prog.trains:
            return  # a training step ran its own backward: its outputs end the graph
        owner = {}
        index = {id(st): i for i, st in enumerate(storages)}
        for e in coll.entries:
            t = e.get()
            # (the call may have rebound a path to a tensor that was not one of its inputs)
            k = index.get(id(t._storage)) if t is not None and t._rg else None
            if k is not None and (k not in owner or not t._chain):
                owner[k] = t
        if not owner:
            return
        mask = tuple(k in owner and not owner[k]._chain for k in range(len(storages)))
        if not any(mask):
            return
        values, lrs, rng, positions = inputs
        edges = tuple(edge_of(owner[k]) if m else None for k, m in enumerate(mask))
        edges += (None,) * (len(lrs) + 1)
        node = FnNode(
            "CompiledFunctionBackward",
            prog.jitted,
            (tuple(values), tuple(lrs), rng, positions),
            (mask, False, False, False),
            edges,
            (),
            len(results) + len(prog.post_storages),
            epos=(0, len(values), len(values) + len(lrs), len(edges)),
        )
        for i, r in enumerate(results):
            if r._array.dtype in DIFF_DTYPES:
                r._rg = True
                r.grad_fn = node
                if i:
                    from ._tensor import AutogradMeta

                    r._grad_state = AutogradMeta(i)

    # -- running -----------------------------------------------------------

    def _run(self, prog, coll, storages, lrs_slots, steps, inputs, args, kwargs, skip_grads):
        if prog.jitted is not None and not self._retraces(prog):
            for effect in prog.effects:
                effect()
        if prog.jitted is None:
            before = _state_paths(e.path for e in coll.entries if e.get() is not None)
            prog.jitted = self._trace(
                prog, coll, storages, lrs_slots, steps, args, kwargs, False, skip_grads
            )
            traced = prog.jitted.trace(*inputs)  # (a call of `prog.jitted` reuses it)
            quick = _QUICK_ONCE and prog.world is None
            if quick and _state_paths(e.path for e, _ in prog.post) != before:
                prog.once = _compile_once(traced)
            if prog.once is not None:
                return prog.once(*inputs)
        elif prog.once is not None:
            # The key of a call that created state came back (a step whose `.grad` is set to
            # None outside it): from now on it is a steady program, optimised in full.
            prog.once = None
        elif self._retraces(prog):
            # A training step replaces every buffer it reads: donate them, so a step does not
            # hold two copies of the model and optimizer state (XLA's CPU backend cannot).
            prog.donating = True
            prog.jitted = self._trace(
                prog, coll, storages, lrs_slots, steps, args, kwargs, True, skip_grads
            )
        return prog.jitted(*inputs)

    @staticmethod
    def _retraces(prog) -> bool:
        """Whether this call of a traced program traces it again, donating its inputs."""
        return (
            prog.once is None
            and prog.trains
            and not prog.donating
            and _DONATE
            and jax.default_backend() != "cpu"
            and prog.world is None  # (an SPMD step's inputs are fresh global arrays)
        )

    def _trace(self, prog, coll, storages, lrs_slots, steps, args, kwargs, donate, skip_grads):
        from .autograd import _engine

        fn = self._fn

        def pure(values, lrs, rng, positions):
            self.trace_count += 1
            calls = _engine.backward_calls[0]
            touches = _tensor_mod.grad_touches[0]
            for st, v in zip(storages, values):
                st.value = v
                st.gen += 1
            for (g, k), v in zip(lrs_slots, lrs):
                g[k] = v
            concrete = [s.params for s in steps]
            for s, p in zip(steps, positions):
                s.params = p  # traced while the function runs
            _compiling[0] = True
            prog.effects = _effects[0] = []
            source = _random.trace_keys(rng)
            unchecked = _guard_unlifted()
            try:
                out = fn(*args, **kwargs)
            finally:
                _compiling[0] = False
                _effects[0] = None
                _dispatch.record = unchecked
                source.close()
                for (g, k), v in zip(lrs_slots, lrs_concrete):
                    g[k] = v
                for s, p in zip(steps, concrete):
                    s.params = p
            prog.trains = _engine.backward_calls[0] != calls
            if skip_grads and (prog.trains or _tensor_mod.grad_touches[0] != touches):
                raise _GradsTouched
            if prog.trains:
                prog.effects = []  # its backward ran inside: the effects' state is its end
            leaves, tree = jax.tree_util.tree_flatten(out, is_leaf=lambda x: isinstance(x, Tensor))
            if prog.world is not None and not prog.trains and _engine._grad_enabled():
                if any(isinstance(x, Tensor) and x.requires_grad for x in leaves):
                    # Its backward would be a program of every process, run from the tape.
                    raise GraphBreak(
                        "a forward with collectives over several processes whose outputs "
                        "require grad (its backward runs outside the compiled function)"
                    )
            prog.out_tree = tree
            prog.out_leaves = [_ARRAY if isinstance(x, Tensor) else x for x in leaves]
            outs = [x._array for x in leaves if isinstance(x, Tensor)]
            post = _discover(fn, args, kwargs)
            post_entries, post_storages, seen = [], [], {}
            for e in post.entries:
                t = e.get()
                if t is None or (skip_grads and e.path.endswith(".grad")):
                    continue
                sid = id(t._storage)
                if sid not in seen:
                    seen[sid] = len(post_storages)
                    post_storages.append(t._storage)
                post_entries.append((e, seen[sid]))
            prog.post = post_entries
            prog.post_storages = post_storages
            return outs, [s.value for s in post_storages]

        lrs_concrete = [g[k] for g, k in lrs_slots]
        if prog.world is not None:
            return _spmd.SpmdProgram(pure, prog.world)
        return jax.jit(pure, donate_argnums=(0,) if donate else ())

    def _write_back(self, prog, coll, storages, old_values, new_values):
        # `prog.post` was found while tracing, on the objects of the traced call: a path this
        # call reaches too (its arguments, above all) is written through this call's entry.
        current = {e.path: e for e in coll.entries}
        live = {}
        for entry, k in prog.post:
            if k in live:
                continue
            entry = current.get(entry.path, entry)
            t = entry.get()
            if t is None:
                t = wrap(new_values[k])
                entry.set(t)
            live[k] = t._storage
        written = set()
        for k, st in live.items():
            st.value = new_values[k]
            st.gen += 1
            written.add(id(st))
        for st, v in zip(storages, old_values):
            if id(st) not in written and isinstance(st.value, jax.core.Tracer):
                st.value = v  # dropped by the call: keep what it had
                st.gen += 1

    def _restore(self, coll, tensors, storages, values, lrs_slots, lrs):
        """After a failed trace: every path back to the tensor it had, with its value, and
        the Python state a trace changes (DDP's reducer) back to where it was."""
        for obj in list(ABORT_HOOKS):
            obj.trace_aborted()
        for st, v in zip(storages, values):
            st.value = v
            st.gen += 1
        for e, t in zip(coll.entries, tensors):
            if e.set is not None and e.get() is not t:
                try:
                    e.set(t)
                except (AttributeError, KeyError, TypeError):
                    pass
        for (g, k), v in zip(lrs_slots, lrs):
            g[k] = v

    # -- inspection --------------------------------------------------------

    def jaxpr(self, *args, **kwargs):
        """The jaxpr of the program a call with these arguments runs."""
        return self._lowered(args, kwargs, lambda j, *a: j.trace(*a).jaxpr)

    def hlo(self, *args, **kwargs) -> str:
        """The StableHLO text of the program a call with these arguments runs."""
        return self._lowered(args, kwargs, lambda j, *a: j.lower(*a).as_text())

    def _lowered(self, args, kwargs, how):
        self(*args, **kwargs)  # make sure the program for this state exists
        coll = _discover(self._fn, args, kwargs)
        prog = next(reversed(self._programs.values()))
        storages, seen = [], set()
        skip_grads = self._grads_unused and not coll.optimizers
        tensors = [
            None if skip_grads and e.path.endswith(".grad") else e.get() for e in coll.entries
        ]
        for t in tensors:
            if t is not None and id(t._storage) not in seen:
                seen.add(id(t._storage))
                storages.append(t._storage)
        lrs = tuple(float(g["lr"]) for opt in coll.optimizers for g in opt.param_groups)
        # The same argument structure as a call: jax reuses that trace, so the function's
        # Python (and its side effects) does not run again.
        return how(
            prog.jitted,
            tuple(s.value for s in storages),
            lrs,
            _random.default_generator.next_key(),
            tuple(s.params for s in _view_steps(tensors)),
        )


# The first call of a training step creates optimizer state (and `.grad`), so the second call
# has other inputs and needs its own program: the first call's program runs once. On CPU it
# is compiled with XLA's backend optimisation off (about half the compile time; elementwise
# code runs several times slower, which one run of a small program does not feel), unless
# the program moves much data. `JTORCH_QUICK_FIRST_STEP=0` compiles it in full.
_QUICK_ONCE = os.environ.get("JTORCH_QUICK_FIRST_STEP", "1") != "0"
_QUICK_OPTIONS = {"xla_backend_optimization_level": 0}
_QUICK_MAX_BYTES = 256 << 20


def _platform(values) -> str:
    """The platform a call's state lives on (the default backend's when it has none)."""
    for v in values:
        return next(iter(v.devices())).platform
    return jax.default_backend()


def _state_paths(paths) -> set:
    """The paths of state other than `.grad`: a call that creates `.grad` alone may be one
    whose `.grad` is set to None outside it, so that it comes back with the same key."""
    return {p for p in paths if not p.endswith(".grad")}


def _compile_once(traced):
    """A quickly compiled executable for a call that runs once, or None (compile in full)."""
    if jax.default_backend() != "cpu":
        return None
    lowered = traced.lower()
    try:
        moved = float((lowered.cost_analysis() or {}).get("bytes accessed", float("inf")))
    except Exception:  # noqa: BLE001 (no cost model for this program: compile in full)
        return None
    if moved > _QUICK_MAX_BYTES:
        return None
    return lowered.compile(compiler_options=_QUICK_OPTIONS)


def _view_steps(tensors) -> list:
    """The view steps of the reachable tensors that have positions (in discovery order, a
    step once per tensor holding it): their params are inputs of the program."""
    return [s for t in tensors if t is not None for s in t._chain if s.params]


def _guard_unlifted():
    """While this thread traces, an op on a tensor that requires grad but is not an input of
    the program (a concrete array: discovery did not reach it) breaks the graph: compiled,
    its gradient would be lost silently. Returns the hook to put back."""
    inner = _dispatch.record
    if inner is None:
        return inner
    thread = threading.get_ident()

    def record(op, fn, slot_values, arrays, result):
        if threading.get_ident() == thread:
            for v in slot_values:
                for t in v if isinstance(v, (tuple, list)) else (v,):
                    if (
                        isinstance(t, Tensor)
                        and t._rg
                        and not isinstance(t._array, jax.core.Tracer)
                    ):
                        raise GraphBreak(
                            f"{op.name}() uses a tensor that requires grad but is not "
                            "reachable from the function's arguments, closure, globals or "
                            "self, so a compiled program would lose its gradient"
                        )
        inner(op, fn, slot_values, arrays, result)

    _dispatch.record = record
    return inner


def _user_frame(e) -> str:
    frames = traceback.extract_tb(e.__traceback__)
    for fr in reversed(frames):
        if "/jtorch/" not in fr.filename and "/jax/" not in fr.filename:
            return f"{fr.filename}:{fr.lineno} ({fr.line})"
    return "<unknown>"


def compile(
    model=None,
    *,
    fullgraph: bool = False,
    dynamic=None,
    backend="inductor",
    mode=None,
    options=None,
    disable: bool = False,
):
    """Matches `torch.compile`: the function (or module) runs as one jax.jit program.

    Usable as `compile(fn)`, `@compile`, `@compile(fullgraph=True)`; a module comes back
    wrapped in `torch._dynamo.OptimizedModule`, as in PyTorch. `dynamic`, `backend`,
    `mode` and `options` are accepted; programs are specialised to shapes (a new shape
    traces again).
    """
    if model is None:
        return functools.partial(
            compile,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    if _is_module(model):
        # As in PyTorch: a wrapper (state_dict keys `_orig_mod.*`); `model.compile()` is
        # the in-place form.
        from ._dynamo.eval_frame import OptimizedModule

        return OptimizedModule(
            model,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    return CompiledFunction(
        model,
        fullgraph=fullgraph,
        dynamic=dynamic,
        mode=mode,
        backend=backend,
        options=options,
        disable=disable,
    )


def reset() -> None:
    """Matches `torch._dynamo.reset`: forget compiled programs, jtorch's caches of them and
    jax's (the persistent cache on disk is kept)."""
    from . import _programs

    _programs.clear()
    jax.clear_caches()
