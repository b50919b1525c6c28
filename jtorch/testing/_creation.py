"""`torch.testing.make_tensor`: random tensors in PyTorch's documented default ranges.

The values follow PyTorch's distributions (uniform floats, uniform integers) but come
from jax's PRNG, so the streams differ from PyTorch's for the same seed.
"""

from __future__ import annotations

import collections.abc
import math
import warnings

from .. import _dtype

__all__ = ["make_tensor"]

_INTEGRAL = (
    _dtype.uint8,
    _dtype.int8,
    _dtype.int16,
    _dtype.int32,
    _dtype.int64,
    _dtype.uint16,
    _dtype.uint32,
    _dtype.uint64,
)
_FLOATING = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)
_COMPLEX = (_dtype.complex32, _dtype.complex64, _dtype.complex128)


def _bounds(low, high, dtype, lowest, highest, default_low, default_high):
    """`[low, high)` checked and clamped to what `dtype` holds, as PyTorch does."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING + _COMPLEX:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
            "types is deprecated since 2.1 and will be removed in 2.3. Use "
            "`torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype is _dtype.bool or dtype in _INTEGRAL:
        # Both ceiled: `low` stays inside the interval, and randint's `high` is exclusive.
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform_(t, low, high):
    from .. import finfo

    if high - low >= finfo(t.dtype).max:  # the width itself would overflow
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(
    *shape,
    dtype: _dtype.dtype,
    device,
    low=None,
    high=None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
):
    """Matches `torch.testing.make_tensor`: values uniform in `[low, high)`, by default
    `[0, 2)` for bool, `[0, 10)` unsigned, `[-9, 10)` signed integers, `[-9, 9)` floating and
    complex (both parts)."""
    from .. import empty, finfo, iinfo, randint, view_as_real, where

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            f"The parameters `noncontiguous` and `memory_format` are mutually "
            f"exclusive, but got noncontiguous={noncontiguous} and "
            f"memory_format={memory_format}"
        )
    if requires_grad and (dtype is _dtype.bool or dtype in _INTEGRAL):
        raise ValueError(
            f"`requires_grad=True` is not supported for boolean and integral "
            f"dtypes, but got dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        # Twice as wide in the last dim; every other column is kept below.
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _dtype.bool:
        low, high = _bounds(low, high, dtype, 0, 2, 0, 2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = iinfo(dtype)
        # randint cannot draw int64's maximum, so int64's interval ends one below it.
        low, high = _bounds(
            low, high, dtype, info.min, info.max + (1 if dtype is not _dtype.int64 else 0), -9, 10
        )
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING + _COMPLEX:
        info = finfo(dtype)
        low, high = _bounds(low, high, dtype, info.min, info.max, -9, 9)
        result = empty(shape, device=device, dtype=dtype)
        _uniform_(view_as_real(result) if dtype in _COMPLEX else result, low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by "
            "torch.testing.make_tensor(). To request support, file an issue at: "
            "https://github.com/pytorch/pytorch/issues"
        )
    if noncontiguous:
        result = result[..., 1::2]  # offset by one to catch offset bugs too
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        # Complex zeros become `tiny + 0j`, as PyTorch's code does (its docs say both parts).
        tiny = 1 if (dtype is _dtype.bool or dtype in _INTEGRAL) else finfo(dtype).tiny
        result.copy_(where(result == 0, tiny, result))
    if dtype in _FLOATING + _COMPLEX:
        result.requires_grad = requires_grad
    return result
