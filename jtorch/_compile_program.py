"""One program of `jtorch.compile` (DESIGN 7, steps 2-3): what keys it, what guards its
trace, and how it is compiled.

`_arg_signature` is the arguments' part of the cache key; `_Program` is one cached entry
(the jitted function, its post-call state, its effects); `_guard_unlifted` breaks the graph
when the traced function uses a tensor discovery did not lift; a state-creating first call
is compiled quickly (`_compile_once`), as it runs once.
"""

from __future__ import annotations

import inspect
import os
import threading
import traceback

import jax

from ._ops import _dispatch
from ._tensor import Tensor
from ._tracing import GraphBreak, hashable


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
    return ("v", hashable(x))


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
