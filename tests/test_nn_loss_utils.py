"""Loss modules, `nn.utils` (clipping, parameter vectors, parametrizations) and the legacy
weight/spectral-norm hooks, checked against numpy and the defining formulas."""

import copy
import math
import pickle

import numpy as np
import pytest

import jtorch
import jtorch.nn as nn
from jtorch.nn.utils import parametrizations, parametrize

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


# ---------------------------------------------------------------------------
# Clipping and parameter vectors


def _params(grads):
    ps = []
    for g in grads:
        p = nn.Parameter(t(np.zeros_like(g)))
        p.grad = t(g.copy())
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_matches_numpy(norm_type):
    grads = [_x(3, 2), _x(4)]
    flat = np.concatenate([g.ravel() for g in grads]).astype(np.float64)
    total = (
        np.abs(flat).max()
        if norm_type == math.inf
        else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    )
    ps = _params(grads)
    n = nn.utils.clip_grad_norm_(ps, 0.5, norm_type=norm_type, foreach=True)
    close(n, total, rtol=1e-5)
    coef = min(1.0, 0.5 / (total + 1e-6))
    for p, g in zip(ps, grads):
        close(p.grad, g * coef, rtol=1e-5)
    ps = _params(grads)
    nn.utils.clip_grad_norm_(ps, 1e6, norm_type=norm_type)
    for p, g in zip(ps, grads):
        close(p.grad, g)


def test_clip_grad_norm_nonfinite_and_value():
    ps = _params([np.array([np.nan, 1.0], np.float32)])
    with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    grads = [_x(3, 3) * 3]
    ps = _params(grads)
    nn.utils.clip_grad_value_(ps, 0.5)
    close(ps[0].grad, np.clip(grads[0], -0.5, 0.5))
    assert nn.utils.get_total_norm([]).item() == 0.0


def test_parameters_vector_roundtrip():
    m = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert tuple(vec.shape) == (8,)
    close(vec, np.concatenate([m.weight.detach().numpy().ravel(), m.bias.detach().numpy()]))
    nn.utils.vector_to_parameters(t(np.arange(8, dtype=np.float32)), m.parameters())
    close(m.weight, np.arange(6).reshape(2, 3))
    close(m.bias, [6, 7])
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad


# ---------------------------------------------------------------------------
# Parametrizations


def test_norm_except_dim_and_weight_norm_ops():
    v = _x(3, 4, 2)
    close(jtorch.norm_except_dim(t(v), 2, 0), np.sqrt((v**2).sum((1, 2), keepdims=True)))
    close(jtorch.norm_except_dim(t(v), 2, 1), np.sqrt((v**2).sum((0, 2), keepdims=True)))
    close(jtorch.norm_except_dim(t(v), 2, -1), np.sqrt((v**2).sum()))
    g = RNG.uniform(1, 2, (1, 4, 1)).astype(np.float32)
    close(
        jtorch._weight_norm(t(v), t(g), 1),
        v * g / np.sqrt((v**2).sum((0, 2), keepdims=True)),
        rtol=1e-5,
    )


def test_weight_norm_parametrization():
    m = parametrizations.weight_norm(nn.Linear(4, 3))
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert list(m.state_dict()) == [
        "bias",
        "parametrizations.weight.original0",
        "parametrizations.weight.original1",
    ]
    g = m.parametrizations.weight.original0.detach().numpy()
    v = m.parametrizations.weight.original1.detach().numpy()
    assert g.shape == (3, 1)
    close(t(g[:, 0]), np.linalg.norm(v, axis=1), rtol=1e-5)
    with jtorch.no_grad():
        m.parametrizations.weight.original0.mul_(2)
    close(m.weight, 2 * v, rtol=1e-5)
    m(t(_x(2, 4))).sum().backward()
    assert m.parametrizations.weight.original0.grad is not None
    assert m.parametrizations.weight.original1.grad is not None
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and list(m.state_dict()) == ["bias", "weight"]
    close(m.weight, 2 * v, rtol=1e-5)


