"""Adafactor and Muon first steps by hand, BatchNorm fusion closed forms, skip_init,
stateless, memory formats, fork_rng, linalg errors (LinAlgError) and aliases, and
replace_all_batch_norm_modules_ -- expected values from the documented formulas."""

import math
import warnings

import numpy as np
import pytest

import jtorch
from jtorch import nn

P0 = np.array([0.1, 0.2, -0.3], np.float32)
G = np.array([0.5, -1.0, 2.0], np.float32)


def _rms(a):
    return float(np.sqrt(np.mean(np.square(np.asarray(a, np.float64)))))


def _step(opt, params, grads):
    for p, g in zip(params, grads):
        p.grad = jtorch.tensor(np.asarray(g, np.float32))
    opt.step()


# -- Adafactor -----------------------------------------------------------------------

def test_adafactor_vector_steps():
    # Step 1: the variance is exactly g*g (its lerp weight is 1**beta2_decay = 1), so the
    # update is sign(g), its RMS is 1 (no clipping), and the step size is
    # max(eps2, RMS(p)) * min(lr, 1/sqrt(t)).
    p = nn.Parameter(jtorch.tensor(P0))
    opt = jtorch.optim.Adafactor([p], lr=0.01, weight_decay=0.5)
    _step(opt, [p], [G])
    expected = P0 * (1 - 0.01 * 0.5) - max(1e-3, _rms(P0)) * 0.01 * np.sign(G)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-6, atol=1e-7)
    st = opt.state[p]
    assert list(st) == ["step", "variance"] and st["step"].dtype == jtorch.float32
    np.testing.assert_allclose(st["variance"].numpy(), G * G, rtol=1e-6)
    # Step 2 with the same gradient: the variance stays g*g.
    p1 = p.detach().numpy().copy()
    _step(opt, [p], [G])
    expected = p1 * (1 - 0.005) - max(1e-3, _rms(p1)) * min(0.01, 1 / math.sqrt(2)) * np.sign(G)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-6, atol=1e-7)
    assert float(st["step"]) == 2.0


def test_adafactor_factored_and_maximize():
    # A constant gradient 2: row and column means of g*g are 4, the estimate 4*4/4 = 4,
    # the update 2/sqrt(4) = 1 everywhere.
    p = nn.Parameter(jtorch.full((2, 3), 0.5))
    q = nn.Parameter(jtorch.full((2, 2, 3), 0.5))
    opt = jtorch.optim.Adafactor([p, q], maximize=True)
    _step(opt, [p, q], [np.full((2, 3), -2.0), np.full((2, 2, 3), -2.0)])
    for t in (p, q):
        np.testing.assert_allclose(t.detach().numpy(), 0.5 - 0.5 * 0.01, rtol=1e-6)
    assert tuple(opt.state[p]["row_var"].shape) == (2, 1)
    assert tuple(opt.state[p]["col_var"].shape) == (1, 3)
    assert tuple(opt.state[q]["row_var"].shape) == (2, 2, 1)
    assert tuple(opt.state[q]["col_var"].shape) == (2, 1, 3)
    np.testing.assert_allclose(opt.state[q]["col_var"].numpy(), 4.0)


def test_adafactor_errors():
    p = [nn.Parameter(jtorch.ones(2))]
    with pytest.raises(ValueError, match="beta2_decay should be <= 0 but is: 0.5"):
        jtorch.optim.Adafactor(p, beta2_decay=0.5)
    with pytest.raises(ValueError, match="Clipping threshold d should be >= 1 but is: 0.5"):
        jtorch.optim.Adafactor(p, d=0.5)
    with pytest.raises(ValueError, match="epsilon1 should be >= 0"):
        jtorch.optim.Adafactor(p, eps=(-1.0, 1e-3))
    c = nn.Parameter(jtorch.ones(2, dtype=jtorch.complex64))
    c.grad = jtorch.ones_like(c)
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        jtorch.optim.Adafactor([c]).step()
    assert c.tolist() == [1 + 0j, 1 + 0j]


