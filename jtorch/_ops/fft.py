"""`torch.fft`: discrete Fourier transforms, their frequencies and shifts.

Every transform reduces to one of three kernels over a set of dims: complex to
complex (`fft*`, `ifft*`), real to complex (`rfft*`, `ihfft*`) and complex to
real (`irfft*`, `hfft*`). The Hermitian transforms are the real ones on the
conjugate with the normalisation direction swapped, which is how PyTorch
defines them. Integer and bool inputs are transformed in the default float
dtype; real float inputs give the complex dtype of the same precision.
"""

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._dtype import c10_name
from .._tensor import wrap_dim
from ._registry import NONE, T, composite, op
from .creation import finish


def fft_op(name: str, node=None):
    """Declares `torch.fft.<name>`; `node`: PyTorch's autograd node, named by the transform's
    kind (real-to-complex, complex-to-real, complex-to-complex)."""
    return op(name="fft." + name, promote=NONE, method=False, node=node)


def _c2c_or_r2c(input) -> str:
    return "FftC2CBackward0" if input.dtype.is_complex else "FftR2CBackward0"


# the inverse of a real signal is the conjugate of its forward transform
def _c2c_or_conj(input) -> str:
    return "FftC2CBackward0" if input.dtype.is_complex else "ConjBackward0"


_R2C, _C2R, _C2C = "FftR2CBackward0", "FftC2RBackward0", "FftC2CBackward0"

_NORMS = (None, "backward", "forward", "ortho")
_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _check_norm(norm):
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _as_float(x):
    """Integer/bool inputs in the default float dtype; half types are not supported (CPU)."""
    if x.dtype in (jnp.float16, jnp.bfloat16):
        raise RuntimeError(f"Unsupported dtype {c10_name(x)}")
    if x.dtype == jnp.bool_ or jnp.issubdtype(x.dtype, jnp.integer):
        return x.astype(_dtype.get_default_dtype().np)
    return x


def _as_complex(x):
    x = _as_float(x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        return x
    return x.astype(jnp.complex128 if x.dtype == jnp.float64 else jnp.complex64)


def _require_real(x, name):
    if not jnp.issubdtype(x.dtype, jnp.complexfloating):
        return
    # PyTorch's three code paths word this check differently.
    if name == "ihfftn":
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {c10_name(x)}")
    what = "real-valued" if name == "rfftn" else "real"
    raise RuntimeError(f"{name} expects a {what} input tensor, but got {c10_name(x)}")


def _plan(x, s, dim, c2r=False):
    """(s, dims) with PyTorch's defaults: s=-1 keeps a size, the c2r last dim is 2*(n-1)."""
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(wrap_dim(d, x.ndim) for d in dims)
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions."
            )
        dims = tuple(range(x.ndim - len(s), x.ndim))
    else:
        dims = tuple(range(x.ndim))
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    sizes = []
    for i, d in enumerate(dims):
        n = -1 if s is None else s[i]
        if n == -1:
            n = 2 * (x.shape[d] - 1) if c2r and i == len(dims) - 1 else x.shape[d]
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
        sizes.append(n)
    return tuple(sizes), dims


def _c2c(x, s, dim, norm, inverse):
    _check_norm(norm)
    x = _as_complex(x)
    s, dims = _plan(x, s, dim)
    if not dims:
        return x
    f = jnp.fft.ifftn if inverse else jnp.fft.fftn
    return f(x, s=s, axes=dims, norm=norm).astype(x.dtype)


def _r2c(x, s, dim, norm, name, hermitian):
    _require_real(x, name)
    _check_norm(norm)
    x = _as_float(x)
    s, dims = _plan(x, s, dim)
    cdt = jnp.complex128 if x.dtype == jnp.float64 else jnp.complex64
    if hermitian:
        return jnp.conj(jnp.fft.rfftn(x, s=s, axes=dims, norm=_SWAP[norm])).astype(cdt)
    return jnp.fft.rfftn(x, s=s, axes=dims, norm=norm).astype(cdt)


def _c2r(x, s, dim, norm, hermitian):
    _check_norm(norm)
    x = _as_complex(x)
    s, dims = _plan(x, s, dim, c2r=True)
    rdt = jnp.float64 if x.dtype == jnp.complex128 else jnp.float32
    if hermitian:
        return jnp.fft.irfftn(jnp.conj(x), s=s, axes=dims, norm=_SWAP[norm]).astype(rdt)
    return jnp.fft.irfftn(x, s=s, axes=dims, norm=norm).astype(rdt)


def _one(n):
    return None if n is None else (n,)


# ---------------------------------------------------------------------------
# The transforms: 1-D (n, dim), 2-D (s, dim=(-2, -1)) and n-D (s, dim=None).


