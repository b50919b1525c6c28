"""`torch._check*`, `torch._assert` and the symbolic scalar types (`torch.SymInt`...).

PyTorch's checks raise when a condition is False (the message, when given, is a callable
returning it); under tracing they also teach the compiler facts about sizes, which jtorch's
compiler (shapes are concrete) does not need. jtorch never makes symbolic scalars:
`SymInt`, `SymFloat` and `SymBool` exist for isinstance checks and annotations.
"""

from __future__ import annotations

import builtins
import warnings

__all__ = [
    "_check",
    "_check_with",
    "_check_index",
    "_check_value",
    "_check_type",
    "_check_not_implemented",
    "_check_tensor_all",
    "_check_tensor_all_with",
    "_check_is_size",
    "_assert",
    "SymInt",
    "SymFloat",
    "SymBool",
]

_DEFAULT = (
    "Expected cond to be True, but got False. (Could this error message be improved? "
    "If so, please report an enhancement request to PyTorch.)"
)


def _check_with(error_type, cond, message=None) -> None:
    """Matches `torch._check_with`: raises `error_type(message())` when `cond` is False."""
    if not isinstance(cond, (builtins.bool, SymBool)):
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if message is None:
        text = _DEFAULT
    else:
        if not callable(message):
            raise TypeError("message must be a callable")
        text = str(message())
    raise error_type(text)


def _check(cond, message=None) -> None:
    """Matches `torch._check`: RuntimeError when `cond` is False."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond, message=None) -> None:
    _check_with(IndexError, cond, message)


def _check_value(cond, message=None) -> None:
    _check_with(ValueError, cond, message)


def _check_type(cond, message=None) -> None:
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond, message=None) -> None:
    _check_with(NotImplementedError, cond, message)


def _check_tensor_all_with(error_type, cond, message=None) -> None:
    """Matches `torch._check_tensor_all_with`: every element of the bool tensor is True."""
    from . import _dtype
    from ._tensor import Tensor

    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype is not _dtype.bool:
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    _check_with(error_type, builtins.bool(cond.all().item()), message)


def _check_tensor_all(cond, message=None) -> None:
    _check_tensor_all_with(RuntimeError, cond, message)


def _check_is_size(i, message=None, *, max=None) -> None:  # noqa: A002 - PyTorch's name
    """Matches `torch._check_is_size` (deprecated there): `0 <= i (<= max)`."""
    warnings.warn(
        "_check_is_size will be removed in a future PyTorch release along with "
        "guard_size_oblivious.     Use _check(i >= 0) instead.",
        FutureWarning,
        stacklevel=2,
    )
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


def _assert(condition, message) -> None:
    """Matches `torch._assert`: a traceable `assert`."""
    if type(condition) is not bool and hasattr(condition, "__torch_function__"):
        from .overrides import handle_torch_function, has_torch_function

        if has_torch_function((condition,)):
            return handle_torch_function(_assert, (condition,), condition, message)
    assert condition, message


class SymInt:
    """Matches the type `torch.SymInt` (a symbolic int of a traced program); jtorch's
    programs see concrete ints, so no value is ever of this type."""

    def __init__(self, node):
        raise TypeError("jtorch does not make symbolic integers: shapes are concrete ints")


class SymFloat:
    """Matches the type `torch.SymFloat` (see `SymInt`)."""

    def __init__(self, node):
        raise TypeError("jtorch does not make symbolic floats")


class SymBool:
    """Matches the type `torch.SymBool` (see `SymInt`)."""

    def __init__(self, node):
        raise TypeError("jtorch does not make symbolic bools")


for _cls in (SymInt, SymFloat, SymBool):
    _cls.__module__ = "torch"
