"""`nn.utils`: gradient clipping and parameter vectors (against numpy), BatchNorm fusion
(closed forms), skip_init, stateless.functional_call and the conv weight memory-format
conversion. Parametrizations and the weight/spectral-norm hooks are in test_nn_parametrize.py."""

import math

import numpy as np
import pytest

import jtorch
from jtorch import nn

from .helpers import close
from .helpers import from_np as t

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _conv_bn(cls=nn.Conv2d, bn_cls=nn.BatchNorm2d):
    conv, bn = cls(1, 1, 1), bn_cls(1, eps=1.0)
    with jtorch.no_grad():
        conv.weight.fill_(2.0)
        conv.bias.fill_(1.0)
        bn.weight.fill_(3.0)
        bn.bias.fill_(0.5)
        bn.running_mean.fill_(1.0)
        bn.running_var.fill_(3.0)
    return conv.eval(), bn.eval()


def test_fuse_conv_and_linear_bn():
    # 1/sqrt(var + eps) = 1/2: weight 2*3/2 = 3, bias (1 - 1)*3/2 + 0.5 = 0.5.
    for cls, bn_cls, fuse in (
        (nn.Conv2d, nn.BatchNorm2d, nn.utils.fuse_conv_bn_eval),
        (nn.Linear, nn.BatchNorm1d, nn.utils.fuse_linear_bn_eval),
    ):
        m, bn = _conv_bn(cls, bn_cls)
        fused = fuse(m, bn)
        assert fused is not m and m.weight.flatten().tolist() == [2.0]
        assert fused.weight.flatten().tolist() == [3.0] and fused.bias.tolist() == [0.5]
        assert isinstance(fused.weight, nn.Parameter) and fused.weight.is_leaf
    w, b = nn.utils.fusion.fuse_conv_bn_weights(
        jtorch.ones(2, 3, 1, requires_grad=True),
        None,
        jtorch.zeros(3),
        jtorch.full((3,), 3.0),
        1.0,
        None,
        None,
        transpose=True,
    )
    assert tuple(w.shape) == (2, 3, 1) and np.allclose(w.detach().numpy(), 0.5)
    assert b.tolist() == [0.0, 0.0, 0.0] and not b.requires_grad and w.requires_grad
    m, bn = _conv_bn()
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(m.train(), bn)
    with pytest.raises(AssertionError, match="linear.out_features=1 and bn.num_features=3"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(2, 1).eval(), nn.BatchNorm1d(3).eval())


def test_skip_init_stateless_memory_format():
    jtorch.manual_seed(0)
    a = jtorch.rand(3)
    jtorch.manual_seed(0)
    m = nn.utils.skip_init(nn.Linear, 3, 2, bias=False)
    assert bool((jtorch.rand(3) == a).all())  # construction drew no numbers
    assert tuple(m.weight.shape) == (2, 3) and m.bias is None and m.weight.requires_grad
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)

    lin = nn.Linear(2, 1)
    with pytest.warns(FutureWarning, match="use `torch.func.functional_call` instead"):
        y = nn.utils.stateless.functional_call(
            lin, {"weight": jtorch.ones(1, 2), "bias": jtorch.zeros(1)}, (jtorch.ones(1, 2),)
        )
    assert y.tolist() == [[2.0]]

    seq = nn.Sequential(nn.Conv2d(2, 2, 1), nn.Sequential(nn.ConvTranspose2d(2, 2, 1)))
    before = [p.detach().clone() for p in seq.parameters()]
    assert nn.utils.convert_conv2d_weight_memory_format(seq, jtorch.channels_last) is seq
    assert all(bool((x == y).all()) for x, y in zip(before, seq.parameters()))


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
