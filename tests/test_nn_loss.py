"""Loss modules (`jtorch/nn/modules/loss.py`, `adaptive.py`), checked against numpy and the
defining formulas (the functional losses are in test_loss.py)."""

import numpy as np
import pytest

import jtorch
import jtorch.nn as nn

from .helpers import close
from .helpers import from_np as t

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _log_softmax(z, axis):
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


# ---------------------------------------------------------------------------
# Loss modules


def test_cross_entropy_module_options_match_formula():
    x, w = _x(6, 4), np.array([0.5, 1.0, 2.0, 1.5], np.float32)
    y = np.array([0, 3, 2, -100, 1, 3], np.int64)
    eps = 0.2
    loss = nn.CrossEntropyLoss(weight=t(w), label_smoothing=eps)(t(x), t(y))
    logp = _log_softmax(x.astype(np.float64), 1)
    keep = y != -100
    yc = np.where(keep, y, 0)
    nll = -(logp[np.arange(6), yc] * w[yc])[keep].sum() / w[yc][keep].sum()
    smooth = -(logp * w).sum(1)[keep].sum() / w[yc][keep].sum()
    close(loss, (1 - eps) * nll + eps / 4 * smooth)
    probs = np.exp(_log_softmax(_x(6, 4), 1)).astype(np.float32)
    loss = nn.CrossEntropyLoss(reduction="sum")(t(x), t(probs))
    close(loss, -(logp * probs).sum(), rtol=1e-5)


def test_nll_bce_kl_huber_margin_modules():
    x, y = _x(5, 3), np.array([2, 0, 1, 1, 2], np.int64)
    close(nn.NLLLoss(reduction="none")(t(x), t(y)), -x[np.arange(5), y])
    p, q = 1 / (1 + np.exp(-_x(3, 4))), RNG.uniform(0, 1, (3, 4))
    p, q = p.astype(np.float32), q.astype(np.float32)
    close(
        nn.BCELoss(reduction="sum")(t(p), t(q)),
        -(q * np.log(p) + (1 - q) * np.log(1 - p)).sum(),
        rtol=1e-5,
    )
    z, pw = _x(3, 4), np.array([1.0, 2.0, 0.5, 3.0], np.float32)
    sp = np.log1p(np.exp(-z))
    expected = ((1 - q) * z + (1 + (pw - 1) * q) * sp).mean()
    close(nn.BCEWithLogitsLoss(pos_weight=t(pw))(t(z), t(q)), expected, rtol=1e-5)
    lp, tg = _log_softmax(_x(4, 3), 1), np.exp(_log_softmax(_x(4, 3), 1))
    kl = (tg * (np.log(tg) - lp)).sum() / 4
    close(nn.KLDivLoss(reduction="batchmean")(t(lp), t(tg)), kl, rtol=1e-5)
    close(nn.KLDivLoss(reduction="batchmean", log_target=True)(t(lp), t(np.log(tg))), kl, rtol=1e-5)
    a, b = _x(3, 4) * 2, _x(3, 4)
    d = np.abs(a - b)
    close(
        nn.HuberLoss(delta=0.5)(t(a), t(b)), np.where(d < 0.5, 0.5 * d * d, 0.5 * (d - 0.25)).mean()
    )
    close(
        nn.SmoothL1Loss(beta=0.5)(t(a), t(b)), np.where(d < 0.5, 0.5 * d * d / 0.5, d - 0.25).mean()
    )
    m = x[np.arange(5), y][:, None]
    z2 = np.maximum(0.7 - m + x, 0) ** 2
    z2[np.arange(5), y] = 0
    close(nn.MultiMarginLoss(p=2, margin=0.7)(t(x), t(y)), (z2.sum(1) / 3).mean())


