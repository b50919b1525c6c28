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

Step 1 is `_compile_state`; the cache key of the arguments, a program's record, its guard
against unlifted tensors and its quick first compile are `_compile_program`; this module is
the compiled function itself (`CompiledFunction`) and `compile()`.
"""

from __future__ import annotations

import functools
import os
import warnings

import jax

from . import _random, _spmd
from . import _tensor as _tensor_mod
from ._compile_program import (
    _ARRAY,
    _QUICK_ONCE,
    _arg_signature,
    _compile_once,
    _guard_unlifted,
    _platform,
    _Program,
    _state_paths,
    _user_frame,
    _view_steps,
)
from ._compile_state import _discover, _is_module
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
# The compiled function


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
        lrs_slots = coll.scalars
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
        lrs = tuple(float(g[k]) for g, k in coll.scalars)
        # The same argument structure as a call: jax reuses that trace, so the function's
        # Python (and its side effects) does not run again.
        return how(
            prog.jitted,
            tuple(s.value for s in storages),
            lrs,
            _random.default_generator.next_key(),
            tuple(s.params for s in _view_steps(tensors)),
        )


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
