"""Window functions: `torch.signal.windows.*` and the older `torch.*_window` factories.

Windows are factories (no tensor inputs), so they are composites: the values are computed
in float64 with numpy and cast to the requested dtype, then the shared factory epilogue
(`creation.finish`) places them and sets `requires_grad`. PyTorch evaluates the formulas in
the requested dtype; float64-then-cast differs from it only in the last float32 ulp.
"""

from __future__ import annotations

import collections.abc
import math

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._layout import strided
from ._registry import composite
from .creation import finish


def _array(values, dtype, device, requires_grad):
    return finish(
        jnp.asarray(np.asarray(values, np.float64).astype(dtype.np)), None, device, requires_grad
    )


# ---------------------------------------------------------------------------
# torch.signal.windows


def _checks(name, M, dtype, layout):
    """PyTorch's `_window_function_checks` (ValueError for every failure)."""
    dtype = dtype if dtype is not None else _dtype.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout != strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _span(M, sym):
    """The denominator that spaces a window: M - 1 when symmetric, M when periodic."""
    return M if not sym and M > 1 else M - 1


def _trivial(M, dtype, device, requires_grad):
    """The M == 0 (empty) and M == 1 (a single one) windows, or None."""
    if M == 0:
        return _array(np.zeros((0,)), dtype, device, requires_grad)
    if M == 1:
        return _array(np.ones((1,)), dtype, device, requires_grad)
    return None