def test_ctc_loss_gradient_is_pytorchs():
    """PyTorch's CTC gradient w.r.t. log-probs is exp(lp) - posterior: it sums to zero over
    classes at every frame t < input_length, and is zero past the input length."""
    lp = t(_log_softmax(_x(6, 2, 5), 2).astype(np.float32)).requires_grad_()
    targets = t(np.array([[1, 2, 2], [3, 4, 0]], np.int64))
    loss = nn.CTCLoss(reduction="sum")(lp, targets, t(np.array([6, 4])), t(np.array([3, 2])))
    loss.backward()
    g = lp.grad.numpy()
    np.testing.assert_allclose(g[:, 0].sum(-1), 0, atol=1e-5)
    np.testing.assert_allclose(g[:4, 1].sum(-1), 0, atol=1e-5)
    np.testing.assert_array_equal(g[4:, 1], 0)
    assert np.abs(g).max() > 0.01
    zero_inf = nn.CTCLoss(reduction="none", zero_infinity=True)
    lp2 = t(_log_softmax(_x(2, 1, 3), 2).astype(np.float32)).requires_grad_()
    out = zero_inf(lp2, t(np.array([[1, 1]], np.int64)), t(np.array([2])), t(np.array([2])))
    assert out.item() == 0.0  # "1 1" needs a blank between: 3 frames, only 2 given
    out.sum().backward()
    np.testing.assert_array_equal(lp2.grad.numpy(), 0)


def test_loss_module_state_and_repr():
    w = t(np.ones(3, np.float32))
    m = nn.CrossEntropyLoss(weight=w, ignore_index=1, label_smoothing=0.1)
    assert repr(m) == "CrossEntropyLoss()"
    assert list(m.state_dict()) == ["weight"] and m.weight is w
    assert m.double().weight.dtype == jtorch.float64
    assert list(nn.BCEWithLogitsLoss(pos_weight=w).state_dict()) == ["pos_weight"]
    assert list(nn.NLLLoss().state_dict()) == []
    assert [n for n, _ in nn.NLLLoss().named_buffers()] == []
    assert "weight" in nn.NLLLoss()._buffers  # registered, as None
    assert repr(nn.TripletMarginWithDistanceLoss()) == (
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)"
    )
    assert nn.TripletMarginWithDistanceLoss(distance_function=abs).distance_function is abs
    lce = nn.LinearCrossEntropyLoss(4, 3)
    assert list(lce.state_dict()) == ["linear.weight"]


@pytest.mark.parametrize(
    "kw,reduction",
    [
        ({"size_average": False}, "sum"),
        ({"reduce": False}, "none"),
        ({"size_average": True}, "mean"),
        ({"size_average": False, "reduce": False}, "none"),
    ],
)
def test_legacy_reduction_args(kw, reduction):
    with pytest.warns(UserWarning, match=f"please use reduction='{reduction}' instead"):
        m = nn.L1Loss(**kw)
    assert m.reduction == reduction


def test_loss_constructor_errors():
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected weight to be None or 1D tensor, got 2D"):
        nn.MultiMarginLoss(weight=t(np.ones((2, 2), np.float32)))
    with pytest.raises(ValueError, match="expected margin to be greater than 0, got 0"):
        nn.TripletMarginLoss(margin=0)
    with pytest.raises(ValueError, match="expected margin to be greater than 0, got -1"):
        nn.TripletMarginWithDistanceLoss(margin=-1)
    with pytest.raises(TypeError, match="delta must be a float or int"):
        nn.HuberLoss(delta="1")
    with pytest.raises(RuntimeError, match="expected label_smoothing to be in range"):
        nn.LinearCrossEntropyLoss(2, 3, label_smoothing=2.0)
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        nn.NLLLoss2d()
    with pytest.raises(ValueError, match="nope is not a valid value for reduction"):
        nn.MSELoss(reduction="nope")(t(_x(2)), t(_x(2)))


def test_adaptive_log_softmax_is_a_distribution_and_scores_targets():
    jtorch.manual_seed(0)
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    x = t(_x(6, 8))
    target = jtorch.tensor([0, 4, 9, 2, 7, 5])
    lp = m.log_prob(x).detach().numpy()
    np.testing.assert_allclose(np.exp(lp).sum(1), 1.0, rtol=1e-5)  # a distribution per row
    out, loss = m(x, target)
    np.testing.assert_allclose(
        out.detach().numpy(), lp[np.arange(6), target.numpy()], rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(loss.item(), -lp[np.arange(6), target.numpy()].mean(), rtol=1e-5)
    loss.backward()
    assert all(p.grad is not None for p in m.parameters())
    # predict is the argmax of log_prob, whichever head columns win
    with jtorch.no_grad():
        m.head.weight[3:].mul_(20.0)  # push some rows' best head column into a cluster
    assert m.predict(x).tolist() == m.log_prob(x).argmax(1).tolist()