# -- Muon ----------------------------------------------------------------------------

def _newton_schulz_scalar(x, steps=5, a=3.4445, b=-4.7750, c=2.0315):
    y = math.copysign(1.0, x)                 # normalized by its norm
    for _ in range(steps):
        y = a * y + (b * y * y + c * y ** 4) * y
    return y


def test_muon_first_step_one_by_one():
    # A 1x1 matrix: the momentum and Nesterov mix only rescale the gradient, normalizing
    # leaves its sign, and the quintic iteration runs on that scalar (in bfloat16).
    p = nn.Parameter(jtorch.tensor([[0.5]]))
    opt = jtorch.optim.Muon([p], lr=0.1, weight_decay=0.2)
    _step(opt, [p], [[[-3.0]]])
    expected = 0.5 * (1 - 0.1 * 0.2) - 0.1 * _newton_schulz_scalar(-3.0)
    np.testing.assert_allclose(p.item(), expected, rtol=2e-2)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].item(), -3.0 * 0.05, rtol=1e-6)
    assert list(opt.state[p]) == ["momentum_buffer"]


def test_muon_orthogonalizes_and_adjusts_lr():
    # The update has singular values near 1 (PyTorch documents roughly 0.5..1.5), scaled by
    # sqrt(max(1, rows/cols)) ("original") or 0.2*sqrt(max(rows, cols)) ("match_rms_adamw").
    g = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    for fn, ratio in ((None, math.sqrt(2)), ("match_rms_adamw", 0.2 * 2)):
        p = nn.Parameter(jtorch.zeros(4, 2))
        opt = jtorch.optim.Muon([p], lr=1.0, adjust_lr_fn=fn)
        _step(opt, [p], [g])
        s = np.linalg.svd(-p.detach().numpy() / ratio, compute_uv=False)
        assert np.all((s > 0.5) & (s < 1.5)), s


def test_muon_errors():
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found a "
                                         r"parameter with size: torch.Size\(\[3\]\)"):
        jtorch.optim.Muon([nn.Parameter(jtorch.ones(3))])
    with pytest.raises(ValueError, match="Adjust learning rate function x is not supported"):
        jtorch.optim.Muon([nn.Parameter(jtorch.ones(2, 2))], adjust_lr_fn="x")
    p = nn.Parameter(jtorch.ones(2, 2))
    p.grad = jtorch.ones(2, 2)
    with pytest.raises(ValueError, match="Number of steps must be less than 100"):
        jtorch.optim.Muon([p], ns_steps=100).step()
    assert p.tolist() == [[1.0, 1.0], [1.0, 1.0]]


# -- nn.utils ------------------------------------------------------------------------

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
    for cls, bn_cls, fuse in ((nn.Conv2d, nn.BatchNorm2d, nn.utils.fuse_conv_bn_eval),
                              (nn.Linear, nn.BatchNorm1d, nn.utils.fuse_linear_bn_eval)):
        m, bn = _conv_bn(cls, bn_cls)
        fused = fuse(m, bn)
        assert fused is not m and m.weight.flatten().tolist() == [2.0]
        assert fused.weight.flatten().tolist() == [3.0] and fused.bias.tolist() == [0.5]
        assert isinstance(fused.weight, nn.Parameter) and fused.weight.is_leaf
    w, b = nn.utils.fusion.fuse_conv_bn_weights(jtorch.ones(2, 3, 1, requires_grad=True), None,
                                                jtorch.zeros(3),
                                                jtorch.full((3,), 3.0), 1.0, None, None,
                                                transpose=True)
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
    assert bool((jtorch.rand(3) == a).all())            # construction drew no numbers
    assert tuple(m.weight.shape) == (2, 3) and m.bias is None and m.weight.requires_grad
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)

    lin = nn.Linear(2, 1)
    with pytest.warns(FutureWarning, match="use `torch.func.functional_call` instead"):
        y = nn.utils.stateless.functional_call(
            lin, {"weight": jtorch.ones(1, 2), "bias": jtorch.zeros(1)}, (jtorch.ones(1, 2),))
    assert y.tolist() == [[2.0]]

    seq = nn.Sequential(nn.Conv2d(2, 2, 1), nn.Sequential(nn.ConvTranspose2d(2, 2, 1)))
    before = [p.detach().clone() for p in seq.parameters()]
    assert nn.utils.convert_conv2d_weight_memory_format(seq, jtorch.channels_last) is seq
    assert all(bool((x == y).all()) for x, y in zip(before, seq.parameters()))


