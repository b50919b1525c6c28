"""PyTorch's derivative conventions at kinks, zeros and ties (no torch needed).

The expected values are PyTorch's documented formulas (tools/autograd/derivatives.yaml,
FunctionsManual.cpp) evaluated by hand at the singular point: a norm's gradient at a zero
vector is 0, sgn(0) = 0, clamp's bounds are inclusive, hardtanh's exclusive, reductions
to one value share the gradient among ties, and so on.
"""

import math

import numpy as np
import pytest

import jtorch as torch

F = torch.nn.functional


def grads(fn, *values):
    leaves = [torch.tensor(v, requires_grad=True) for v in values]
    fn(*leaves).backward()
    return [t.grad.numpy() for t in leaves]


def test_norms_at_zero_have_zero_gradient():
    for ord in (2, 1, 3, 1.5, math.inf):
        (g,) = grads(lambda x: torch.linalg.vector_norm(x, ord), [0.0, 0.0])
        np.testing.assert_array_equal(g, [0.0, 0.0])
    (g,) = grads(lambda x: torch.linalg.norm(x, dim=1).sum(), [[0.0, 0.0], [3.0, 4.0]])
    np.testing.assert_allclose(g, [[0.0, 0.0], [0.6, 0.8]], rtol=1e-6)
    (g,) = grads(lambda x: x.norm(), [[0.0, 0.0]])
    np.testing.assert_array_equal(g, [[0.0, 0.0]])


def test_normalize_zero_row_is_divided_by_eps():
    # normalize = x / max(|x|, eps): at a zero row only the division by eps remains.
    (g,) = grads(lambda x: (F.normalize(x) * torch.tensor([[1.0, 2.0]])).sum(), [[0.0, 0.0]])
    np.testing.assert_allclose(g, [[1e12, 2e12]], rtol=1e-6)


def test_inf_norm_shares_ties_and_p_below_one_skips_zeros():
    (g,) = grads(lambda x: torch.linalg.vector_norm(x, math.inf), [-2.0, 1.0, 2.0])
    np.testing.assert_array_equal(g, [-0.5, 0.0, 0.5])
    (g,) = grads(lambda x: torch.linalg.vector_norm(x, 0.5), [0.0, 1.0])
    np.testing.assert_array_equal(g, [0.0, 1.0])


