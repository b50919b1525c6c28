"""The state of a `jtorch.compile` trace, for the code that runs inside one.

Library code (DDP's reducer, the collectives) asks whether it is being traced, breaks the
graph, and registers Python that a cached program would skip, through this module: it sits
below everything that `jtorch.compile` discovers state in (modules, optimizers), so those
can reach it without an import circle.
"""

from __future__ import annotations

import weakref

__all__ = ["ABORT_HOOKS", "GraphBreak", "each_call", "is_compiling"]

_compiling = [False]  # True while this process traces a compiled function

_effects: list = [None]  # while tracing, the traced program's `each_call` effects

# Objects whose Python state a trace changes (DDP's reducer, armed in `forward` and
# advanced by backward's hooks): `trace_aborted()` is called when a trace fails, so that the
# retry starts from the state before it.
ABORT_HOOKS: weakref.WeakSet = weakref.WeakSet()


def is_compiling() -> bool:
    """Matches `torch.compiler.is_compiling`: True while a compiled function is traced."""
    return _compiling[0]


def each_call(effect) -> None:
    """Called while a function is traced: `effect()` runs again before every later call of
    the compiled program, whose Python does not run (DDP arms its reducer for the backward
    that follows a compiled forward). A trace whose function runs backward itself drops
    them: its program holds what they prepare for."""
    if _effects[0] is not None:
        _effects[0].append(effect)


class GraphBreak(RuntimeError):
    """Raised inside a trace by code that must run eagerly (`jtorch.compiler.disable`)."""


class Lifted:
    """What an object tells `jtorch.compile` its state is (its `_lifted_state(prefix)`).

    `tensors`: (path, tensor, get, set, grad) for each tensor the object holds, with a way to
    read and replace it on the live object (`set` None: read-only), `grad` True where its
    `.grad` is state too (parameters, buffers; not an optimizer's moments). `facts`: (path,
    kind, value) for the Python values that shape a program (a `training` flag, an optimizer
    option). `scalars`: (dict, key) places of Python numbers that become program inputs, not
    keys (a learning rate). `objects`: the objects covered (reached again, they add nothing).
    Modules and optimizers implement it (nn/modules/_lift.py, optim/_lift.py); the compiler
    reads nothing else of them.
    """

    __slots__ = ("objects", "tensors", "facts", "scalars")

    def __init__(self):
        self.objects: list = []
        self.tensors: list = []
        self.facts: list = []
        self.scalars: list = []


def hashable(v):
    """`v` as a value a program's key can hold (containers as tuples, others by identity)."""
    if isinstance(v, (list, tuple)):
        return tuple(hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((str(k), hashable(x)) for k, x in v.items()))
    try:
        hash(v)
        return v
    except TypeError:
        return ("id", id(v))
