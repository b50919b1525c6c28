"""Window functions: values from the textbook formulas (numpy), dtypes, and PyTorch's errors."""

import math

import numpy as np
import pytest

import jtorch as torch
from tests.helpers import close

W = torch.signal.windows


def test_hann_hamming_blackman_symmetric_and_periodic():
    n = np.arange(5)
    close(W.hann(5), 0.5 - 0.5 * np.cos(2 * np.pi * n / 4))
    close(W.hann(5, sym=False), 0.5 - 0.5 * np.cos(2 * np.pi * n / 5))
    close(W.hamming(5), 0.54 - 0.46 * np.cos(2 * np.pi * n / 4))
    close(
        W.blackman(5),
        0.42 - 0.5 * np.cos(2 * np.pi * n / 4) + 0.08 * np.cos(4 * np.pi * n / 4),
        atol=1e-6,
    )
    close(W.general_hamming(5, alpha=0.6), 0.6 - 0.4 * np.cos(2 * np.pi * n / 4))
    a = [0.3635819, 0.4891775, 0.1365995, 0.0106411]
    expected = sum((-1) ** i * c * np.cos(2 * np.pi * i * n / 4) for i, c in enumerate(a))
    close(W.nuttall(5), expected)
    close(W.general_cosine(5, a=[0.5, 0.5]), 0.5 - 0.5 * np.cos(2 * np.pi * n / 4))


def test_other_windows():
    n = np.arange(6)
    close(W.bartlett(5), [0, 0.5, 1, 0.5, 0])
    close(W.cosine(4), np.sin(np.pi * (np.arange(4) + 0.5) / 4))
    # PyTorch's periodic cosine window divides by M + 1.
    close(W.cosine(4, sym=False), np.sin(np.pi * (np.arange(4) + 0.5) / 5))
    close(W.gaussian(6, std=1.5), np.exp(-0.5 * ((n - 2.5) / 1.5) ** 2))
    close(W.exponential(6, tau=2.0), np.exp(-np.abs(n - 2.5) / 2.0))
    close(W.exponential(6, center=1.0, tau=2.0, sym=False), np.exp(-np.abs(n - 1.0) / 2.0))
    close(W.kaiser(6, beta=5.0), np.kaiser(6, 5.0))
    close(W.kaiser(6, beta=5.0, sym=False), np.kaiser(7, 5.0)[:6])


def test_trivial_lengths_dtype_and_requires_grad():
    assert W.hann(0).shape == (0,) and W.kaiser(0).shape == (0,)
    close(W.hann(1), [1.0])
    close(W.kaiser(1), [1.0])
    x = W.hann(4, dtype=torch.float64, requires_grad=True)
    assert x.dtype is torch.float64 and x.requires_grad
    assert W.gaussian(3).dtype is torch.float32


@pytest.mark.parametrize(
    "kwargs, exc, msg",
    [
        ({"M": -1}, ValueError, "requires non-negative window length, got M=-1"),
        ({"M": 3, "dtype": torch.int64}, ValueError, "expects float32 or float64 dtypes"),
        ({"M": 3, "dtype": torch.float16}, ValueError, "expects float32 or float64 dtypes"),
    ],
)
def test_common_errors(kwargs, exc, msg):
    for fn in (W.hann, W.bartlett, W.kaiser, W.cosine, W.blackman):
        with pytest.raises(exc, match=msg):
            fn(**kwargs)


def test_specific_errors():
    with pytest.raises(ValueError, match="Tau must be positive"):
        W.exponential(3, tau=-1)
    with pytest.raises(ValueError, match="Center must be None for symmetric windows"):
        W.exponential(3, center=1)
    with pytest.raises(ValueError, match="Standard deviation must be positive"):
        W.gaussian(3, std=0)
    with pytest.raises(ValueError, match="beta must be non-negative"):
        W.kaiser(3, beta=-1)
    with pytest.raises(TypeError, match="Coefficients must be a list/tuple"):
        W.general_cosine(3, a=None)
    with pytest.raises(ValueError, match="Coefficients cannot be empty"):
        W.general_cosine(3, a=[])
    # hann goes through general_cosine, whose name PyTorch's message carries
    with pytest.raises(ValueError, match="general_cosine requires non-negative"):
        W.hann(-2)


def test_legacy_window_functions_are_periodic_by_default():
    n = np.arange(4)
    close(torch.hann_window(4), 0.5 - 0.5 * np.cos(2 * np.pi * n / 4))
    close(torch.hann_window(4, periodic=False), 0.5 - 0.5 * np.cos(2 * np.pi * n / 3))
    close(torch.hamming_window(4, False, 0.6, 0.3), 0.6 - 0.3 * np.cos(2 * np.pi * n / 3))
    close(torch.bartlett_window(5, False), [0, 0.5, 1, 0.5, 0])
    close(torch.blackman_window(3, False), [0, 1, 0], atol=1e-6)
    close(torch.kaiser_window(4, beta=3.0), np.kaiser(5, 3.0)[:4])
    assert torch.hann_window(1).tolist() == [1.0] and torch.hann_window(0).shape == (0,)
    assert torch.hann_window(3, dtype=torch.float64).dtype is torch.float64
    with pytest.raises(RuntimeError, match="hann_window requires non-negative window_length"):
        torch.hann_window(-1)
    with pytest.raises(RuntimeError, match="expects floating point dtypes"):
        torch.kaiser_window(3, dtype=torch.int64)
    assert math.isclose(torch.kaiser_window(3, False).max().item(), 1.0, rel_tol=1e-6)
