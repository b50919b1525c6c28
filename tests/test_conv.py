"""Convolutions, unfold and fold, checked against direct numpy sums."""

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F

from .helpers import from_np as t


def np_conv2d(x, w, stride=1, pad=0):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 6, 6))
W = RNG.standard_normal((4, 3, 3, 3))


def test_conv2d_values_and_bias():
    b = np.arange(4.0)
    out = F.conv2d(t(X), t(W), t(b), stride=2, padding=1)
    assert out.dtype == jtorch.float64
    np.testing.assert_allclose(out.numpy(), np_conv2d(X, W, 2, 1) + b[:, None, None], rtol=1e-10)
    assert jtorch.conv2d is F.conv2d


def test_conv2d_same_and_unbatched():
    out = F.conv2d(t(X[0]), t(W), padding="same")
    assert tuple(out.shape) == (4, 6, 6)
    np.testing.assert_allclose(out.numpy(), np_conv2d(X[:1], W, 1, 1)[0], rtol=1e-10)


def test_conv1d_groups():
    x = RNG.standard_normal((1, 4, 5))
    w = RNG.standard_normal((2, 2, 1))
    out = F.conv1d(t(x), t(w), groups=2).numpy()
    expect = np.stack(
        [np.einsum("cl,c->l", x[0, :2], w[0, :, 0]), np.einsum("cl,c->l", x[0, 2:], w[1, :, 0])]
    )
    np.testing.assert_allclose(out[0], expect, rtol=1e-10)


def test_conv_transpose_is_adjoint_of_conv():
    # <conv(x), y> == <x, conv_transpose(y)> for the same weight.
    y = RNG.standard_normal((2, 4, 3, 3))
    lhs = np.sum(np_conv2d(X, W, 2, 1) * y)
    ct = F.conv_transpose2d(t(y), t(W), stride=2, padding=1, output_padding=1).numpy()
    assert ct.shape == X.shape
    np.testing.assert_allclose(np.sum(X * ct), lhs, rtol=1e-10)


def test_conv_errors():
    with pytest.raises(
        RuntimeError,
        match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
        r"to conv2d, but got input of size: \[6, 6\]",
    ):
        F.conv2d(t(X[0, 0]), t(W))
    with pytest.raises(
        RuntimeError,
        match=r"expected input\[2, 2, 6, 6\] to have 3 channels, "
        r"but got 2 channels instead",
    ):
        F.conv2d(t(X[:, :2]), t(W))
    with pytest.raises(RuntimeError, match="not supported for strided"):
        F.conv2d(t(X), t(W), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Input type"):
        F.conv2d(t(X.astype(np.float32)), t(W))


def test_unfold_fold_roundtrip():
    x = np.arange(32.0).reshape(1, 2, 4, 4).astype(np.float32)
    cols = F.unfold(t(x), 2, stride=2)
    assert tuple(cols.shape) == (1, 8, 4)
    # First block: channel 0 then 1, each row-major over the 2x2 window.
    np.testing.assert_array_equal(cols.numpy()[0, :, 0], [0, 1, 4, 5, 16, 17, 20, 21])
    back = F.fold(cols, (4, 4), 2, stride=2)
    np.testing.assert_array_equal(back.numpy(), x)
    # Overlapping windows are summed: each pixel counted once per window covering it.
    ones = F.fold(F.unfold(t(np.ones((1, 1, 3, 3), np.float32)), 2), (3, 3), 2).numpy()
    np.testing.assert_array_equal(ones[0, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(t(np.zeros((1, 7, 4), np.float32)), (4, 4), 2, stride=2)


def test_conv_transpose3d_spreads_each_input_over_the_kernel():
    x = jtorch.zeros(1, 1, 2, 2, 2)
    x[0, 0, 1, 0, 1] = 2.0
    w = jtorch.arange(8.0).reshape(1, 1, 2, 2, 2)
    out = F.conv_transpose3d(x, w)
    expected = np.zeros((1, 1, 3, 3, 3), np.float32)
    expected[0, 0, 1:3, 0:2, 1:3] = 2.0 * np.arange(8.0).reshape(2, 2, 2)
    np.testing.assert_allclose(np.asarray(out), expected)