@fft_op("fft", node=_c2c_or_r2c)
def fft(input: T, n=None, dim=-1, norm=None):
    return _c2c(input, _one(n), dim, norm, False)


@fft_op("ifft", node=_c2c_or_conj)
def ifft(input: T, n=None, dim=-1, norm=None):
    return _c2c(input, _one(n), dim, norm, True)


@fft_op("fft2", node=_C2C)
def fft2(input: T, s=None, dim=(-2, -1), norm=None):
    return _c2c(input, s, dim, norm, False)


@fft_op("ifft2", node=_C2C)
def ifft2(input: T, s=None, dim=(-2, -1), norm=None):
    return _c2c(input, s, dim, norm, True)


@fft_op("fftn", node=_C2C)
def fftn(input: T, s=None, dim=None, norm=None):
    return _c2c(input, s, dim, norm, False)


@fft_op("ifftn", node=_C2C)
def ifftn(input: T, s=None, dim=None, norm=None):
    return _c2c(input, s, dim, norm, True)


@fft_op("rfft", node=_R2C)
def rfft(input: T, n=None, dim=-1, norm=None):
    return _r2c(input, _one(n), dim, norm, "rfft", False)


@fft_op("rfft2", node=_R2C)
def rfft2(input: T, s=None, dim=(-2, -1), norm=None):
    return _r2c(input, s, dim, norm, "rfftn", False)


@fft_op("rfftn", node=_R2C)
def rfftn(input: T, s=None, dim=None, norm=None):
    return _r2c(input, s, dim, norm, "rfftn", False)


@fft_op("ihfft", node="ConjBackward0")
def ihfft(input: T, n=None, dim=-1, norm=None):
    return _r2c(input, _one(n), dim, norm, "ihfft", True)


@fft_op("ihfft2")
def ihfft2(input: T, s=None, dim=(-2, -1), norm=None):
    return _r2c(input, s, dim, norm, "ihfftn", True)


@fft_op("ihfftn")
def ihfftn(input: T, s=None, dim=None, norm=None):
    return _r2c(input, s, dim, norm, "ihfftn", True)


@fft_op("irfft", node=_C2R)
def irfft(input: T, n=None, dim=-1, norm=None):
    return _c2r(input, _one(n), dim, norm, False)


@fft_op("irfft2", node=_C2R)
def irfft2(input: T, s=None, dim=(-2, -1), norm=None):
    return _c2r(input, s, dim, norm, False)


@fft_op("irfftn", node=_C2R)
def irfftn(input: T, s=None, dim=None, norm=None):
    return _c2r(input, s, dim, norm, False)


@fft_op("hfft", node=_C2R)
def hfft(input: T, n=None, dim=-1, norm=None):
    return _c2r(input, _one(n), dim, norm, True)


@fft_op("hfft2", node=_C2R)
def hfft2(input: T, s=None, dim=(-2, -1), norm=None):
    return _c2r(input, s, dim, norm, True)


@fft_op("hfftn", node=_C2R)
def hfftn(input: T, s=None, dim=None, norm=None):
    return _c2r(input, s, dim, norm, True)


# ---------------------------------------------------------------------------
# Shifts and frequencies