# -- random, func -------------------------------------------------------------------

def test_fork_rng_restores_state():
    jtorch.manual_seed(3)
    state = jtorch.get_rng_state()
    with jtorch.random.fork_rng(devices=[]):
        inside = jtorch.rand(2)
    assert bool((jtorch.get_rng_state() == state).all())
    assert bool((jtorch.rand(2) == inside).all())
    with jtorch.random.fork_rng(enabled=False):
        jtorch.rand(2)
    assert not bool((jtorch.get_rng_state() == state).all())


def test_replace_all_batch_norm_modules_():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert jtorch.func.replace_all_batch_norm_modules_(m) is m
    bn = m[1]
    assert not bn.track_running_stats and bn.running_mean is None and bn.running_var is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = m.eval()(jtorch.tensor([[1.0, 2.0], [3.0, 6.0]]))   # batch statistics in eval
    assert np.allclose(out.sum(0).detach().numpy(), 2 * bn.bias.detach().numpy(), atol=1e-5)


# -- linalg ----------------------------------------------------------------------------

def test_linalg_errors():
    err = jtorch.linalg.LinAlgError
    assert issubclass(err, RuntimeError)
    with pytest.raises(err, match=r"linalg.cholesky: The factorization could not be completed "
                                  r"because the input is not positive-definite \(the leading "
                                  r"minor of order 2 is not positive-definite\)."):
        jtorch.linalg.cholesky(jtorch.tensor([[1.0, 0.0], [0.0, -1.0]]))
    a = jtorch.zeros(3, 2, 2)
    a[0] = jtorch.eye(2)
    with pytest.raises(err, match=r"linalg.inv: \(Batch element 1\): The diagonal element 1 is "
                                  "zero, the inversion could not be completed"):
        jtorch.linalg.inv(a)
    with pytest.raises(err, match=r"torch.linalg.solve: The solver failed because the input "
                                  "matrix is singular."):
        jtorch.linalg.solve(jtorch.tensor([[1.0, 2.0], [2.0, 4.0]]), jtorch.ones(2))
    with pytest.raises(err, match=r"linalg.inv: \(Batch element 1\)"):
        a.matrix_power(-1)
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        jtorch.linalg.lu_factor(jtorch.zeros(2, 2))
    with pytest.raises(err, match="linalg.inv_ex: "):
        jtorch.linalg.inv_ex(a, check_errors=True)
    # Without check_errors the `_ex` variants report through `info` (LAPACK's 1-based index).
    assert jtorch.linalg.inv_ex(a).info.tolist() == [0, 1, 1]
    m = jtorch.tensor([[4.0, 2.0, 1.0], [2.0, 1.0, 0.0], [1.0, 0.0, 3.0]])
    assert jtorch.linalg.cholesky_ex(m).info.item() == 2          # det of the 2x2 minor is 0
    assert jtorch.linalg.cholesky_ex(jtorch.eye(2)).info.item() == 0


def test_linalg_matmul_and_special_logsumexp():
    assert jtorch.linalg.matmul(jtorch.ones(2, 3), jtorch.ones(3)).tolist() == [3.0, 3.0]
    x = jtorch.tensor([[1.0, 2.0], [0.0, 0.0]])
    np.testing.assert_allclose(jtorch.special.logsumexp(x, 1).numpy(),
                               [math.log(math.e + math.e ** 2), math.log(2)], rtol=1e-6)
