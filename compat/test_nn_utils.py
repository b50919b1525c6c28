"""`torch.nn.utils` parity: gradient clipping, parameter vectors, parametrizations.

Parametrized modules go through the module-parity harness: same state_dict keys (PyTorch's
`parametrizations.weight.original*` layout), repr, outputs, gradients and buffers (the
spectral-norm power-iteration vectors) after copying PyTorch's weights.
"""

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.module_parity import Case, check  # noqa: E402
from compat.outcomes import same_outcome  # noqa: E402

_rng = np.random.default_rng(0)


def _x(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------------------
# Gradient clipping


_GRADS = [_x(3, 4), _x(5), _x(2, 2, 2)]


def _params(lib, grads=_GRADS, none_at=()):
    ps = []
    for i, g in enumerate(grads):
        p = lib.nn.Parameter(lib.tensor(_x(*g.shape)))
        if i not in none_at:
            p.grad = lib.tensor(g)
        ps.append(p)
    return ps


def _grads_equal(tp, jp, rtol=1e-5, atol=1e-6):
    for a, b in zip(tp, jp):
        if a.grad is None:
            assert b.grad is None
            continue
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 3.0, 0.5, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm(norm_type, max_norm):
    nt = float(norm_type)
    tp, jp = _params(torch, none_at=(1,)), _params(jtorch, none_at=(1,))
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type=nt)
    jn = jtorch.nn.utils.clip_grad_norm_(jp, max_norm, norm_type=nt)
    assert str(jn.dtype) == str(tn.dtype) and tuple(jn.shape) == tuple(tn.shape) == ()
    np.testing.assert_allclose(jn.item(), tn.item(), rtol=1e-5)
    _grads_equal(tp, jp)


@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_norm_single_tensor_and_foreach(foreach):
    tp, jp = _params(torch)[0], _params(jtorch)[0]
    tn = torch.nn.utils.clip_grad_norm_(tp, 0.3, foreach=False if foreach else foreach)
    jn = jtorch.nn.utils.clip_grad_norm_(jp, 0.3, foreach=foreach)
    np.testing.assert_allclose(jn.item(), tn.item(), rtol=1e-6)
    _grads_equal([tp], [jp])


def test_clip_grad_norm_nonfinite():
    grads = [np.array([1.0, np.inf], np.float32), _x(3)]
    for lib in (torch, jtorch):
        with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
            lib.nn.utils.clip_grad_norm_(_params(lib, grads), 1.0, error_if_nonfinite=True)
    tp, jp = _params(torch, grads), _params(jtorch, grads)
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.0)
    jn = jtorch.nn.utils.clip_grad_norm_(jp, 1.0)
    assert math.isinf(tn.item()) and math.isinf(jn.item())
    for a, b in zip(tp, jp):
        np.testing.assert_array_equal(np.isnan(b.grad.numpy()), np.isnan(a.grad.numpy()))


def test_clip_grad_norm_empty_and_no_grads():
    for lib in (torch, jtorch):
        with pytest.warns(UserWarning, match="empty generator"):
            n = lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        assert n.item() == 0.0
    tn = torch.nn.utils.clip_grad_norm_(_params(torch, none_at=(0, 1, 2)), 1.0)
    jn = jtorch.nn.utils.clip_grad_norm_(_params(jtorch, none_at=(0, 1, 2)), 1.0)
    assert tn.item() == jn.item() == 0.0


def test_get_total_norm_and_clip_grads_with_norm():
    tp, jp = _params(torch), _params(jtorch)
    tn = torch.nn.utils.get_total_norm([p.grad for p in tp], norm_type=3.0)
    jn = jtorch.nn.utils.get_total_norm([p.grad for p in jp], norm_type=3.0)
    np.testing.assert_allclose(jn.item(), tn.item(), rtol=1e-6)
    torch.nn.utils.clip_grads_with_norm_(tp, 0.7, tn)
    jtorch.nn.utils.clip_grads_with_norm_(jp, 0.7, jn)
    _grads_equal(tp, jp)