def test_kinks():
    np.testing.assert_array_equal(grads(lambda x: x.abs().sum(), [0.0, -2.0])[0], [0.0, -1.0])
    np.testing.assert_array_equal(grads(lambda x: torch.relu(x).sum(), [0.0, 1.0])[0], [0, 1])
    np.testing.assert_array_equal(
        grads(lambda x: F.hardtanh(x).sum(), [-1.0, 1.0, 0.0])[0], [0.0, 0.0, 1.0]
    )
    np.testing.assert_array_equal(
        grads(lambda x: x.clamp(0, 1).sum(), [0.0, 1.0, 2.0])[0], [1.0, 1.0, 0.0]
    )
    g = grads(
        lambda x, lo, hi: torch.clamp(x, lo, hi).sum(),
        [0.0, 3.0, -2.0],
        [0.0, 1.0, 0.0],
        [1.0, 1.0, -1.0],
    )
    # x at its lower bound keeps the gradient; max wins when min > max
    np.testing.assert_array_equal(g[0], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(g[1], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(g[2], [0.0, 1.0, 1.0])
    np.testing.assert_allclose(
        grads(lambda x: F.hardsigmoid(x).sum(), [-3.0, 0.0, 3.0])[0], [0.0, 1 / 6, 0.0], rtol=1e-6
    )
    np.testing.assert_allclose(
        grads(lambda x: F.hardswish(x).sum(), [-3.0, 1.5, 3.0])[0], [0.0, 1.0, 1.0], rtol=1e-6
    )


def test_ties_share_the_gradient():
    np.testing.assert_array_equal(grads(lambda x: x.max(), [1.0, 3.0, 3.0])[0], [0, 0.5, 0.5])
    np.testing.assert_allclose(
        grads(lambda x: x.median(), [1.0, 1.0, 2.0, 1.0])[0], [1 / 3, 1 / 3, 0.0, 1 / 3], rtol=1e-6
    )
    np.testing.assert_array_equal(grads(lambda x: x.max(), [math.nan, 1.0])[0], [1.0, 0.0])
    g = grads(lambda x, y: torch.fmax(x, y).sum(), [1.0, 2.0], [1.0, 3.0])
    np.testing.assert_array_equal(g[0], [1.0, 0.0])
    np.testing.assert_array_equal(g[1], [0.0, 1.0])


def test_zeros_of_log_like_functions():
    (g,) = grads(lambda x: torch.special.entr(x).sum(), [0.0, -1.0])
    assert g[0] == math.inf and math.isnan(g[1])
    gx, gy = grads(lambda x, y: torch.xlogy(x, y).sum(), [0.0, 0.0], [0.0, 1.0])
    np.testing.assert_array_equal(gx, [0.0, 0.0])
    assert math.isnan(gy[0]) and gy[1] == 0.0
    (g,) = grads(lambda x: torch.logit(x).sum(), [0.0])
    assert g[0] == math.inf
    (g,) = grads(lambda x: torch.logit(x, eps=0.1).sum(), [0.1, 0.0])
    np.testing.assert_allclose(g, [1 / 0.09, 0.0], rtol=1e-5)
    assert grads(lambda x: torch.lgamma(x).sum(), [0.0])[0][0] == -math.inf


def test_zero_exponents_and_origins():
    np.testing.assert_array_equal(grads(lambda x: x.pow(0.0).sum(), [0.0])[0], [0.0])
    gx, gy = grads(lambda x, y: x.pow(y).sum(), [0.0, 0.0], [0.0, 2.0])
    np.testing.assert_array_equal(gx, [0.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 0.0])
    gy, gx = grads(lambda y, x: torch.atan2(y, x).sum(), [0.0], [0.0])
    np.testing.assert_array_equal(np.concatenate([gy, gx]), [0.0, 0.0])
    assert all(math.isnan(v[0]) for v in grads(lambda x, y: torch.hypot(x, y).sum(), [0.0], [0.0]))
    np.testing.assert_array_equal(
        grads(lambda x, y: torch.copysign(x, y).sum(), [0.0], [-1.0])[0], [0.0]
    )


def test_constant_std_and_bce_edges():
    np.testing.assert_array_equal(grads(lambda x: x.std(), [1.0, 1.0])[0], [0.0, 0.0])
    (g,) = grads(lambda x: F.binary_cross_entropy(x, torch.tensor([1.0, 0.0])), [1.0, 0.0])
    np.testing.assert_array_equal(g, [0.0, 0.0])
    (g,) = grads(lambda x: F.softplus(x, threshold=1.0).sum(), [1.0])
    np.testing.assert_allclose(g, [1 / (1 + math.exp(-1))], rtol=1e-6)


@pytest.mark.parametrize(
    "fn",
    [
        torch.relu,
        F.relu6,
        F.hardtanh,
        F.hardsigmoid,
        F.hardswish,
        torch.abs,
        lambda x: x.clamp(-1, 1),
    ],
)
def test_forward_values_keep_nan(fn):
    out = fn(torch.tensor([math.nan, 0.5]))
    assert math.isnan(float(out[0]))


def test_conventions_hold_in_forward_mode():
    import jtorch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(torch.tensor([0.0, 0.0]), torch.tensor([1.0, 1.0]))
        t = fwAD.unpack_dual(torch.linalg.vector_norm(x)).tangent
    assert float(t) == 0.0


def test_pinv_gradient_on_a_rank_deficient_matrix():
    # pinv is differentiable where the rank stays constant: along A(t) = (a + t da)(b + t db)^T
    # (3 x 3 of rank 2, as PyTorch's OpInfo builds it), d/dt sum(w * pinv(A(t))) from float32
    # autograd matches a central difference computed in float64 with numpy's pinv.
    rng = np.random.default_rng(0)
    a, b = (np.linalg.qr(rng.random((3, 2)))[0] for _ in range(2))
    da, db = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    w = rng.standard_normal((3, 3))

    def f(t):
        return float(np.sum(w * np.linalg.pinv((a + t * da) @ (b + t * db).T)))

    h = 1e-6
    expected = (f(h) - f(-h)) / (2 * h)
    at, bt = (torch.tensor(v, dtype=torch.float32, requires_grad=True) for v in (a, b))
    (torch.linalg.pinv(at @ bt.mT) * torch.tensor(w, dtype=torch.float32)).sum().backward()
    actual = float(np.sum(at.grad.numpy() * da) + np.sum(bt.grad.numpy() * db))
    np.testing.assert_allclose(actual, expected, rtol=1e-4)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_of_a_non_symmetric_input_has_pytorchs_hermitian_gradient(uplo):
    # linalg_eig_backward (hermitian): gA = V (diag(gL) + F * skew(V^T gV)) V^T with
    # F_ij = 1 / (L_j - L_i) off the diagonal, V and L from the UPLO triangle alone.
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 4)).astype(np.float32)
    gL = rng.standard_normal(4).astype(np.float32)
    W = rng.standard_normal((4, 4)).astype(np.float32)
    L, V = np.linalg.eigh(A.astype(np.float64), UPLO=uplo)
    gV = 2 * V * W
    F = 1 / (L[None, :] - L[:, None] + np.eye(4)) - np.eye(4)
    VtgV = V.T @ gV
    expected = V @ (np.diag(gL) + F * (VtgV - VtgV.T) / 2) @ V.T

    def loss(a):
        lam, vec = torch.linalg.eigh(a, UPLO=uplo)
        return (lam * torch.tensor(gL)).sum() + (vec * vec * torch.tensor(W)).sum()

    (g,) = grads(loss, A)
    np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-4)
    (g,) = grads(lambda a: (torch.linalg.eigvalsh(a, UPLO=uplo) * torch.tensor(gL)).sum(), A)
    np.testing.assert_allclose(g, V @ np.diag(gL) @ V.T, rtol=1e-4, atol=1e-5)


def test_matrix_norm_gives_zero_entries_no_gradient():
    # inf-norm = max row sum of |x|: the maximal row's gradient is sgn(x), 0 at 0
    (g,) = grads(
        lambda x: torch.linalg.matrix_norm(x, math.inf), [[0.0, 1.0, -2.0], [1.0, 1.0, 0.0]]
    )
    np.testing.assert_array_equal(g, [[0.0, 1.0, -1.0], [0.0, 0.0, 0.0]])
    (g,) = grads(lambda x: torch.linalg.norm(x, 1), [[0.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(g, [[0.0, 0.0], [0.0, 0.0]])