@composite(name="signal.windows.exponential", method=False)
def exponential(
    M: int,
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.exponential`."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _array(np.zeros((0,)), dtype, device, requires_grad)
    if center is None:
        center = _span(M, sym) / 2.0
    n = np.arange(M, dtype=np.float64)
    return _array(np.exp(-np.abs(n - center) / tau), dtype, device, requires_grad)


@composite(name="signal.windows.cosine", method=False)
def cosine(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.cosine`."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _array(np.zeros((0,)), dtype, device, requires_grad)
    # PyTorch's periodic cosine window divides by M + 1 (not scipy's M): reproduced.
    denom = M + 1 if not sym and M > 1 else M
    n = np.arange(M, dtype=np.float64)
    return _array(np.sin(math.pi * (n + 0.5) / denom), dtype, device, requires_grad)


@composite(name="signal.windows.gaussian", method=False)
def gaussian(
    M: int,
    *,
    std: float = 1.0,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.gaussian`."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _array(np.zeros((0,)), dtype, device, requires_grad)
    k = (np.arange(M, dtype=np.float64) - _span(M, sym) / 2.0) / (std * math.sqrt(2))
    return _array(np.exp(-k * k), dtype, device, requires_grad)


def _linspace(start, end, steps, np_dtype):
    """PyTorch's CPU linspace in `np_dtype`: the first half counts up from `start`, the
    second half down from `end`."""
    start, end = np_dtype(start), np_dtype(end)
    i = np.arange(steps).astype(np_dtype)
    step = (end - start) / np_dtype(steps - 1)
    return np.where(i < steps // 2, start + i * step, end - (np_dtype(steps - 1) - i) * step)


def _kaiser_values(M, beta, denom, np_dtype=np.float64):
    # Computed in the window's dtype as PyTorch does: in float32, i0 overflows to inf past
    # ~88.7, so a large beta gives inf / inf = nan (and finite / inf = 0), as in PyTorch.
    # Clamping the end to beta keeps beta^2 - k^2 non-negative, as PyTorch's minimum() does.
    b = np_dtype(beta)
    end = min(b, -b + np_dtype(M - 1) * (np_dtype(2.0) * b / np_dtype(denom)))
    k = _linspace(-b, end, M, np_dtype)
    arg = np.sqrt(np.maximum(b * b - k * k, np_dtype(0)))
    with np.errstate(over="ignore", invalid="ignore"):
        return _i0_like_torch(arg, np_dtype) / _i0_like_torch(np.asarray(b), np_dtype)


def _i0_like_torch(x, np_dtype):
    # PyTorch's i0 (cephes) multiplies by exp(x), which overflows once x > log(max).
    big = x > np.log(np.finfo(np_dtype).max)
    return np.where(big, np.inf, np.i0(np.where(big, 0, x).astype(np.float64))).astype(np_dtype)


@composite(name="signal.windows.kaiser", method=False)
def kaiser(
    M: int,
    *,
    beta: float = 12.0,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.kaiser`."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    values = _kaiser_values(M, float(beta), M if not sym else M - 1, dtype.np.type)
    return _array(values, dtype, device, requires_grad)


@composite(name="signal.windows.bartlett", method=False)
def bartlett(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.bartlett`."""
    dtype = _checks("bartlett", M, dtype, layout)
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    k = -1 + np.arange(M, dtype=np.float64) * (2 / (M if not sym else M - 1))
    return _array(1 - np.abs(k), dtype, device, requires_grad)


def _cosine_sum(M, a, denom):
    k = np.arange(M, dtype=np.float64) * (2 * math.pi / denom)
    return sum((-1) ** i * w * np.cos(i * k) for i, w in enumerate(a))


@composite(name="signal.windows.general_cosine", method=False)
def general_cosine(
    M, *, a, sym: bool = True, dtype=None, layout=strided, device=None, requires_grad: bool = False
):
    """Matches `torch.signal.windows.general_cosine`: sum_i (-1)^i a_i cos(2 pi i n / N)."""
    dtype = _checks("general_cosine", M, dtype, layout)
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    if not isinstance(a, collections.abc.Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    a = [float(w) for w in a]
    if not a:
        raise ValueError("Coefficients cannot be empty")
    return _array(_cosine_sum(M, a, M if not sym else M - 1), dtype, device, requires_grad)


@composite(name="signal.windows.general_hamming", method=False)
def general_hamming(
    M,
    *,
    alpha: float = 0.54,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.general_hamming`."""
    return general_cosine(
        M,
        a=[alpha, 1.0 - alpha],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


@composite(name="signal.windows.hamming", method=False)
def hamming(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.hamming` (its errors name `general_cosine`, as PyTorch's)."""
    return general_hamming(
        M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


@composite(name="signal.windows.hann", method=False)
def hann(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.hann`."""
    return general_hamming(
        M,
        alpha=0.5,
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


@composite(name="signal.windows.blackman", method=False)
def blackman(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.blackman`."""
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(
        M,
        a=[0.42, 0.5, 0.08],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


@composite(name="signal.windows.nuttall", method=False)
def nuttall(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad: bool = False,
):
    """Matches `torch.signal.windows.nuttall`."""
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


# ---------------------------------------------------------------------------
# torch.*_window (ATen): periodic=True by default, RuntimeErrors


def _legacy(name, window_length, periodic, dtype, values_fn, device, requires_grad):
    """Shared body of the ATen windows: checks, the 0/1 cases, and the periodic trick."""
    dtype = dtype if dtype is not None else _dtype.get_default_dtype()
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    if not dtype.is_floating_point:
        if dtype.is_complex:
            raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_complex_c10(dtype)}'")
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length == 0:
        return _array(np.zeros((0,)), dtype, device, requires_grad)
    if window_length == 1:
        return _array(np.ones((1,)), dtype, device, requires_grad)
    # A periodic window of length N is the symmetric window of length N + 1 without its end.
    n = window_length + 1 if periodic else window_length
    return _array(values_fn(n)[:window_length], dtype, device, requires_grad)


def _complex_c10(dtype):
    return "ComplexDouble" if dtype is _dtype.complex128 else "ComplexFloat"


@composite(method=False)
def hann_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """Matches `torch.hann_window`."""
    return _legacy(
        "hann_window",
        window_length,
        periodic,
        dtype,
        lambda n: _cosine_sum(n, (0.5, 0.5), n - 1),
        device,
        requires_grad,
    )


@composite(method=False)
def hamming_window(
    window_length,
    periodic=True,
    alpha=0.54,
    beta=0.46,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """Matches `torch.hamming_window`: alpha - beta cos(2 pi n / (N - 1))."""
    return _legacy(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        lambda n: _cosine_sum(n, (alpha, beta), n - 1),
        device,
        requires_grad,
    )


@composite(method=False)
def blackman_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """Matches `torch.blackman_window`."""
    return _legacy(
        "blackman_window",
        window_length,
        periodic,
        dtype,
        lambda n: _cosine_sum(n, (0.42, 0.5, 0.08), n - 1),
        device,
        requires_grad,
    )


@composite(method=False)
def bartlett_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """Matches `torch.bartlett_window`."""
    return _legacy(
        "bartlett_window",
        window_length,
        periodic,
        dtype,
        lambda n: 1 - np.abs(2 * np.arange(n, dtype=np.float64) / (n - 1) - 1),
        device,
        requires_grad,
    )


@composite(method=False)
def kaiser_window(
    window_length,
    periodic=True,
    beta=12.0,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """Matches `torch.kaiser_window`."""
    return _legacy(
        "kaiser_window",
        window_length,
        periodic,
        dtype,
        lambda n: _kaiser_values(n, float(beta), n - 1),
        device,
        requires_grad,
    )