def test_clip_grad_norm_deprecated_alias():
    tp, jp = _params(torch), _params(jtorch)
    with pytest.warns(FutureWarning):
        tn = torch.nn.utils.clip_grad_norm(tp, 0.5)
    with pytest.warns(FutureWarning):
        jn = jtorch.nn.utils.clip_grad_norm(jp, 0.5)
    np.testing.assert_allclose(jn.item(), tn.item(), rtol=1e-6)
    _grads_equal(tp, jp)


@pytest.mark.parametrize("clip_value", [0.5, 2])
def test_clip_grad_value(clip_value):
    tp, jp = _params(torch, none_at=(2,)), _params(jtorch, none_at=(2,))
    assert torch.nn.utils.clip_grad_value_(tp, clip_value) is None
    assert jtorch.nn.utils.clip_grad_value_(jp, clip_value) is None
    _grads_equal(tp, jp, rtol=0, atol=0)


def test_parameters_to_vector_roundtrip():
    tm, jm = torch.nn.Linear(3, 2), jtorch.nn.Linear(3, 2)
    jm.load_state_dict({k: jtorch.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tv = torch.nn.utils.parameters_to_vector(tm.parameters())
    jv = jtorch.nn.utils.parameters_to_vector(jm.parameters())
    np.testing.assert_array_equal(jv.detach().numpy(), tv.detach().numpy())
    assert jv.requires_grad == tv.requires_grad
    new = _x(8)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tm.parameters())
    jtorch.nn.utils.vector_to_parameters(jtorch.tensor(new), jm.parameters())
    for (n, a), (_, b) in zip(tm.named_parameters(), jm.named_parameters()):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy(), err_msg=n)
        assert isinstance(b, jtorch.nn.Parameter)
    for lib in (torch, jtorch):
        with pytest.raises(TypeError, match="expected torch.Tensor, but got"):
            lib.nn.utils.vector_to_parameters(new, lib.nn.Linear(3, 2).parameters())


# ---------------------------------------------------------------------------
# Parametrizations through the module-parity harness


def _pz(nn):
    return nn.utils.parametrizations


def _conv(nn, name, *args, **kw):
    cls = getattr(nn, name, None)
    if cls is None:
        pytest.skip(f"jtorch.nn.{name} is not built yet")
    return cls(*args, **kw)


class _Symmetric:
    """Parametrization classes built on either library's Module."""

    @staticmethod
    def make(nn):
        class Symmetric(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).mT

        return Symmetric()

    @staticmethod
    def first_row(nn):
        class FirstRow(nn.Module):
            def forward(self, X):
                return X[:1]

        return FirstRow()