def _shift_dims(x, dim):
    if dim is None:
        return tuple(range(x.ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(wrap_dim(d, x.ndim) for d in dims)


@op(name="fft.fftshift", promote=NONE, method=False, out=False, node="RollBackward0")
def fftshift(input: T, dim=None):
    dims = _shift_dims(input, dim)
    return jnp.roll(input, tuple(input.shape[d] // 2 for d in dims), dims) if dims else input


@op(name="fft.ifftshift", promote=NONE, method=False, out=False, node="RollBackward0")
def ifftshift(input: T, dim=None):
    dims = _shift_dims(input, dim)
    return jnp.roll(input, tuple(-(input.shape[d] // 2) for d in dims), dims) if dims else input


def _freq_dtype(dtype, name):
    dtype = dtype or _dtype.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return dtype


def _freqs(ints, n, d, dtype, device, requires_grad, out):
    # PyTorch multiplies the integer ramp, in the result dtype, by the scalar 1 / (n * d).
    np_dt = np.float32 if dtype is _dtype.bfloat16 else dtype.np
    vals = ints.astype(np_dt) * np.asarray(1.0 / (n * d)).astype(np_dt)
    return finish(jnp.asarray(vals, dtype.np), None, device, requires_grad, out)


@composite(name="fft.fftfreq", method=False)
def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Matches `torch.fft.fftfreq`."""
    dtype = _freq_dtype(dtype, "fftfreq")
    ints = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]).astype(np.int64)
    return _freqs(ints, n, d, dtype, device, requires_grad, out)


@composite(name="fft.rfftfreq", method=False)
def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Matches `torch.fft.rfftfreq`."""
    dtype = _freq_dtype(dtype, "rfftfreq")
    return _freqs(np.arange(n // 2 + 1, dtype=np.int64), n, d, dtype, device, requires_grad, out)


# ---------------------------------------------------------------------------
# Short-time Fourier transform

_PAD_MODES = {"reflect": "reflect", "constant": "constant", "replicate": "edge", "circular": "wrap"}


@op(promote=NONE)
def stft(
    input: T,
    n_fft,
    hop_length=None,
    win_length=None,
    window: T = None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
):
    complex_in = jnp.issubdtype(input.dtype, jnp.complexfloating) or (
        window is not None and jnp.issubdtype(window.dtype, jnp.complexfloating)
    )
    if return_complex is None and not complex_in:
        raise RuntimeError(
            "stft requires the return_complex parameter be given for real inputs, "
            "and will further require that return_complex=True in a future "
            "PyTorch release."
        )
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D tensor")
    x = _as_float(input)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if center:
        p = n_fft // 2
        widths = [(0, 0)] * (x.ndim - 1) + [(p, p)]
        x = jnp.pad(x, widths, mode=_PAD_MODES[pad_mode])
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    w = jnp.ones((win,), x.dtype) if window is None else window
    if w.shape != (win,):
        raise RuntimeError(
            f"stft: expected a 1D window tensor of size equal to win_length={win}, "
            f"but got window with size {list(w.shape)}"
        )
    left = (n_fft - win) // 2
    w = jnp.pad(w, (left, n_fft - win - left))
    n_frames = 1 + (length - n_fft) // hop
    idx = jnp.arange(n_frames)[:, None] * hop + jnp.arange(n_fft)[None, :]
    frames = x[..., idx] * w
    one = (not complex_in) if onesided is None else onesided
    norm = "ortho" if normalized else None
    spec = (
        jnp.fft.rfft(frames, axis=-1, norm=norm) if one else jnp.fft.fft(frames, axis=-1, norm=norm)
    )
    spec = jnp.swapaxes(spec, -1, -2).astype(_as_complex(x).dtype)
    if return_complex is False:
        return jnp.stack([spec.real, spec.imag], axis=-1)
    return spec


@op(promote=NONE)
def istft(
    input: T,
    n_fft,
    hop_length=None,
    win_length=None,
    window: T = None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    if not jnp.issubdtype(input.dtype, jnp.complexfloating):
        raise RuntimeError("istft requires a complex-valued input tensor.")
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"istft: expected a tensor with 2 or 3 dimensions of complex dtype, "
            f"but got {input.ndim}D"
        )
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    n_freq, n_frames = input.shape[-2:]
    one = (n_freq != n_fft) if onesided is None else onesided
    if one and n_freq != n_fft // 2 + 1:
        raise RuntimeError(
            "istft: expected the frequency dimension (3rd to the last) of the "
            "input tensor to match n_fft / 2 + 1 when onesided=True, but got "
            f"{n_freq}"
        )
    rdt = jnp.float64 if input.dtype == jnp.complex128 else jnp.float32
    w = jnp.ones((win,), rdt) if window is None else window
    left = (n_fft - win) // 2
    w = jnp.pad(w, (left, n_fft - win - left))
    norm = "ortho" if normalized else "backward"
    spec = jnp.swapaxes(input, -1, -2)
    if return_complex:
        frames = jnp.fft.ifft(spec, n=n_fft, axis=-1, norm=norm)
    else:
        # A real result comes from the first n_fft // 2 + 1 bins only, even if two-sided.
        frames = jnp.fft.irfft(spec[..., : n_fft // 2 + 1], n=n_fft, axis=-1, norm=norm)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    idx = (jnp.arange(n_frames)[:, None] * hop + jnp.arange(n_fft)[None, :]).reshape(-1)
    y = jnp.zeros(frames.shape[:-2] + (total,), frames.dtype)
    y = y.at[..., idx].add(frames.reshape(frames.shape[:-2] + (-1,)))
    # The envelope is the overlap-add of window**2 (not |window|**2: complex windows square).
    env = jnp.zeros((total,), w.dtype).at[idx].add(jnp.tile(w * w, n_frames))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0)
    if length is not None:
        end = start + length
    y, env = y[..., start : min(end, total)], env[start : min(end, total)]
    # PyTorch divides by the window envelope (the NOLA condition keeps it non-zero).
    y = y / jnp.where(jnp.abs(env) > 1e-11, env, 1).astype(jnp.result_type(y, env))
    if length is not None and end > total:
        y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, end - total)])
    return y
