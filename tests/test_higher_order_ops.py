"""`torch._higher_order_ops.associative_scan` and `scan` (torch-free): results from numpy's
scans and loops, gradients from calculus."""

import numpy as np
import pytest

import jtorch
from jtorch._dynamo.exc import UncapturedHigherOrderOpError
from jtorch._higher_order_ops import associative_scan, scan


def _ascan(fn, xs, dim, reverse=False):
    return associative_scan(fn, xs, dim=dim, reverse=reverse, combine_mode="generic")


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 13])
def test_cumsum_and_cumprod(n):
    x = np.random.default_rng(n).uniform(0.5, 1.5, (2, n)).astype(np.float32)
    got = _ascan(lambda a, b: a + b, jtorch.tensor(x), 1)
    np.testing.assert_allclose(got.numpy(), np.cumsum(x, 1), rtol=1e-6)
    got = _ascan(lambda a, b: a * b, jtorch.tensor(x), -1, reverse=True)
    np.testing.assert_allclose(got.numpy(), np.cumprod(x[:, ::-1], 1)[:, ::-1], rtol=1e-5)


def test_linear_recurrence_pairs():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.1, 0.9, (2, 3, 9)).astype(np.float32)

    def combine(left, right):
        return left[0] * right[0], right[0] * left[1] + right[1]

    prod, h = _ascan(combine, (jtorch.tensor(a), jtorch.tensor(b)), 1)
    want, state = np.zeros_like(b), np.zeros(3, np.float32)
    for t in range(9):  # h_t = a_t h_{t-1} + b_t
        state = a[:, t] * state + b[:, t]
        want[:, t] = state
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(prod.numpy(), np.cumprod(a, 1), rtol=1e-5)


def test_combine_sees_single_elements():
    """The combine function is vmapped: a matrix product acts per element of the scan."""
    m = np.random.default_rng(1).standard_normal((5, 2, 2)).astype(np.float32)
    got = _ascan(lambda x, y: x @ y, jtorch.tensor(m), 0).numpy()
    acc = m[0]
    for i in range(5):
        acc = m[0] if i == 0 else acc @ m[i]
        np.testing.assert_allclose(got[i], acc, rtol=1e-5, atol=1e-6)


def test_gradient_of_cumsum():
    x = jtorch.ones(6, requires_grad=True)
    w = jtorch.arange(1.0, 7.0)
    (_ascan(lambda a, b: a + b, x, 0) * w).sum().backward()
    # d/dx_i sum_j w_j sum_{k<=j} x_k = sum_{j>=i} w_j
    np.testing.assert_allclose(x.grad.numpy(), np.cumsum(np.arange(1.0, 7.0)[::-1])[::-1])


def test_associative_scan_errors():
    with pytest.raises(ValueError, match="pointwise"):
        associative_scan(lambda a, b: a + b, jtorch.ones(3), dim=0)
    with pytest.raises(ValueError, match="Combine_mode"):
        associative_scan(lambda a, b: a + b, jtorch.ones(3), dim=0, combine_mode="x")
    with pytest.raises(IndexError, match="Dimension out of range"):
        _ascan(lambda a, b: a + b, jtorch.ones(3), 1)
    with pytest.raises(ValueError, match="scan dimension > 0"):
        _ascan(lambda a, b: a + b, jtorch.ones(3, 0), 1)


def test_scan_is_the_loop():
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)

    def step(carry, xi):
        nxt = carry * 0.5 + xi
        return nxt, nxt.sum()

    carry, ys = scan(step, jtorch.zeros(3), jtorch.tensor(x))
    state, want = np.zeros(3, np.float32), []
    for row in x:
        state = state * 0.5 + row
        want.append(state.sum())
    np.testing.assert_allclose(carry.numpy(), state, rtol=1e-6)
    np.testing.assert_allclose(ys.numpy(), want, rtol=1e-5)
    carry, ys = scan(step, jtorch.zeros(4), jtorch.tensor(x), dim=1, reverse=True)
    state, want = np.zeros(4, np.float32), []
    for col in x.T[::-1]:
        state = state * 0.5 + col
        want.append(state.sum())
    np.testing.assert_allclose(carry.numpy(), state, rtol=1e-6)
    np.testing.assert_allclose(ys.numpy(), want[::-1], rtol=1e-5)


def test_scan_gradient():
    x = jtorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c0 = jtorch.tensor(2.0, requires_grad=True)
    carry, _ = scan(lambda c, xi: (c * xi, c.clone()), c0, x)
    carry.backward()  # carry = c0 * x0 * x1 * x2
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 6.0, 4.0])
    assert c0.grad.item() == 6.0


def test_scan_carry_must_keep_its_metadata():
    with pytest.raises(UncapturedHigherOrderOpError, match="differ in 'shape"):
        scan(lambda c, x: (c.expand(2), x.clone()), jtorch.zeros(1), jtorch.ones(3, 1))
    with pytest.raises(UncapturedHigherOrderOpError, match="differ in 'dtype"):
        scan(lambda c, x: ((c + x).double(), x.clone()), jtorch.zeros(1), jtorch.ones(3, 1))
    with pytest.raises(UncapturedHigherOrderOpError, match="number of returns"):
        scan(lambda c, x: c + x, jtorch.zeros(1), jtorch.ones(3, 1))
    with pytest.raises(RuntimeError, match="requires init leaves"):
        scan(lambda c, x: (c, x), [], jtorch.ones(3))
    init = jtorch.zeros(1)
    carry, ys = scan(lambda c, x: (c, x), init, [])  # no xs: PyTorch returns (init, [])
    assert carry is init and ys == []


def test_under_compile():
    @jtorch.compile
    def f(x):
        return _ascan(lambda a, b: a + b, x, 0)

    x = np.arange(1.0, 6.0, dtype=np.float32)
    np.testing.assert_allclose(f(jtorch.tensor(x)).numpy(), np.cumsum(x))
