"""`torch.testing.assert_close` and the legacy `assert_allclose`.

The inputs are walked as PyTorch walks them (sequences and mappings elementwise,
strings as leaves), each pair of leaves is matched to a comparison (None, bool,
number, tensor-like), and the first failure is raised with PyTorch's message.
Values are compared on the host with numpy, in the tensors' own dtype, so the
reported differences are the numbers PyTorch prints.
"""

from __future__ import annotations

import cmath
import collections.abc
import warnings

import numpy as np

from .. import _dtype
from .._tensor import Tensor

__all__ = ["assert_close", "assert_allclose"]

# {dtype: (rtol, atol)}: PyTorch's default tolerances; other dtypes compare exactly.
_PRECISIONS = {
    _dtype.float16: (0.001, 1e-5),
    _dtype.bfloat16: (0.016, 1e-5),
    _dtype.float32: (1.3e-6, 1e-5),
    _dtype.float64: (1e-7, 1e-7),
    _dtype.complex32: (0.001, 1e-5),
    _dtype.complex64: (1.3e-6, 1e-5),
    _dtype.complex128: (1e-7, 1e-7),
}
# Python numbers compare with the tolerances of the dtype they become.
_NUMBER_DTYPES = {int: _dtype.int64, float: _dtype.float64, complex: _dtype.complex128}


class _Failure(Exception):
    """A failed comparison: the exception type and message to raise, and where it was."""

    def __init__(self, kind: type, msg: str, id: tuple = ()):
        super().__init__(msg)
        self.kind, self.msg, self.id = kind, msg, id

    def to_error(self, msg=None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.id:
            text += "\n\nThe failure occurred for item " + "".join(str([i]) for i in self.id)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """This comparison does not handle these inputs; the next one is tried."""


def _tolerances(dtypes, rtol, atol, id, precisions=_PRECISIONS):
    if (rtol is None) != (atol is None):
        raise _Failure(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}.",
            id,
        )
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*[precisions.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _mismatch_msg(what: str, extra: str, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        text = (
            f"{kind.title()} difference: {diff}"
            if idx is None
            else f"Greatest {kind} difference: {diff} at index {idx}"
        )
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{what} are not {'equal' if equality else 'close'}!\n\n{extra}\n"
    msg += line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(
        "Scalars",
        f"Expected {expected} but got {actual}.",
        abs_diff,
        None,
        atol,
        rel_diff,
        None,
        rtol,
    )


# ---------------------------------------------------------------------------
# Leaf comparisons: each builds from a pair of leaves (or raises _Unsupported) and
# returns a function that raises _Failure when the leaves differ.


def _none_pair(actual, expected, id, **_):
    if actual is not None and expected is not None:
        raise _Unsupported

    def compare():
        if not (actual is None and expected is None):
            raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id)

    return compare


def _bool_pair(actual, expected, id, **_):
    if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)

    def compare():
        if actual is not expected:
            raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id)

    return compare


