"""`torch.fx.experimental.symbolic_shapes`: questions about sizes that may be symbolic.

In jtorch sizes are always concrete Python ints (programs are specialised to shapes), so
each question has the answer PyTorch gives for a concrete value: `guard_or_false(x)` is
`bool(x)`, an int has no free symbols, and so on.
"""

from __future__ import annotations

__all__ = [
    "guard_or_false",
    "guard_or_true",
    "statically_known_true",
    "definitely_true",
    "definitely_false",
    "guard_size_oblivious",
    "sym_eq",
    "free_symbols",
    "free_unbacked_symbols",
    "has_free_symbols",
    "is_concrete_int",
    "is_concrete_bool",
    "expect_true",
    "has_hint",
    "hint_int",
    "ShapeEnv",
    "GuardOnDataDependentSymNode",
]


def guard_or_false(a) -> bool:
    return bool(a)


def guard_or_true(a) -> bool:
    return bool(a)


def statically_known_true(x) -> bool:
    return bool(x)


def statically_known_false(x) -> bool:
    return not bool(x)


def definitely_true(a) -> bool:
    return bool(a)


def definitely_false(a) -> bool:
    return not bool(a)


def guard_size_oblivious(expr) -> bool:
    return bool(expr)


def expect_true(a, skip: int = 0) -> bool:
    return bool(a)


def sym_eq(x, y) -> bool:
    """Matches `sym_eq`: elementwise equality of (nested) sequences of sizes."""
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        return len(x) == len(y) and all(sym_eq(a, b) for a, b in zip(x, y))
    return x == y


def free_symbols(val) -> set:
    return set()


def free_unbacked_symbols(x) -> set:
    return set()


def has_free_symbols(val) -> bool:
    return False


def has_free_unbacked_symbols(x) -> bool:
    return False


def is_concrete_int(a) -> bool:
    return isinstance(a, int)


def is_concrete_bool(a) -> bool:
    return isinstance(a, bool)


def has_hint(a) -> bool:
    return True


def hint_int(a, fallback=None) -> int:
    return int(a)


class GuardOnDataDependentSymNode(RuntimeError):
    """Matches the exception type PyTorch raises for a guard on a data-dependent size."""


class ShapeEnv:
    """The type `ShapeEnv` (the symbolic-shape environment of PyTorch's tracer); jtorch has
    none, so making one raises."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "jtorch has no symbolic shapes: sizes are concrete ints, so there is no ShapeEnv"
        )
