"""Normalization kernels (`jtorch/_ops/nn/normalization.py`); expected values from numpy."""

import functools

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F

from . import helpers
from .helpers import f32 as t

close = functools.partial(helpers.close, rtol=1e-5, atol=1e-5)

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3, 5)).astype(np.float32) * 2 + 1


def ref_norm(x, axes, eps):
    x = x.astype(np.float64)
    mean = x.mean(axes, keepdims=True)
    var = x.var(axes, keepdims=True)  # biased
    return (x - mean) / np.sqrt(var + eps), mean, 1 / np.sqrt(var + eps)


def test_layer_norm():
    w = RNG.standard_normal(5).astype(np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    ref, mean, rstd = ref_norm(X, (2,), 1e-5)
    close(F.layer_norm(t(X), [5]), ref)
    close(F.layer_norm(t(X), (5,), t(w), t(b)), ref * w + b)
    close(torch.layer_norm(t(X), [3, 5], eps=0.1), ref_norm(X, (1, 2), 0.1)[0])
    out, m, r = torch.native_layer_norm(t(X), [5], None, None, 1e-5)
    assert tuple(m.shape) == (4, 3, 1) and tuple(r.shape) == (4, 3, 1)
    close(out, ref)
    close(m, mean)
    close(r, rstd)
    assert F.layer_norm(t(X).half(), [5]).dtype == torch.float16
    with pytest.raises(
        RuntimeError,
        match=r"Given normalized_shape=\[3\], expected input with "
        r"shape \[\*, 3\], but got input of size\[4, 3, 5\]",
    ):
        F.layer_norm(t(X), [3])
    with pytest.raises(
        RuntimeError, match="Expected weight to be of same shape as normalized_shape"
    ):
        F.layer_norm(t(X), [5], weight=t(np.ones(3, np.float32)))
    with pytest.raises(NotImplementedError, match="LayerNormKernelImpl"):
        F.layer_norm(t(np.ones((2, 3), np.int64)), [3])


def test_rms_norm():
    w = RNG.standard_normal(5).astype(np.float32)
    x = X.astype(np.float64)
    eps = float(np.finfo(np.float32).eps)
    ref = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    close(F.rms_norm(t(X), [5]), ref)
    close(
        torch.rms_norm(t(X), [5], t(w), eps=0.5),
        x / np.sqrt((x * x).mean(-1, keepdims=True) + 0.5) * w,
    )
    assert F.rms_norm(t(X), [5], t(w.astype(np.float64))).dtype == torch.float32


def test_group_norm():
    x = RNG.standard_normal((2, 6, 4)).astype(np.float32)
    w = RNG.standard_normal(6).astype(np.float32)
    b = RNG.standard_normal(6).astype(np.float32)
    g = x.reshape(2, 3, 8)
    ref, mean, rstd = ref_norm(g, (2,), 1e-5)
    ref = ref.reshape(2, 6, 4)
    close(F.group_norm(t(x), 3), ref)
    close(F.group_norm(t(x), 3, t(w), t(b)), ref * w[:, None] + b[:, None])
    out, m, r = torch.native_group_norm(t(x), None, None, 2, 6, 4, 3, 1e-5)
    assert tuple(m.shape) == (2, 3)
    close(m, mean.reshape(2, 3))
    close(r, rstd.reshape(2, 3), rtol=1e-4)
    with pytest.raises(
        RuntimeError,
        match="Expected number of channels in input to be divisible "
        r"by num_groups, but got input of shape \[2, 6, 4\] and num_groups=4",
    ):
        F.group_norm(t(x), 4)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.group_norm(t(np.ones((1, 2), np.float32)), 2)


def test_batch_norm_training_updates_running_stats():
    x = X.astype(np.float64)
    rm = t(np.zeros(3, np.float32))
    rv = t(np.ones(3, np.float32))
    out = F.batch_norm(t(X), rm, rv, training=True, momentum=0.3, eps=1e-5)
    close(out, ref_norm(X, (0, 2), 1e-5)[0], atol=2e-5)
    # The running variance takes the unbiased variance.
    close(rm, 0.3 * x.mean((0, 2)))
    close(rv, 0.7 + 0.3 * x.var((0, 2), ddof=1), rtol=1e-5)
    assert rm._version > 0
    # Evaluation uses the running statistics and leaves them alone.
    w = np.array([1.0, 2.0, 3.0], np.float32)
    before = rm.numpy().copy()
    out = F.batch_norm(t(X), rm, rv, t(w), None, training=False)
    close(
        out, (x - rm.numpy()[:, None]) / np.sqrt(rv.numpy()[:, None] + 1e-5) * w[:, None], atol=2e-5
    )
    assert np.array_equal(rm.numpy(), before)


def test_batch_norm_variants_and_errors():
    rm, rv = t(np.zeros(3, np.float32)), t(np.ones(3, np.float32))
    out, save_mean, save_invstd = torch.native_batch_norm(t(X), None, None, rm, rv, True, 0.1, 1e-5)
    close(save_mean, X.astype(np.float64).mean((0, 2)))
    close(save_invstd, 1 / np.sqrt(X.astype(np.float64).var((0, 2)) + 1e-5), rtol=1e-4)
    _, sm, _ = torch.native_batch_norm(t(X), None, None, rm, rv, False, 0.1, 1e-5)
    assert tuple(sm.shape) == (0,)
    close(
        torch.batch_norm(t(X), None, None, rm, rv, False, 0.1, 1e-5, True),
        (X - rm.numpy()[:, None]) / np.sqrt(rv.numpy()[:, None] + 1e-5),
        atol=2e-5,
    )
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(t(X), None, None)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(t(np.ones((1, 3), np.float32)), None, None, training=True)
    before = rm.numpy().copy()
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(t(X), t(np.zeros(4, np.float32)), rv, training=True)
    assert np.array_equal(rm.numpy(), before)


def test_instance_norm():
    x = X.astype(np.float64)
    close(F.instance_norm(t(X)), ref_norm(X, (2,), 1e-5)[0], atol=2e-5)
    rm, rv = t(np.zeros(3, np.float32)), t(np.ones(3, np.float32))
    F.instance_norm(t(X), rm, rv, momentum=0.5)
    close(rm, 0.5 * x.mean(2).mean(0))
    close(rv, 0.5 + 0.5 * x.var(2, ddof=1).mean(0))
    out = F.instance_norm(t(X), rm, rv, use_input_stats=False)
    close(out, (x - rm.numpy()[:, None]) / np.sqrt(rv.numpy()[:, None] + 1e-5), atol=2e-5)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element"):
        F.instance_norm(t(np.ones((2, 3, 1), np.float32)))


def test_local_response_norm():
    x = RNG.standard_normal((2, 5, 3)).astype(np.float64)
    size, alpha, beta, k = 3, 0.1, 0.75, 2.0
    sq = np.pad(x * x, ((0, 0), (1, 1), (0, 0)))
    avg = (sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:]) / size
    close(
        F.local_response_norm(t(x.astype(np.float32)), size, alpha, beta, k),
        x / (avg * alpha + k) ** beta,
    )
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality"):
        F.local_response_norm(t(np.ones((2, 3), np.float32)), 2)


def test_normalize():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    x64 = x.astype(np.float64)
    close(F.normalize(t(x)), x64 / np.linalg.norm(x64, axis=1, keepdims=True))
    close(F.normalize(t(x), p=1.0, dim=0), x64 / np.abs(x64).sum(0, keepdims=True))
    z = F.normalize(t(np.zeros((2, 2), np.float32)))
    assert (z.numpy() == 0).all()
    out = torch.empty(3, 4)
    F.normalize(t(x), out=out)
    close(out, x64 / np.linalg.norm(x64, axis=1, keepdims=True))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        F.normalize(t([[1, 2]], np.int64))


def test_native_batch_norm_legit_without_running_stats():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    out, mean, rstd = torch._native_batch_norm_legit(
        torch.from_numpy(x), None, None, True, 0.1, 1e-5
    )
    m = x.mean(axis=(0, 2))
    v = x.var(axis=(0, 2))
    close(mean, m)
    close(rstd, 1 / np.sqrt(v + 1e-5))
    close(out, (x - m[None, :, None]) / np.sqrt(v[None, :, None] + 1e-5), atol=1e-5)
