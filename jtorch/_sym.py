"""Symbolic-shape helpers (`torch.sym_int`, `sym_max`, ...): jtorch's shapes are concrete,
so these are PyTorch's behaviour on plain Python numbers."""

import math

import numpy as np

_SYM_NUMBERS = (np.integer, np.floating, int, float)


def sym_not(a):
    return not a


def sym_float(a):
    return float(a)


def sym_int(a):
    return int(a)


def _check_sym_numbers(a, b) -> bool:
    for x in (a, b):
        if not isinstance(x, _SYM_NUMBERS):
            raise AssertionError(f"expected {_SYM_NUMBERS}, got {type(x)}")
    return isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating))


def sym_max(a, b):
    """Matches `torch.sym_max`: a float when either argument is one."""
    as_float = _check_sym_numbers(a, b)
    return float(max(a, b)) if as_float else max(a, b)


def sym_min(a, b):
    """Matches `torch.sym_min`: a float when either argument is one."""
    as_float = _check_sym_numbers(a, b)
    return float(min(a, b)) if as_float else min(a, b)


def sym_ite(b, t, f):
    """Matches `torch.sym_ite`: `t if b else f`."""
    if not isinstance(b, bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(*args):
    """Matches `torch.sym_sum`: `sum(args)`, also for one list or tuple."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return sum(args)