CASES = [
    Case("weight_norm.Linear", lambda nn: _pz(nn).weight_norm(nn.Linear(4, 3)), (_x(2, 4),)),
    Case("weight_norm.dim1", lambda nn: _pz(nn).weight_norm(nn.Linear(4, 3), dim=1), (_x(2, 4),)),
    Case(
        "weight_norm.dimNone",
        lambda nn: _pz(nn).weight_norm(nn.Linear(4, 3), dim=None),
        (_x(2, 4),),
    ),
    Case(
        "weight_norm.Bilinear_bias",
        lambda nn: _pz(nn).weight_norm(nn.Bilinear(2, 3, 2), name="bias"),
        (_x(2, 2), _x(2, 3)),
    ),
    Case("spectral_norm.Linear", lambda nn: _pz(nn).spectral_norm(nn.Linear(4, 5)), (_x(2, 4),)),
    Case(
        "spectral_norm.iters_eps",
        lambda nn: _pz(nn).spectral_norm(nn.Linear(6, 3), n_power_iterations=3, eps=1e-6),
        (_x(2, 6),),
    ),
    Case(
        "spectral_norm.Bilinear_dim1",
        lambda nn: _pz(nn).spectral_norm(nn.Bilinear(2, 3, 4), dim=1),
        (_x(2, 2), _x(2, 3)),
    ),
    Case(
        "spectral_norm.1d_bias",
        lambda nn: _pz(nn).spectral_norm(nn.Linear(3, 4), "bias"),
        (_x(2, 3),),
    ),
    Case(
        "spectral_norm.Conv2d",
        lambda nn: _pz(nn).spectral_norm(_conv(nn, "Conv2d", 2, 3, 2)),
        (_x(1, 2, 4, 4),),
    ),
    Case(
        "spectral_norm.ConvTranspose2d",
        lambda nn: _pz(nn).spectral_norm(_conv(nn, "ConvTranspose2d", 2, 3, 2)),
        (_x(1, 2, 3, 3),),
    ),
    Case(
        "orthogonal.square_matrix_exp", lambda nn: _pz(nn).orthogonal(nn.Linear(4, 4)), (_x(2, 4),)
    ),
    Case(
        "orthogonal.cayley",
        lambda nn: _pz(nn).orthogonal(nn.Linear(3, 3), orthogonal_map="cayley"),
        (_x(2, 3),),
    ),
    Case(
        "orthogonal.householder_tall", lambda nn: _pz(nn).orthogonal(nn.Linear(3, 5)), (_x(2, 3),)
    ),
    Case(
        "orthogonal.householder_wide", lambda nn: _pz(nn).orthogonal(nn.Linear(5, 3)), (_x(2, 5),)
    ),
    Case(
        "orthogonal.matrix_exp_wide",
        lambda nn: _pz(nn).orthogonal(nn.Linear(5, 3), orthogonal_map="matrix_exp"),
        (_x(2, 5),),
    ),
    Case(
        "orthogonal.householder_no_trivialization",
        lambda nn: _pz(nn).orthogonal(nn.Linear(3, 5), use_trivialization=False),
        (_x(2, 3),),
    ),
    Case(
        "register_parametrization.custom",
        lambda nn: nn.utils.parametrize.register_parametrization(
            nn.Linear(3, 3), "weight", _Symmetric.make(nn)
        ),
        (_x(2, 3),),
    ),
    Case(
        "register_parametrization.stacked",
        lambda nn: nn.utils.parametrize.register_parametrization(
            _pz(nn).weight_norm(nn.Linear(3, 3)), "weight", _Symmetric.make(nn)
        ),
        (_x(2, 3),),
    ),
    Case("legacy_weight_norm", lambda nn: nn.utils.weight_norm(nn.Linear(4, 3)), (_x(2, 4),)),
    Case(
        "legacy_weight_norm.dim1",
        lambda nn: nn.utils.weight_norm(nn.Linear(4, 3), dim=1),
        (_x(2, 4),),
    ),
    Case("legacy_spectral_norm", lambda nn: nn.utils.spectral_norm(nn.Linear(4, 5)), (_x(2, 4),)),
    Case(
        "legacy_spectral_norm.iters",
        lambda nn: nn.utils.spectral_norm(nn.Linear(4, 3), n_power_iterations=4, dim=1),
        (_x(2, 4),),
    ),
]


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_parametrized_module_parity(case):
    err = check(case)
    assert err is None, err


def _copy(tm, jm):
    jm.load_state_dict({k: jtorch.tensor(v.numpy()) for k, v in tm.state_dict().items()})


def test_remove_parametrizations_and_cached():
    for leave in (True, False):
        tm = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(3, 3))
        jm = jtorch.nn.utils.parametrizations.orthogonal(jtorch.nn.Linear(3, 3))
        _copy(tm, jm)
        with jtorch.nn.utils.parametrize.cached():
            assert jm.weight is jm.weight
        assert jm.weight is not jm.weight
        assert jtorch.nn.utils.parametrize.is_parametrized(jm)
        assert jtorch.nn.utils.parametrize.is_parametrized(jm, "weight")
        assert not jtorch.nn.utils.parametrize.is_parametrized(jm, "bias")
        assert jtorch.nn.utils.parametrize.type_before_parametrizations(jm) is jtorch.nn.Linear
        orig = jm.parametrizations.weight.original
        torch.nn.utils.parametrize.remove_parametrizations(tm, "weight", leave)
        jtorch.nn.utils.parametrize.remove_parametrizations(jm, "weight", leave)
        assert type(jm) is jtorch.nn.Linear and repr(jm) == repr(tm)
        assert jm.weight is orig and isinstance(jm.weight, jtorch.nn.Parameter)
        assert list(jm.state_dict()) == list(tm.state_dict())
        np.testing.assert_allclose(
            jm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-5, atol=1e-6
        )


