"""What a call does under PyTorch and under jtorch, compared: its value, or the exception it
raises (type name and message)."""

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def outcome(fn):
    """`fn()`'s value, or (exception type name, message) when it raises."""
    try:
        return fn()
    except Exception as e:  # the exception is the outcome being compared
        return type(e).__name__, str(e)


def same_outcome(fn):
    """`fn(lib)` for torch and for jtorch: asserts the outcomes are equal, returns torch's."""
    t, j = outcome(lambda: fn(torch)), outcome(lambda: fn(jtorch))
    assert t == j, f"torch {t!r} vs jtorch {j!r}"
    return t
