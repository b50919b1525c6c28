"""Loss functions, checked against formulas evaluated with numpy."""

import math

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F

from .helpers import close
from .helpers import from_np as t

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)


def test_regression_losses_and_reductions():
    close(F.mse_loss(t(A), t(B)), np.mean((A - B) ** 2))
    close(F.l1_loss(t(A), t(B), reduction="sum"), np.sum(np.abs(A - B)))
    close(F.l1_loss(t(A), t(B), size_average=False), np.sum(np.abs(A - B)))
    close(F.l1_loss(t(A), t(B), reduce=False), np.abs(A - B))
    d = np.abs(A - B)
    close(
        F.smooth_l1_loss(t(A), t(B), beta=0.5, reduction="none"),
        np.where(d < 0.5, 0.5 * d**2 / 0.5, d - 0.25),
    )
    close(
        F.huber_loss(t(A), t(B), delta=0.5, reduction="none"),
        np.where(d < 0.5, 0.5 * d**2, 0.5 * (d - 0.25)),
    )
    # Promotion: float32 input with a float64 target gives float64.
    assert F.mse_loss(t(A), t(B.astype(np.float64))).dtype == jtorch.float64


def test_invalid_reduction():
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.mse_loss(t(A), t(B), reduction="foo")


def log_softmax(x, axis=1):
    x = x - x.max(axis, keepdims=True)
    return x - np.log(np.exp(x).sum(axis, keepdims=True))


def test_nll_and_cross_entropy():
    target = np.array([0, 3, 1])
    lp = log_softmax(A)
    picked = -lp[np.arange(3), target]
    close(F.cross_entropy(t(A), t(target)), picked.mean())
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    close(
        F.cross_entropy(t(A), t(target), weight=t(w)), (picked * w[target]).sum() / w[target].sum()
    )
    close(F.nll_loss(t(lp), t(np.array([0, -100, 1]))), (picked[0] + picked[2]) / 2)
    probs = np.exp(log_softmax(B))
    close(F.cross_entropy(t(A), t(probs)), -(lp * probs).sum(1).mean())
    ls = 0.1
    smooth = -lp.sum(1).mean()
    close(
        F.cross_entropy(t(A), t(target), label_smoothing=ls),
        (1 - ls) * picked.mean() + ls / 4 * smooth,
    )
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.nll_loss(t(lp), t(np.array([0, 1, 5])))


def test_nll_loss_nd():
    x = RNG.standard_normal((2, 3, 2, 2))
    tg = np.array([[[0, 1], [2, 0]], [[1, 1], [2, 2]]])
    out = F.nll_loss(t(x), t(tg), reduction="none").numpy()
    expect = -np.take_along_axis(x, tg[:, None], axis=1)[:, 0]
    np.testing.assert_allclose(out, expect)


def test_binary_cross_entropy_variants():
    p = 1 / (1 + np.exp(-A))
    y = (B > 0).astype(np.float32)
    expect = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    close(F.binary_cross_entropy(t(p), t(y), reduction="none"), expect, rtol=1e-4)
    close(F.binary_cross_entropy_with_logits(t(A), t(y), reduction="none"), expect, rtol=1e-4)
    pw = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    close(
        F.binary_cross_entropy_with_logits(t(A), t(y), pos_weight=t(pw), reduction="none"),
        -(pw * y * np.log(p) + (1 - y) * np.log(1 - p)),
        rtol=1e-4,
    )
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(t(p), t(y[0]))


def test_kl_div_and_poisson():
    q = np.exp(log_softmax(B))
    close(F.kl_div(t(A), t(q), reduction="batchmean"), (q * (np.log(q) - A)).sum() / 3)
    close(
        F.kl_div(t(A), t(np.log(q)), reduction="sum", log_target=True), (q * (np.log(q) - A)).sum()
    )
    close(F.poisson_nll_loss(t(A), t(np.abs(B))), (np.exp(A) - np.abs(B) * A).mean())


def test_margin_losses():
    y = np.array([1.0, -1.0, 1.0], np.float32)
    close(
        F.margin_ranking_loss(t(A[:, 0]), t(B[:, 0]), t(y), margin=0.1),
        np.maximum(-y * (A[:, 0] - B[:, 0]) + 0.1, 0).mean(),
    )
    cos = (A * B).sum(1) / np.sqrt((A * A).sum(1) * (B * B).sum(1))
    close(
        F.cosine_embedding_loss(t(A), t(B), t(y), reduction="none"),
        np.where(y == 1, 1 - cos, np.maximum(cos, 0)),
    )
    target = np.array([0, 3, 1])
    m = np.maximum(1 - A[np.arange(3), target][:, None] + A, 0)
    m[np.arange(3), target] = 0
    close(F.multi_margin_loss(t(A), t(target), reduction="none"), m.sum(1) / 4)
    dp = np.linalg.norm(A - B + 1e-6, axis=1)
    dn = np.linalg.norm(A - 2 * B + 1e-6, axis=1)
    close(F.triplet_margin_loss(t(A), t(B), t(2 * B)), np.maximum(1 + dp - dn, 0).mean())


def test_gaussian_nll_and_ctc():
    var = np.full((3, 4), 2.0, np.float32)
    close(
        F.gaussian_nll_loss(t(A), t(B), t(var), full=True),
        (0.5 * (np.log(var) + (A - B) ** 2 / var) + 0.5 * math.log(2 * math.pi)).mean(),
    )
    with pytest.raises(ValueError, match="var has negative"):
        F.gaussian_nll_loss(t(A), t(B), t(-var))
    # CTC with one frame and an empty target: -log p(blank).
    lp = log_softmax(A[:1, None, :], axis=2)
    out = F.ctc_loss(t(lp), t(np.zeros((1, 0), np.int64)), [1], [0], reduction="sum")
    close(out, -lp[0, 0, 0])


def _np_log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_linear_cross_entropy_and_triplet_with_distance():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    tgt = np.array([0, 4, 2, 1])
    xs, ws, ts = (jtorch.from_numpy(v) for v in (x, w, tgt))
    loss = F.linear_cross_entropy(xs, ws, ts)
    expected = -_np_log_softmax(x @ w.T)[np.arange(4), tgt].mean()
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-5)
    a, p, n = (rng.standard_normal((3, 2)).astype(np.float32) for _ in range(3))
    d = lambda u, v: np.sqrt(((u - v + 1e-6) ** 2).sum(-1))  # pairwise_distance, eps=1e-6
    got = F.triplet_margin_with_distance_loss(*(jtorch.from_numpy(v) for v in (a, p, n)))
    np.testing.assert_allclose(got.item(), np.maximum(d(a, p) - d(a, n) + 1.0, 0).mean(), rtol=1e-5)


def test_bce_dtype_mismatch_names_dtypes_as_pytorch_does():
    # PyTorch: "Found dtype Long but expected Float" (c10 names, not numpy's "int64")
    with pytest.raises(RuntimeError, match="Found dtype Long but expected Float"):
        F.binary_cross_entropy(jtorch.rand(3), jtorch.tensor([1, 0, 1]))