def test_assigning_a_parametrized_tensor_calls_right_inverse():
    tm = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(4, 4))
    jm = jtorch.nn.utils.parametrizations.orthogonal(jtorch.nn.Linear(4, 4))
    _copy(tm, jm)
    q = np.linalg.qr(_x(4, 4))[0].astype(np.float32)
    with torch.no_grad():
        tm.weight = torch.tensor(q)
    with jtorch.no_grad():
        jm.weight = jtorch.tensor(q)
    np.testing.assert_allclose(jm.weight.detach().numpy(), q, atol=1e-5)
    np.testing.assert_allclose(jm.weight.detach().numpy(), tm.weight.detach().numpy(), atol=1e-5)
    sd_t, sd_j = tm.state_dict(), jm.state_dict()
    assert list(sd_t) == list(sd_j)
    for k in sd_t:
        np.testing.assert_allclose(sd_j[k].numpy(), sd_t[k].numpy(), atol=1e-5, err_msg=k)


def test_weight_norm_loads_legacy_checkpoint():
    legacy = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3))
    sd = {k: v.detach() for k, v in legacy.state_dict().items()}
    tm = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3))
    jm = jtorch.nn.utils.parametrizations.weight_norm(jtorch.nn.Linear(4, 3))
    tm.load_state_dict(sd)
    jm.load_state_dict({k: jtorch.tensor(v.numpy()) for k, v in sd.items()})
    assert list(jm.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(jm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)


def test_parametrization_errors():
    for lib in (torch, jtorch):
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "):
            lib.nn.utils.parametrize.register_parametrization(
                lib.nn.Linear(2, 2), "nope", _Symmetric.make(lib.nn)
            )
        with pytest.raises(
            ValueError, match="Registering a parametrization may not change the shape"
        ):
            lib.nn.utils.parametrize.register_parametrization(
                lib.nn.Linear(3, 2), "weight", _Symmetric.first_row(lib.nn)
            )
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "bias")
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight")
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2)))


def test_legacy_remove_hooks():
    for lib in (torch, jtorch):
        with pytest.warns(FutureWarning):
            m = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2))
        assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
        lib.nn.utils.remove_weight_norm(m)
        assert list(m.state_dict()) == ["bias", "weight"]
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2))
        assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
        lib.nn.utils.remove_spectral_norm(m)
        assert list(m.state_dict()) == ["bias", "weight"]
        assert not m._state_dict_hooks
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
            lib.nn.utils.remove_spectral_norm(m)


# ---------------------------------------------------------------------------
# BatchNorm fusion, skip_init, stateless.functional_call, conv weight memory formats

_frng = np.random.default_rng(3)

_W = _frng.standard_normal((4, 3, 3, 3)).astype(np.float32)
_BN = [_frng.standard_normal(4).astype(np.float32) for _ in range(3)] + [
    _frng.uniform(0.5, 2, 4).astype(np.float32)
]
_X = _frng.standard_normal((2, 3, 5, 5)).astype(np.float32)


def _bn(lib, cls, n):
    bn = cls(n)
    with lib.no_grad():
        for t, v in zip((bn.weight, bn.bias, bn.running_mean, bn.running_var), _BN):
            t.copy_(lib.tensor(v[:n]))
    return bn.eval()


def _fused(lib, kind):
    if kind == "conv":
        m, bn, x = lib.nn.Conv2d(3, 4, 3), _bn(lib, lib.nn.BatchNorm2d, 4), _X
    elif kind == "transposed":
        m, bn = lib.nn.ConvTranspose2d(4, 3, 3), _bn(lib, lib.nn.BatchNorm2d, 3)
        x = np.concatenate([_X, _X[:, :1]], 1)
    else:
        m, bn, x = lib.nn.Linear(3, 4), _bn(lib, lib.nn.BatchNorm1d, 4), _X[:, :, 0, 0]
    with lib.no_grad():
        m.weight.copy_(
            lib.tensor(_W.reshape(m.weight.shape) if kind != "linear" else _W[:, :, 0, 0])
        )
        m.bias.copy_(lib.tensor(_BN[0][: m.bias.shape[0]]))
    m.eval()
    if kind == "linear":
        f = lib.nn.utils.fuse_linear_bn_eval(m, bn)
    else:
        f = lib.nn.utils.fuse_conv_bn_eval(m, bn, transpose=kind == "transposed")
    xt = lib.tensor(x)
    return (
        f(xt).detach().numpy(),
        bn(m(xt)).detach().numpy(),
        type(f.weight).__name__,
        f.weight.requires_grad,
        f.bias.requires_grad,
        f.weight.is_leaf,
        f is m,
    )