def _number_pair(
    actual, expected, id, rtol=None, atol=None, equal_nan=False, check_dtype=False, **_
):
    if not all(isinstance(x, (int, float, complex, np.number)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances(
        [_NUMBER_DTYPES.get(type(x), _dtype.int64) for x in (actual, expected)], rtol, atol, id
    )

    def compare():
        if check_dtype and type(actual) is not type(expected):
            raise _Failure(
                AssertionError,
                f"The (d)types do not match: {type(actual)} != {type(expected)}.",
                id,
            )
        if actual == expected:
            return
        if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        diff = abs(actual - expected)
        if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
            return
        raise _Failure(AssertionError, _scalar_msg(actual, expected, rtol, atol), id)

    return compare


def _tensor_pair(
    actual,
    expected,
    id,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    **_,
):
    from .._ops.creation import as_tensor

    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    try:
        actual, expected = (
            x if isinstance(x, Tensor) else as_tensor(x) for x in (actual, expected)
        )
    except Exception:
        raise _Unsupported from None
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, id)

    def fail(attr, a, e):
        raise _Failure(
            AssertionError, f"The values for attribute '{attr}' do not match: {a} != {e}.", id
        )

    def compare():
        if actual.shape != expected.shape:
            fail("shape", actual.shape, expected.shape)
        if check_stride and actual.stride() != expected.stride():
            fail("stride()", actual.stride(), expected.stride())
        if check_device and actual.device != expected.device:
            fail("device", actual.device, expected.device)
        if check_dtype and actual.dtype != expected.dtype:
            fail("dtype", actual.dtype, expected.dtype)
        if "meta" in (actual.device.type, expected.device.type):
            return
        _compare_values(actual, expected, rtol, atol, equal_nan, id)

    return compare


def _common_dtype(a: _dtype.dtype, b: _dtype.dtype) -> _dtype.dtype:
    if a is b:
        return a
    # As PyTorch: unsigned types wider than uint8 compare as int64.
    wide = (_dtype.uint16, _dtype.uint32, _dtype.uint64)
    a, b = (_dtype.int64 if d in wide else d for d in (a, b))
    return _dtype.promote_types(a, b)


def _host(t: Tensor, dt: _dtype.dtype) -> np.ndarray:
    arr = np.asarray(t.detach()._array)
    return arr if arr.dtype == dt.np else arr.astype(dt.np)


def _isclose(a: np.ndarray, e: np.ndarray, rtol, atol, equal_nan) -> np.ndarray:
    """`torch.isclose` on the host, in the inputs' dtype."""
    inexact = np.issubdtype(a.dtype, np.inexact)
    with np.errstate(all="ignore"):
        close = a == e
        if equal_nan and inexact:
            close |= np.isnan(a) & np.isnan(e)
        if rtol == 0 and atol == 0:
            return close
        if a.dtype == np.bool_:
            a, e = (x.astype(_dtype.get_default_dtype().np) for x in (a, e))
        error = np.abs(a - e) if inexact else np.abs(a.astype(np.float64) - e)
        allowed = atol + np.abs(rtol * e)
        return close | (np.isfinite(error) & (error <= allowed))


def _compare_values(actual, expected, rtol, atol, equal_nan, id) -> None:
    dt = _common_dtype(actual.dtype, expected.dtype)
    a, e = _host(actual, dt), _host(expected, dt)
    matches = _isclose(a, e, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Failure(AssertionError, _scalar_msg(a.item(), e.item(), rtol, atol), id)
    total = matches.size
    bad = total - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    if not (dt.is_floating_point or dt.is_complex):
        a, e = a.astype(np.int64), e.astype(np.int64)
    a, e, hit = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[hit] = 0
        # PyTorch divides integer differences in the default float dtype.
        rel_diff = (abs_diff / np.abs(e)).astype(
            abs_diff.dtype if abs_diff.dtype.kind == "f" else _dtype.get_default_dtype().np
        )
        rel_diff[hit] = 0

    def greatest(x):
        i = int(np.argmax(x))  # the first NaN, else the first maximum, as torch.max
        return x[i].item(), tuple(int(k) for k in np.unravel_index(i, matches.shape))

    (abs_v, abs_i), (rel_v, rel_i) = greatest(abs_diff), greatest(rel_diff)
    raise _Failure(
        AssertionError,
        _mismatch_msg("Tensor-likes", extra, abs_v, abs_i, atol, rel_v, rel_i, rtol),
        id,
    )


_PAIRS = (_none_pair, _bool_pair, _number_pair, _tensor_pair)


def _originate(actual, expected, id: tuple, options: dict) -> list:
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if (
        isinstance(actual, seq)
        and not isinstance(actual, str)
        and isinstance(expected, seq)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            raise _Failure(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                id,
            )
        return [
            c
            for i in range(len(actual))
            for c in _originate(actual[i], expected[i], (*id, i), options)
        ]
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys, other = set(actual.keys()), set(expected.keys())
        if keys != other:
            raise _Failure(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(other - keys)}\n"
                f"Additional keys in the actual mapping: {sorted(keys - other)}",
                id,
            )
        try:
            keys = sorted(keys)
        except Exception:  # noqa: BLE001 - unorderable keys keep the set's order, as PyTorch
            pass
        return [c for k in keys for c in _originate(actual[k], expected[k], (*id, k), options)]
    for pair in _PAIRS:
        try:
            return [pair(actual, expected, id, **options)]
        except _Unsupported:
            continue
    raise _Failure(
        TypeError,
        f"No comparison pair was able to handle inputs of type "
        f"{type(actual)} and {type(expected)}.",
        id,
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg=None,
) -> None:
    """Matches `torch.testing.assert_close`: tensors, numbers, numpy arrays, and sequences and
    mappings of them, with PyTorch's default tolerances per dtype and its messages."""
    __tracebackhide__ = True
    options = dict(
        allow_subclasses=allow_subclasses,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=check_device,
        check_dtype=check_dtype,
        check_layout=check_layout,
        check_stride=check_stride,
    )
    try:
        comparisons = _originate(actual, expected, (), options)
    except _Failure as failure:
        raise failure.to_error() from None
    for compare in comparisons:
        try:
            compare()
        except _Failure as failure:
            raise failure.to_error(msg) from None


# The legacy function's defaults, looser than assert_close's.
_ALLCLOSE_PRECISIONS = {
    _dtype.float16: (1e-3, 1e-3),
    _dtype.float32: (1e-4, 1e-5),
    _dtype.float64: (1e-5, 1e-8),
}


def assert_allclose(
    actual,
    expected,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Matches `torch.testing.assert_allclose` (deprecated there, and here)."""
    from .._ops.creation import tensor

    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed "
        "in a future release. Please use `torch.testing.assert_close()` instead. You can "
        "find detailed upgrade instructions in "
        "https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(
            [actual.dtype, expected.dtype], None, None, (), _ALLCLOSE_PRECISIONS
        )
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )
