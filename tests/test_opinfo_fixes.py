"""Unit tests for ops added or fixed from the OpInfo sweep's fail list (no torch needed).

Expected values are closed forms: hand-computed softmaxes and batch statistics, matrices
built from known orthonormal factors, PIL's triangle filter worked out by hand.
"""

import math

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from tests.helpers import close, f32, same


def _log_softmax(z, axis):
    z = z - z.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


# ---------------------------------------------------------------------------
# linear_cross_entropy: weight (C, d_1..d_K, in), logits (N, C, d_1..d_K)


X = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 2.0]], np.float32)  # (N=2, in=3)
W = np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 10 - 0.5  # (C=2, d=2, in=3)


def test_linear_cross_entropy_k_dimensional_class_indices():
    target = np.array([[0, 1], [1, 1]])
    logp = _log_softmax(np.einsum("ni,cdi->ncd", X, W), axis=1)
    picked = np.take_along_axis(logp, target[:, None, :], axis=1)[:, 0]
    loss = F.linear_cross_entropy(f32(X), f32(W), torch.from_numpy(target))
    close(loss, -picked.mean())
    per = F.linear_cross_entropy(f32(X), f32(W), torch.from_numpy(target), reduction="none")
    close(per, -picked)


def test_linear_cross_entropy_probabilities_bias_and_unbatched():
    bias = np.array([[0.5, -0.5], [1.0, 0.0]], np.float32)
    probs = np.full((2, 2, 2), 0.5, np.float32)
    logp = _log_softmax(np.einsum("ni,cdi->ncd", X, W) + bias, axis=1)
    got = F.linear_cross_entropy(f32(X), f32(W), f32(probs), linear_bias=f32(bias), reduction="sum")
    close(got, -(probs * logp).sum(1).sum(), rtol=1e-5)
    w2 = W[:, 0]  # (C=2, in=3)
    got = F.linear_cross_entropy(f32(X[0]), f32(w2), torch.tensor(1))
    close(got, -_log_softmax(w2 @ X[0], 0)[1])


def test_linear_cross_entropy_bad_input_raises_as_pytorch():
    tgt = torch.tensor([[0, 1], [1, 1]])
    with pytest.raises(RuntimeError, match="expected input with dimensionality 1 or 2, got 3"):
        F.linear_cross_entropy(f32(np.zeros((1, 2, 3))), f32(W), tgt)
    with pytest.raises(RuntimeError, match=r"expected linear_bias shape \(2, 2\), got \(2,\)"):
        F.linear_cross_entropy(f32(X), f32(W), tgt, linear_bias=f32(np.zeros(2)))
    with pytest.raises(RuntimeError, match="requires batched input"):
        F.linear_cross_entropy(f32(X[0]), f32(W), torch.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        F.linear_cross_entropy(f32(X), f32(W), f32(np.full((2, 2, 2), 0.5)), ignore_index=0)


# ---------------------------------------------------------------------------
# matrix_exp at a large norm (the float32 OpInfo sample's regime)


def test_matrix_exp_jordan_block_is_accurate_relative_to_its_largest_entry():
    a, b = 10.0, 3.0  # exp([[a, b], [0, a]]) = e^a [[1, b], [0, 1]]
    got = torch.matrix_exp(f32([[a, b], [0.0, a]]))
    expected = math.exp(a) * np.array([[1.0, b], [0.0, 1.0]])
    close(got, expected, rtol=0, atol=2e-6 * expected.max())


# ---------------------------------------------------------------------------
# svd_lowrank / pca_lowrank: A = U0 diag(s0) V0^T with known orthonormal, zero-mean factors


_U0 = np.array([[1, 1], [-1, 1], [1, -1], [-1, -1]], np.float64) / 2  # (4, 2)
_V0 = np.array([[1, 0], [0, 0.6], [0, 0.8]], np.float64)  # (3, 2)
_S0 = np.array([5.0, 2.0])
_A = _U0 @ np.diag(_S0) @ _V0.T  # rank 2, (4, 3)


def _reconstruct(usv):
    u, s, v = (np.asarray(t.numpy(), np.float64) for t in usv)
    return u @ np.diag(s) @ v.T


def test_svd_lowrank_recovers_a_rank_two_matrix_both_orientations_and_with_m():
    torch.manual_seed(0)
    u, s, v = torch.svd_lowrank(f32(_A), q=2)
    assert (tuple(u.shape), tuple(s.shape), tuple(v.shape)) == ((4, 2), (2,), (3, 2))
    close(s, _S0, rtol=1e-5)
    close(u.mT @ u, np.eye(2), atol=1e-5)
    np.testing.assert_allclose(_reconstruct((u, s, v)), _A, atol=1e-5)
    wide = torch.svd_lowrank(f32(_A.T), q=2)  # m < n path
    np.testing.assert_allclose(_reconstruct(wide), _A.T, atol=1e-5)
    m = np.full((4, 3), 0.25)
    shifted = torch.svd_lowrank(f32(_A + m), q=2, M=f32(m))
    np.testing.assert_allclose(_reconstruct(shifted), _A, atol=1e-5)


def test_pca_lowrank_centres_columns_and_checks_q():
    offset = np.array([1.0, -2.0, 3.0])  # _A's columns have zero mean
    torch.manual_seed(0)
    u, s, v = torch.pca_lowrank(f32(_A + offset), q=2)
    close(s, _S0, rtol=1e-5)
    np.testing.assert_allclose(_reconstruct((u, s, v)), _A, atol=1e-5)
    with pytest.raises(
        ValueError,
        match=r"q\(=4\) must be non-negative integer and not "
        r"greater than min\(m, n\)=3",
    ):
        torch.pca_lowrank(f32(_A), q=4)


def test_svd_lowrank_is_differentiable():
    a = f32(_A).requires_grad_(True)
    u, s, v = torch.svd_lowrank(a, q=2)
    s.sum().backward()  # d(sum of singular values)/dA = U0 V0^T
    np.testing.assert_allclose(a.grad.numpy(), _U0 @ _V0.T, atol=1e-4)


# ---------------------------------------------------------------------------
# _safe_softmax, _batch_norm_with_update, _upsample_bilinear2d_aa


def test_safe_softmax_zeroes_all_masked_rows_with_zero_gradient():
    x = f32([[-math.inf, -math.inf], [0.0, math.log(3.0)]]).requires_grad_(True)
    y = torch._safe_softmax(x, 1)
    close(y.detach(), [[0.0, 0.0], [0.25, 0.75]])
    y[:, 0].sum().backward()  # d y00 / dx = y00 (e - y) = [3/16, -3/16]
    close(x.grad, [[0.0, 0.0], [0.1875, -0.1875]])
    assert (
        torch._safe_softmax(f32([1.0, 2.0]).half(), 0, dtype=torch.float32).dtype == torch.float32
    )
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch._safe_softmax(torch.tensor([1, 2]), 0)


def test_batch_norm_with_update_returns_reserve_and_updates_running_stats():
    x = f32([[1.0, 2.0], [3.0, 6.0]])  # batch mean [2, 4], biased var [1, 4]
    rm, rv = f32([0.0, 0.0]), f32([1.0, 1.0])
    out, mean, invstd, reserve = torch._batch_norm_with_update(x, None, None, rm, rv, 0.5, 0.0)
    close(out, [[-1.0, -1.0], [1.0, 1.0]])
    close(mean, [2.0, 4.0])
    close(invstd, [1.0, 0.5])
    same(reserve, np.zeros(0, np.uint8), dtype=torch.uint8)
    close(rm, [1.0, 2.0])  # 0.5 * 0 + 0.5 * mean
    close(rv, [1.5, 4.5])  # 0.5 * 1 + 0.5 * unbiased var [2, 8]


def test_upsample_bilinear2d_aa_is_pils_triangle_filter():
    x = f32(np.arange(4.0).reshape(1, 1, 1, 4))
    # 4 -> 2: support 2, taps (3/7, 3/7, 1/7) and (1/7, 3/7, 3/7)
    expected = [[[[5 / 7, 16 / 7]]]]
    close(torch._upsample_bilinear2d_aa(x, [1, 2], False), expected)
    close(torch._upsample_bilinear2d_aa(x, None, False, scale_factors=[1.0, 0.5]), expected)
    close(F.interpolate(x, size=(1, 2), mode="bilinear", antialias=True), expected)
    with pytest.raises(RuntimeError, match="It is expected input to be 4D tensor"):
        torch._upsample_bilinear2d_aa(x[0], [1, 2], False)


# ---------------------------------------------------------------------------
# Ties: jtorch breaks them stably (a valid answer where PyTorch leaves the order unspecified)


def test_tied_indices_keep_the_original_order():
    same(torch.sort(torch.tensor([True, False, True, False])).indices, [1, 3, 0, 2])
    same(torch.topk(torch.tensor([3, 1, 3, 1]), 2).indices, [0, 2])
    assert torch.kthvalue(torch.tensor([2, 1, 2, 1]), 2).indices.item() == 3
