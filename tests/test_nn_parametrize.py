"""Parametrizations (`nn.utils.parametrize`, `nn.utils.parametrizations`) and the legacy
weight/spectral-norm hooks (`nn.utils.weight_norm`, `nn.utils.spectral_norm`), checked against
the defining formulas."""

import copy
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
