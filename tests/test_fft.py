"""`torch.fft` (`jtorch/_ops/fft.py`): values against numpy.fft, dtypes, norms and errors."""

import functools

import numpy as np
import pytest

import jtorch as torch

from . import helpers
from .helpers import from_np as t

# float32 transforms against numpy's float64 ones
close = functools.partial(helpers.close, rtol=1e-4, atol=1e-4)

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6)).astype(np.float32)
XC = (RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))).astype(np.complex64)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_one_dim_norms(norm):
    close(torch.fft.fft(t(X), norm=norm), np.fft.fft(X, norm=norm))
    close(torch.fft.ifft(t(XC), n=8, norm=norm), np.fft.ifft(XC, n=8, norm=norm))
    close(torch.fft.rfft(t(X), dim=0, norm=norm), np.fft.rfft(X, axis=0, norm=norm))
    close(torch.fft.irfft(t(XC), norm=norm), np.fft.irfft(XC, norm=norm))
    close(torch.fft.hfft(t(XC), n=5, norm=norm), np.fft.hfft(XC, n=5, norm=norm))
    close(torch.fft.ihfft(t(X), norm=norm), np.fft.ihfft(X, norm=norm))


def test_multi_dim():
    close(torch.fft.fft2(t(X)), np.fft.fft2(X))
    close(torch.fft.ifftn(t(XC), s=(3, 4)), np.fft.ifftn(XC, s=(3, 4), axes=(0, 1)))
    close(torch.fft.rfftn(t(X), dim=(0,)), np.fft.rfftn(X, axes=(0,)))
    close(torch.fft.irfft2(t(XC), s=(4, 6)), np.fft.irfft2(XC, s=(4, 6), axes=(0, 1)))
    # hfftn is irfftn of the conjugate with the normalisation direction swapped.
    close(torch.fft.hfft2(t(XC)), np.fft.irfft2(np.conj(XC), norm="forward"))
    close(torch.fft.ihfftn(t(X)), np.conj(np.fft.rfftn(X, norm="forward")))
    # s=-1 keeps an input size.
    assert torch.fft.fftn(t(X), s=(-1, 3)).shape == (4, 3)


def test_dtypes():
    assert torch.fft.fft(t(X)).dtype == torch.complex64
    assert torch.fft.rfft(t(X.astype(np.float64))).dtype == torch.complex128
    assert torch.fft.irfft(t(XC)).dtype == torch.float32
    ints = np.arange(6, dtype=np.int64)
    r = torch.fft.fft(t(ints))
    assert r.dtype == torch.complex64
    close(r, np.fft.fft(ints))
    assert torch.fft.fft(t(np.ones(3, bool))).dtype == torch.complex64


def test_out():
    out = torch.empty(4, 6, dtype=torch.complex64)
    torch.fft.fft(t(X), out=out)
    close(out, np.fft.fft(X))


@pytest.mark.parametrize(
    "call, msg",
    [
        (lambda: torch.fft.fft(t(X), norm="foo"), 'Invalid normalization mode: "foo"'),
        (lambda: torch.fft.fft(t(X), n=0), r"Invalid number of data points \(0\) specified"),
        (lambda: torch.fft.rfft(t(XC)), "rfft expects a real input tensor, but got ComplexFloat"),
        (lambda: torch.fft.fftn(t(X), dim=(0, 0)), "FFT dims must be unique"),
        (lambda: torch.fft.fftn(t(X), s=(2, 2, 2)), "Got shape with 3 values"),
        (lambda: torch.fft.fft(t(X.astype(np.float16))), "Unsupported dtype Half"),
        (lambda: torch.fft.fftfreq(4, dtype=torch.int64), "fftfreq requires a floating point"),
    ],
)
def test_errors(call, msg):
    with pytest.raises(RuntimeError, match=msg):
        call()


def test_shift_and_freq():
    close(torch.fft.fftshift(t(X)), np.fft.fftshift(X))
    close(torch.fft.ifftshift(t(X), dim=0), np.fft.ifftshift(X, axes=0))
    assert torch.fft.fftshift(t(np.ones(3, bool))).dtype == torch.bool
    f = torch.fft.fftfreq(5, d=0.5)
    assert f.dtype == torch.float32
    close(f, np.fft.fftfreq(5, d=0.5))
    close(torch.fft.rfftfreq(6, dtype=torch.float64), np.fft.rfftfreq(6))


def test_stft_roundtrip():
    sig = RNG.standard_normal(64).astype(np.float32)
    win = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)).astype(np.float32)
    spec = torch.stft(t(sig), 16, hop_length=4, window=t(win), return_complex=True)
    assert spec.shape == (9, 17) and spec.dtype == torch.complex64
    # Frame 1 (centered, reflect-padded by 8) is sig[-4..11] windowed: check it with numpy.
    padded = np.pad(sig, 8, mode="reflect")
    close(spec[:, 1], np.fft.rfft(padded[4:20] * win))
    back = torch.istft(spec, 16, hop_length=4, window=t(win), length=64)
    close(back, sig)
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
        torch.stft(t(sig), 16)
