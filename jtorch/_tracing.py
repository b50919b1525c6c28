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