@pytest.mark.parametrize(
    "shape,kind",
    [
        ((4, 4), None),
        ((3, 3), "cayley"),
        ((5, 3), None),
        ((3, 5), None),
        ((5, 3), "matrix_exp"),
        ((4, 4), "householder"),
    ],
)
def test_orthogonal_parametrization_is_orthogonal(shape, kind):
    m = parametrizations.orthogonal(nn.Linear(shape[1], shape[0]), orthogonal_map=kind)
    w = m.weight.detach().numpy().astype(np.float64)
    small = min(shape)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    q = np.linalg.qr(_x(*shape) if shape[0] >= shape[1] else _x(*shape[::-1]))[0]
    q = (q if shape[0] >= shape[1] else q.T).astype(np.float32)
    with jtorch.no_grad():
        m.weight = t(q)  # right_inverse: the parametrized weight becomes q
    close(m.weight, q, atol=1e-5)
    m(t(_x(2, shape[1]))).sum().backward()
    assert m.parametrizations.weight.original.grad is not None


def test_orthogonal_householder_without_trivialization():
    m = parametrizations.orthogonal(nn.Linear(3, 5), use_trivialization=False)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    w = m.weight.detach().numpy().astype(np.float64)
    np.testing.assert_allclose(w.T @ w, np.eye(3), atol=1e-5)
    sq = parametrizations.orthogonal(nn.Linear(3, 3), use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        sq.weight = t(np.eye(3, dtype=np.float32))


def test_spectral_norm_parametrization():
    m = parametrizations.spectral_norm(nn.Linear(6, 4), n_power_iterations=5)
    assert list(m.state_dict()) == [
        "bias",
        "parametrizations.weight.original",
        "parametrizations.weight.0._u",
        "parametrizations.weight.0._v",
    ]
    u0 = m.parametrizations.weight[0]._u
    for _ in range(3):
        m(t(_x(2, 6)))
    assert m.parametrizations.weight[0]._u is u0  # updated in place
    sv = np.linalg.svd(m.weight.detach().numpy().astype(np.float64), compute_uv=False)
    np.testing.assert_allclose(sv[0], 1.0, rtol=1e-4)
    m.eval()
    before = u0.numpy().copy()
    m(t(_x(2, 6)))
    np.testing.assert_array_equal(u0.numpy(), before)  # no power iteration in eval
    b = parametrizations.spectral_norm(nn.Linear(3, 4), "bias")
    close(t(np.linalg.norm(b.bias.detach().numpy())), 1.0, rtol=1e-5)


def test_parametrize_register_cached_and_errors():
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

    m = parametrize.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    w = m.weight.detach().numpy()
    np.testing.assert_array_equal(w, w.T)
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    with parametrize.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m.weight = t(np.eye(3, dtype=np.float32))
    with pytest.raises(
        ValueError,
        match="does not have a parameter, a buffer, or a parametrized element with name 'nope'",
    ):
        parametrize.register_parametrization(nn.Linear(3, 3), "nope", Symmetric())
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(nn.Linear(3, 2), "weight", _FirstRow())
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules"):
        pickle.dumps(m)
    c = copy.deepcopy(m)
    assert (
        type(c) is type(m)
        and c.parametrizations.weight.original is not m.parametrizations.weight.original
    )
    close(c.weight, w)
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")


class _FirstRow(nn.Module):
    def forward(self, X):
        return X[:1]


# ---------------------------------------------------------------------------
# Legacy hooks


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_legacy_weight_norm_hook():
    with pytest.warns(FutureWarning, match="torch.nn.utils.weight_norm` is deprecated"):
        m = nn.utils.weight_norm(nn.Linear(4, 3))
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    with jtorch.no_grad():
        m.weight_g.mul_(3)
    x = _x(2, 4)
    v = m.weight_v.detach().numpy()
    out = m(t(x))
    close(out, x @ (3 * v).T + m.bias.detach().numpy(), rtol=1e-5)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        nn.utils.weight_norm(m)
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]
    close(m.weight, 3 * v, rtol=1e-5)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(m)


def test_legacy_spectral_norm_hook():
    # A weight with a known spectrum and a clear gap (sigma_2 / sigma_1 = 1/3): power
    # iteration converges to sigma_1 = 3 whatever the random start vectors are.
    u, _ = np.linalg.qr(RNG.standard_normal((4, 4)))
    v, _ = np.linalg.qr(RNG.standard_normal((5, 5)))
    w = (u * np.array([3.0, 1.0, 0.5, 0.25])) @ v[:4]
    lin = nn.Linear(5, 4)
    with jtorch.no_grad():
        lin.weight.copy_(t(w.astype(np.float32)))
    m = nn.utils.spectral_norm(lin, n_power_iterations=10)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert m.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    m(t(_x(2, 5)))
    np.testing.assert_allclose(m.weight.detach().numpy(), w / 3.0, rtol=1e-4, atol=1e-5)
    nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]
    assert isinstance(m.weight, nn.Parameter)


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
