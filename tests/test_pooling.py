"""Pooling kernels, checked against values worked out by hand or with numpy."""

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F

X = jtorch.from_numpy(np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5))


def test_max_pool2d_indices_and_ceil_mode():
    out, idx = F.max_pool2d(X, 2, return_indices=True)
    np.testing.assert_array_equal(out.numpy()[0, 0], [[6, 8], [16, 18]])
    np.testing.assert_array_equal(idx.numpy()[0, 0], [[6, 8], [16, 18]])
    assert idx.dtype == jtorch.int64
    out, idx = F.max_pool2d(X, 2, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(idx.numpy()[0, 0], [[6, 8, 9], [16, 18, 19], [21, 23, 24]])
    plain = F.max_pool2d(X, 2, ceil_mode=True)
    np.testing.assert_array_equal(plain.numpy(), out.numpy())


def test_max_pool_padding_dilation_and_ints():
    out = F.max_pool1d(jtorch.tensor([[1.0, 5.0, 2.0, 4.0, 3.0]]), 2, stride=1, dilation=2)
    np.testing.assert_array_equal(out.numpy(), [[2.0, 5.0, 3.0]])
    out = F.max_pool2d(X.long(), 3, stride=2, padding=1)
    assert out.dtype == jtorch.int64
    np.testing.assert_array_equal(out.numpy()[0, 0], [[6, 8, 9], [16, 18, 19], [21, 23, 24]])


def test_avg_pool_count_include_pad_and_divisor():
    x = jtorch.ones(1, 1, 3, 3)
    a = F.avg_pool2d(x, 2, stride=2, padding=1).numpy()[0, 0]
    np.testing.assert_allclose(a, [[0.25, 0.5], [0.5, 1.0]])
    b = F.avg_pool2d(x, 2, stride=2, padding=1, count_include_pad=False).numpy()
    np.testing.assert_allclose(b, np.ones((1, 1, 2, 2)))
    c = F.avg_pool2d(X, 5, divisor_override=1).numpy()
    assert c.item() == sum(range(25))
    # Integer averages truncate.
    d = F.avg_pool1d(jtorch.tensor([[[1, 2, 4, 4]]]), 2).numpy()
    np.testing.assert_array_equal(d, [[[1, 4]]])


def test_adaptive_pools():
    avg = F.adaptive_avg_pool2d(X, (2, 3)).numpy()[0, 0]
    a = np.arange(25.0).reshape(5, 5)
    rows, cols = [(0, 3), (2, 5)], [(0, 2), (1, 4), (3, 5)]
    expect = [[a[r0:r1, c0:c1].mean() for c0, c1 in cols] for r0, r1 in rows]
    np.testing.assert_allclose(avg, expect, rtol=1e-6)
    mx, idx = F.adaptive_max_pool2d(X, 2, return_indices=True)
    np.testing.assert_array_equal(idx.numpy()[0, 0], [[12, 14], [22, 24]])
    with pytest.raises(NotImplementedError):
        F.adaptive_avg_pool2d(X.long(), 2)


def test_max_unpool_inverts_max_pool():
    out, idx = F.max_pool2d(X, 2, return_indices=True)
    up = F.max_unpool2d(out, idx, 2, output_size=(5, 5)).numpy()[0, 0]
    expect = np.zeros((5, 5), np.float32)
    for v in (6, 8, 16, 18):
        expect.flat[v] = v
    np.testing.assert_array_equal(up, expect)


def test_lp_pool_and_fractional():
    out = F.lp_pool1d(jtorch.tensor([[3.0, 4.0, 1.0, 0.0]]), 2, 2).numpy()
    np.testing.assert_allclose(out, [[5.0, 1.0]], rtol=1e-6)
    fm = F.fractional_max_pool2d(X, 2, output_size=3)
    assert tuple(fm.shape) == (1, 1, 3, 3)
    # The last window always ends at the input's edge.
    assert fm.numpy()[0, 0, -1, -1] == 24


def test_pool_errors():
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(X, 2, padding=2)
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        F.avg_pool2d(X, 2, stride=0)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool2d(X, 6)


def test_lp_pool_and_max_pool_with_indices():
    x = np.arange(1.0, 17.0, dtype=np.float32).reshape(1, 1, 4, 4)
    got = F.lp_pool2d(jtorch.from_numpy(x), 2, 2)
    windows = x.reshape(1, 1, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 1, 2, 2, 4)
    np.testing.assert_allclose(np.asarray(got), np.sqrt((windows**2).sum(-1)), rtol=1e-5)
    x3 = np.ones((1, 1, 2, 2, 2), np.float32) * 3
    np.testing.assert_allclose(np.asarray(F.lp_pool3d(jtorch.from_numpy(x3), 1, 2)), [[[[[24]]]]])
    v, i = F.max_pool1d_with_indices(jtorch.tensor([[[1.0, 5.0, 2.0, 0.0]]]), 2)
    assert v.tolist() == [[[5.0, 2.0]]] and i.tolist() == [[[1, 2]]]
    v, i = F.max_pool2d_with_indices(jtorch.from_numpy(x), 2)
    assert v.tolist() == [[[[6.0, 8.0], [14.0, 16.0]]]] and i.tolist() == [[[[5, 7], [13, 15]]]]
    v, i = F.max_pool3d_with_indices(jtorch.from_numpy(x3), 2)
    assert v.tolist() == [[[[[3.0]]]]] and i.shape == (1, 1, 1, 1, 1)


def _max_pool2d_grad_reference(x, k, s, p, d, out):
    """d(sum(w * max_pool2d(x)))/dx by PyTorch's documented CPU loop: a window's winner is
    its first maximum (`val > maxval`), unless it holds a NaN (`|| isnan(val)`: the last)."""
    n, c, h, wd = x.shape
    grad = np.zeros_like(x)
    for b in range(n):
        for ch in range(c):
            for i in range(out[0]):
                for j in range(out[1]):
                    best, where = -np.inf, None
                    for a in range(k):
                        for e in range(k):
                            r, q = i * s - p + a * d, j * s - p + e * d
                            if not (0 <= r < h and 0 <= q < wd):
                                continue
                            v = x[b, ch, r, q]
                            if where is None or v > best or np.isnan(v):
                                best, where = v, (r, q)
                    grad[b, ch][where] += 1.0 + i + 10 * j  # (the weight of this output)
    return grad


@pytest.mark.parametrize(
    "k, s, p, d, ceil",
    [
        (2, 2, 0, 1, False),
        (3, 2, 1, 1, False),
        (3, 2, 1, 1, True),
        (2, 1, 0, 1, False),
        (3, 1, 1, 2, False),
    ],
)
def test_max_pool2d_gradient_goes_to_pytorchs_winner(k, s, p, d, ceil):
    rng = np.random.default_rng(k * 10 + s)
    x = np.round(rng.standard_normal((2, 2, 7, 6))).clip(-1, 1).astype(np.float32)  # ties
    x[0, 0][rng.random((7, 6)) < 0.3] = np.nan
    t = jtorch.from_numpy(x).requires_grad_()
    y = F.max_pool2d(t, k, s, p, d, ceil)
    oh, ow = y.shape[2:]
    w = 1.0 + np.arange(oh)[:, None] + 10 * np.arange(ow)[None, :]
    (y * jtorch.from_numpy(w.astype(np.float32))).sum().backward()
    np.testing.assert_array_equal(
        t.grad.numpy(), _max_pool2d_grad_reference(x, k, s, p, d, (oh, ow))
    )


@pytest.mark.parametrize("k, s, p, d, ceil", [(2, 2, 0, 1, False), (3, 1, 1, 2, True)])
def test_max_pool2d_indices_are_pytorchs_winners(k, s, p, d, ceil):
    # The returned index is the element the gradient goes to: the last NaN of a window.
    rng = np.random.default_rng(k + 7 * s)
    x = np.round(rng.standard_normal((1, 2, 7, 6))).clip(-1, 1).astype(np.float32)
    x[0, 0][rng.random((7, 6)) < 0.5] = np.nan
    t = jtorch.from_numpy(x).requires_grad_()
    y, idx = F.max_pool2d(t, k, s, p, d, ceil, return_indices=True)
    oh, ow = y.shape[2:]
    w = 1.0 + np.arange(oh)[:, None] + 10 * np.arange(ow)[None, :]
    (y * jtorch.from_numpy(w.astype(np.float32))).sum().backward()
    grad = np.zeros_like(x)
    for b in range(1):
        for ch in range(2):
            np.add.at(grad[b, ch].reshape(-1), idx.numpy()[b, ch].reshape(-1), w.reshape(-1))
    np.testing.assert_array_equal(grad, _max_pool2d_grad_reference(x, k, s, p, d, (oh, ow)))
    np.testing.assert_array_equal(t.grad.numpy(), grad)


def test_max_pool1d_indices_of_nan_windows():
    nan = float("nan")
    x = jtorch.tensor([[[nan, nan, 1.0, nan, 2.0, nan, nan, nan, 3.0, nan]]])
    # PyTorch's loop: take `v` when `v > max or isnan(v)`, so the last NaN of each window.
    assert F.max_pool1d(x, 2, return_indices=True)[1].tolist() == [[[1, 3, 5, 7, 9]]]
    assert F.max_pool1d(x, 3, 1, return_indices=True)[1].tolist() == [[[1, 3, 3, 5, 6, 7, 7, 9]]]
    assert F.adaptive_max_pool1d(x, 3, return_indices=True)[1].tolist() == [[[3, 6, 9]]]


def test_max_pool_forward_mode_and_double_backward():
    x = jtorch.tensor([[[[1.0, 3.0, 3.0, 0.0], [2.0, 0.0, 4.0, 4.0]]]])
    tangent = jtorch.arange(8.0).reshape(1, 1, 2, 4)
    _, dy = jtorch.func.jvp(lambda a: F.max_pool2d(a, 2), (x,), (tangent,))
    assert dy.tolist() == [[[[1.0, 6.0]]]]  # the tangent at each window's first maximum
    x.requires_grad_()
    (g,) = jtorch.autograd.grad(F.max_pool2d(x, 2).pow(2).sum(), x, create_graph=True)
    assert g.tolist() == [[[[0.0, 6.0, 0.0, 0.0], [0.0, 0.0, 8.0, 0.0]]]]
    g.sum().backward()  # d/dx of sum(2 * winner): 2 at each winner
    assert x.grad.tolist() == [[[[0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0]]]]