@pytest.mark.parametrize("kind", ["conv", "transposed", "linear"])
def test_fuse_eval(kind):
    t, j = _fused(torch, kind), _fused(jtorch, kind)
    np.testing.assert_allclose(j[0], t[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(j[0], j[1], rtol=1e-5, atol=1e-5)  # fused == conv then bn
    assert t[2:] == j[2:]


def test_fuse_weights_and_errors():
    def weights(lib):
        w = lib.ones(4, 3, 1, 1, requires_grad=True)
        fw, fb = lib.nn.utils.fuse_conv_bn_weights(
            w, None, lib.zeros(4), lib.ones(4), 1e-5, None, None
        )
        lw, lb = lib.nn.utils.fuse_linear_bn_weights(
            lib.ones(4, 3, dtype=lib.float64),
            None,
            lib.ones(4),
            lib.ones(4),
            1e-5,
            lib.full((4,), 2.0),
            lib.ones(4),
        )
        return [
            (
                type(t).__name__,
                t.requires_grad,
                str(t.dtype),
                tuple(t.shape),
                np.round(t.detach().numpy().ravel()[:2], 6).tolist(),
            )
            for t in (fw, fb, lw, lb)
        ]

    same_outcome(weights)
    same_outcome(
        lambda lib: lib.nn.utils.fuse_linear_bn_eval(
            lib.nn.Linear(3, 4).eval(), lib.nn.BatchNorm1d(3).eval()
        )
    )
    same_outcome(
        lambda lib: lib.nn.utils.fuse_linear_bn_eval(
            lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4).eval()
        )
    )
    same_outcome(
        lambda lib: lib.nn.utils.fuse_conv_bn_eval(
            lib.nn.Conv2d(3, 4, 1).eval(), lib.nn.BatchNorm2d(4, track_running_stats=False).eval()
        )
    )


def test_skip_init_stateless_memory_format():
    def skip(lib):
        lib.manual_seed(0)
        a = lib.rand(3)
        lib.manual_seed(0)
        m = lib.nn.utils.skip_init(lib.nn.Linear, 3, 2)
        return (
            bool((a == lib.rand(3)).all()),
            tuple(m.weight.shape),
            m.weight.requires_grad,
            str(m.weight.device),
            type(m.weight).__name__,
        )

    assert same_outcome(skip)[0] is True
    same_outcome(lambda lib: lib.nn.utils.skip_init(int))
    same_outcome(lambda lib: lib.nn.utils.skip_init(lib.nn.ReLU))

    def stateless(lib):
        m = lib.nn.Linear(2, 1)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            y = lib.nn.utils.stateless.functional_call(
                m, {"weight": lib.ones(1, 2), "bias": lib.zeros(1)}, (lib.ones(1, 2),)
            )
        return y.tolist(), [(w.category.__name__, str(w.message)) for w in rec]

    same_outcome(stateless)

    def memory_format(lib):
        m = lib.nn.Sequential(
            lib.nn.Conv2d(3, 4, 3),
            lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 2)),
            lib.nn.Conv3d(1, 1, 1),
        )
        before = [p.detach().clone() for p in m.parameters()]
        ids = [id(p) for p in m.parameters()]
        out = lib.nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last)
        out = lib.nn.utils.convert_conv3d_weight_memory_format(out, lib.contiguous_format)
        return (
            out is m,
            [id(p) for p in m.parameters()] == ids,
            all(bool((a == b).all()) for a, b in zip(before, m.parameters())),
        )

    same_outcome(memory_format)
