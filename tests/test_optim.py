"""jtorch.optim without torch: convergence, first steps by hand, errors, state dicts,
scheduler closed forms and swa_utils (expected values from the documented rules)."""

import math
import warnings

import numpy as np
import pytest

import jtorch
from jtorch import nn, optim
from jtorch.optim import lr_scheduler, swa_utils

from .helpers import close as _close  # float32 steps vs float64 formulas

TARGET = np.array([1.0, -2.0, 0.5], np.float32)
G = np.array([0.5, -1.0, 2.0], np.float32)  # a fixed gradient for the hand-computed steps
P0 = np.array([0.1, 0.2, -0.3], np.float32)


def _param(values=P0):
    return jtorch.nn.Parameter(jtorch.tensor(np.asarray(values, np.float32)))


def _step(opt, p, grad):
    p.grad = jtorch.tensor(np.asarray(grad, np.float32))
    opt.step()
    return p.detach().numpy().astype(np.float64)


CONVERGE = [
    (optim.Adamax, dict(lr=0.1)),
    (optim.NAdam, dict(lr=0.1)),
    (optim.RAdam, dict(lr=0.1)),
    (optim.RMSprop, dict(lr=0.01)),
    (optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.5)),
    (optim.Adagrad, dict(lr=0.5)),
    (optim.Adadelta, dict(lr=10.0)),
    (optim.ASGD, dict(lr=0.1)),
    (optim.Rprop, dict(lr=0.1)),
    (optim.SparseAdam, dict(lr=0.1)),
]


@pytest.mark.parametrize("cls,kw", CONVERGE, ids=lambda v: getattr(v, "__name__", str(v)))
def test_converges_on_quadratic(cls, kw):
    p = _param(np.zeros(3))
    opt = cls([p], **kw)
    for _ in range(300):
        x = p.detach().numpy()
        p.grad = jtorch.tensor(2 * (x - TARGET))  # gradient of |x - target|^2
        if cls is optim.SparseAdam:  # it takes sparse gradients only
            p.grad = p.grad.to_sparse()
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), TARGET, atol=0.05)


def test_first_steps_by_hand():
    g, p0 = G.astype(np.float64), P0.astype(np.float64)
    lr, eps = 0.1, 1e-8
    # Adamax: m = (1-b1) g, u = |g| + eps, p -= lr / (1-b1) * m / u
    _close(_step(optim.Adamax([p := _param()], lr=lr), p, G), p0 - lr * g / (np.abs(g) + eps))
    # Adagrad: sum = g^2, p -= lr * g / (sqrt(sum) + eps)
    _close(_step(optim.Adagrad([p := _param()], lr=lr), p, G), p0 - lr * g / (np.abs(g) + 1e-10))
    # RMSprop: v = (1-alpha) g^2
    _close(
        _step(optim.RMSprop([p := _param()], lr=lr), p, G),
        p0 - lr * g / (np.sqrt(0.01 * g * g) + eps),
    )
    # Adadelta: delta = sqrt(0 + eps) / sqrt(v + eps) * g
    v = 0.1 * g * g
    _close(
        _step(optim.Adadelta([p := _param()], lr=1.0), p, G),
        p0 - np.sqrt(1e-6) / np.sqrt(v + 1e-6) * g,
    )
    # RAdam: rho_1 = 1 <= 5, so the first step is the unrectified p -= lr * m_hat = lr * g
    _close(_step(optim.RAdam([p := _param()], lr=lr), p, G), p0 - lr * g)
    # NAdam: mu_t = b1 (1 - 0.5 * 0.96^(t psi))
    b1, psi = 0.9, 4e-3
    mu1, mu2 = b1 * (1 - 0.5 * 0.96**psi), b1 * (1 - 0.5 * 0.96 ** (2 * psi))
    denom = np.abs(g) + eps
    want = p0 - lr * g / denom - lr * mu2 / (1 - mu1 * mu2) * (1 - b1) * g / denom
    _close(_step(optim.NAdam([p := _param()], lr=lr), p, G), want)
    # ASGD: p = p (1 - lambd eta) - eta g, with eta = lr on the first step; ax = p
    opt = optim.ASGD([p := _param()], lr=lr, lambd=0.01, alpha=0.75)
    want = p0 * (1 - 0.01 * lr) - lr * g
    _close(_step(opt, p, G), want)
    st = opt.state[p]
    _close(st["ax"].numpy(), want)
    assert math.isclose(st["eta"].item(), lr / (1 + 0.01 * lr) ** 0.75, rel_tol=1e-6)
    assert st["mu"].item() == 1.0


def test_rprop_steps_by_hand():
    opt = optim.Rprop([p := _param()], lr=0.1, etas=(0.5, 1.2), step_sizes=(0.01, 0.13))
    s = np.sign(G)
    p1 = _step(opt, p, G)  # no previous gradient: step size lr
    _close(p1, P0 - 0.1 * s)
    p2 = _step(opt, p, G)  # same sign: 0.1 * 1.2 clamped to 0.13
    _close(p2, p1 - 0.12 * s)
    p3 = _step(opt, p, -G)  # sign flip: step * 0.5, no move, prev = 0
    _close(p3, p2)
    _close(opt.state[p]["step_size"].numpy(), [0.06] * 3)
    _close(opt.state[p]["prev"].numpy(), 0.0)


def test_sparse_adam_updates_the_gradient_entries_only():
    opt = optim.SparseAdam([p := _param()], lr=0.1)
    p.grad = jtorch.tensor(np.array([0.0, -1.0, 0.0], np.float32)).to_sparse()
    opt.step()
    out = p.detach().numpy()
    # One Adam step moves the non-zero entry by lr * sign(g); the others stay.
    np.testing.assert_allclose(out, P0 + np.array([0, 0.1, 0]), rtol=1e-6)
    assert opt.state[p]["step"] == 1
    np.testing.assert_allclose(opt.state[p]["exp_avg"].numpy(), [0, -0.1, 0], rtol=1e-6)


def test_sparse_adam_refuses_dense_gradients():
    opt = optim.SparseAdam([p := _param()], lr=0.1)
    with pytest.raises(RuntimeError, match="does not support dense gradients"):
        _step(opt, p, np.array([0.0, -1.0, 0.0], np.float32))


def test_complex_params_update_real_and_imaginary_parts():
    z = jtorch.nn.Parameter(jtorch.tensor(np.array([1 + 1j, -2 + 0.5j], np.complex64)))
    opt = optim.Adagrad([z], lr=0.1)
    z.grad = jtorch.tensor(np.array([1 - 2j, 0.5 + 0j], np.complex64))
    opt.step()
    # view_as_real: each of re/im moves by lr * sign (|g| / sqrt(g^2)); zero parts stay.
    want = np.array([0.9 + 1.1j, -2.1 + 0.5j])
    np.testing.assert_allclose(z.detach().numpy(), want, rtol=1e-6)


@pytest.mark.parametrize(
    "cls,kw,msg",
    [
        (optim.Adamax, dict(lr=-1.0), "Invalid learning rate: -1.0"),
        (optim.NAdam, dict(momentum_decay=-0.1), "Invalid momentum_decay value: -0.1"),
        (optim.RAdam, dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
        (optim.RMSprop, dict(alpha=-0.5), "Invalid alpha value: -0.5"),
        (
            optim.Adagrad,
            dict(initial_accumulator_value=-1),
            "Invalid initial_accumulator_value value: -1",
        ),
        (optim.Adadelta, dict(rho=2.0), "Invalid rho value: 2.0"),
        (optim.Rprop, dict(etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
        (optim.SparseAdam, dict(eps=0.0), "Invalid epsilon value: 0.0"),
    ],
)
def test_invalid_arguments(cls, kw, msg):
    with pytest.raises(ValueError, match=msg):
        cls([_param()], **kw)


def test_lbfgs_rejects_param_groups_and_bad_line_search():
    with pytest.raises(ValueError, match="per-parameter options"):
        optim.LBFGS([{"params": [_param()]}, {"params": [_param()]}])
    opt = optim.LBFGS([p := _param()], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_solves_quadratic(line_search):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 4))
    a = (a @ a.T + 4 * np.eye(4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    x = jtorch.nn.Parameter(jtorch.zeros(4))
    A, B = jtorch.tensor(a), jtorch.tensor(b)
    opt = optim.LBFGS([x], line_search_fn=line_search, max_iter=50)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x @ (A @ x)) - B @ x
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(a, b), atol=1e-4)
    st = opt.state_dict()["state"][0]
    assert {
        "func_evals",
        "n_iter",
        "d",
        "t",
        "old_dirs",
        "old_stps",
        "ro",
        "H_diag",
        "prev_flat_grad",
        "prev_loss",
    } <= set(st)


@pytest.mark.parametrize(
    "cls,kw",
    [
        (optim.RMSprop, dict(momentum=0.9, centered=True)),
        (optim.NAdam, {}),
        (optim.ASGD, dict(t0=2)),
        (optim.Rprop, {}),
        (optim.Adagrad, dict(lr_decay=0.1)),
    ],
)
def test_state_dict_round_trip_resumes(cls, kw):
    rng = np.random.default_rng(2)
    grads = [rng.standard_normal(3).astype(np.float32) for _ in range(6)]
    p = _param()
    opt = cls([p], **kw)
    for g in grads[:3]:
        _step(opt, p, g)
    sd = opt.state_dict()
    assert sd["state"][0]["step"].dtype == jtorch.float32
    q = _param(p.detach().numpy())
    opt2 = cls([q], **kw)
    opt2.load_state_dict(sd)
    for g in grads[3:]:
        np.testing.assert_array_equal(_step(opt, p, g), _step(opt2, q, g))


def _sgd(lr=0.1):
    return optim.SGD([_param()], lr=lr, momentum=0.9)


def _lrs(sched, opt, n):
    out = [sched.get_last_lr()[0]]
    for _ in range(n):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
    return np.array(out)


@pytest.mark.parametrize(
    "make,closed",
    [
        (lambda o: lr_scheduler.StepLR(o, 4, gamma=0.5), lambda e: 0.1 * 0.5 ** (e // 4)),
        (
            lambda o: lr_scheduler.MultiStepLR(o, [3, 7], gamma=0.1),
            lambda e: 0.1 * 0.1 ** ((e >= 3) + (e >= 7)),
        ),
        (lambda o: lr_scheduler.ExponentialLR(o, 0.9), lambda e: 0.1 * 0.9**e),
        (
            lambda o: lr_scheduler.CosineAnnealingLR(o, 10, eta_min=0.01),
            lambda e: 0.01 + 0.09 * (1 + math.cos(math.pi * e / 10)) / 2,
        ),
        (
            lambda o: lr_scheduler.LinearLR(o, 0.25, 1.0, total_iters=8),
            lambda e: 0.1 * (0.25 + 0.75 * min(e, 8) / 8),
        ),
        (
            lambda o: lr_scheduler.PolynomialLR(o, total_iters=10, power=2.0),
            lambda e: 0.1 * (1 - min(e, 10) / 10) ** 2,
        ),
        (
            lambda o: lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3),
            lambda e: 0.1 * (0.5 if e < 3 else 1.0),
        ),
        (lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)), lambda e: 0.1 / (1 + e)),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=5),
            lambda e: 0.05 * (1 + math.cos(math.pi * (e % 5) / 5)),
        ),
        (
            lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.11, step_size_up=5),
            lambda e: 0.01 + 0.1 * (1 - abs((e % 10) / 5 - 1)),
        ),
    ],
)
def test_scheduler_closed_forms(make, closed):
    opt = _sgd()
    sched = make(opt)
    np.testing.assert_allclose(
        _lrs(sched, opt, 20), [closed(e) for e in range(21)], rtol=1e-9, atol=1e-12
    )


def test_one_cycle_endpoints_and_momentum():
    opt = _sgd()
    sched = lr_scheduler.OneCycleLR(
        opt, max_lr=1.0, total_steps=10, pct_start=0.5, anneal_strategy="linear"
    )
    lrs = _lrs(sched, opt, 9)
    # phase 1 ends at step 0.5 * 10 - 1 = 4 (max_lr), phase 2 at step 9 (min_lr)
    np.testing.assert_allclose(
        lrs[[0, 2, 4, 9]], [1 / 25, (1 + 1 / 25) / 2, 1.0, 1 / 25 / 1e4], rtol=1e-9
    )
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        sched.step()


def test_reduce_lr_on_plateau():
    opt = _sgd()
    sched = lr_scheduler.ReduceLROnPlateau(opt, patience=2, factor=0.5, cooldown=1, min_lr=0.02)
    lrs = []
    for m in [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5]:
        sched.step(m)
        lrs.append(sched.get_last_lr()[0])
    # 3 bad epochs -> halve; 1 cooldown epoch; 3 more bad -> halve; floor at min_lr
    assert lrs == [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025]


def test_sequential_and_chained():
    opt = _sgd()
    seq = lr_scheduler.SequentialLR(
        opt, [lr_scheduler.ConstantLR(opt, 0.1, 2), lr_scheduler.ExponentialLR(opt, 0.5)], [3]
    )
    np.testing.assert_allclose(_lrs(seq, opt, 5), [0.01, 0.01, 0.1, 0.1, 0.05, 0.025])
    opt = _sgd()
    chain = lr_scheduler.ChainedScheduler(
        [lr_scheduler.ExponentialLR(opt, 0.5), lr_scheduler.StepLR(opt, 2, 0.1)]
    )
    np.testing.assert_allclose(
        _lrs(chain, opt, 4), [0.1, 0.05, 0.0025, 0.00125, 0.0000625], rtol=1e-9
    )


def test_scheduler_state_dict_and_warnings():
    opt = _sgd()
    sched = lr_scheduler.StepLR(opt, 3)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 1 and sd["step_size"] == 3
    other = lr_scheduler.StepLR(_sgd(), 10)
    other.load_state_dict(sd)
    assert other.step_size == 3 and other.last_epoch == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()  # right order: no warning


def test_averaged_model_mean_and_ema():
    model = jtorch.nn.Linear(2, 1)
    swa = swa_utils.AveragedModel(model)
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5))
    ws = [np.full((1, 2), v, np.float32) for v in (1.0, 2.0, 6.0)]
    for w in ws:
        with jtorch.no_grad():
            model.weight.copy_(jtorch.tensor(w))
        swa.update_parameters(model)
        ema.update_parameters(model)
    np.testing.assert_allclose(swa.module.weight.detach().numpy(), np.full((1, 2), 3.0))
    # ema: 1 -> 0.5*1 + 0.5*2 = 1.5 -> 0.5*1.5 + 0.5*6 = 3.75
    np.testing.assert_allclose(ema.module.weight.detach().numpy(), np.full((1, 2), 3.75))
    assert int(swa.n_averaged) == 3


def test_swalr_anneals_to_swa_lr():
    opt = _sgd(lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    lrs = _lrs(sched, opt, 6)
    # linear interpolation from the current lr to swa_lr over anneal_epochs steps
    np.testing.assert_allclose(lrs, [1.0, 0.775, 0.55, 0.325, 0.1, 0.1, 0.1], rtol=1e-9)


# ---------------------------------------------------------------------------
# Adafactor and Muon: first steps by hand, from the documented formulas


def _rms(a):
    return float(np.sqrt(np.mean(np.square(np.asarray(a, np.float64)))))


def _step_all(opt, params, grads):
    for p, g in zip(params, grads):
        p.grad = jtorch.tensor(np.asarray(g, np.float32))
    opt.step()


def test_adafactor_vector_steps():
    # Step 1: the variance is exactly g*g (its lerp weight is 1**beta2_decay = 1), so the
    # update is sign(g), its RMS is 1 (no clipping), and the step size is
    # max(eps2, RMS(p)) * min(lr, 1/sqrt(t)).
    p = nn.Parameter(jtorch.tensor(P0))
    opt = jtorch.optim.Adafactor([p], lr=0.01, weight_decay=0.5)
    _step_all(opt, [p], [G])
    expected = P0 * (1 - 0.01 * 0.5) - max(1e-3, _rms(P0)) * 0.01 * np.sign(G)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-6, atol=1e-7)
    st = opt.state[p]
    assert list(st) == ["step", "variance"] and st["step"].dtype == jtorch.float32
    np.testing.assert_allclose(st["variance"].numpy(), G * G, rtol=1e-6)
    # Step 2 with the same gradient: the variance stays g*g.
    p1 = p.detach().numpy().copy()
    _step_all(opt, [p], [G])
    expected = p1 * (1 - 0.005) - max(1e-3, _rms(p1)) * min(0.01, 1 / math.sqrt(2)) * np.sign(G)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-6, atol=1e-7)
    assert float(st["step"]) == 2.0


def test_adafactor_factored_and_maximize():
    # A constant gradient 2: row and column means of g*g are 4, the estimate 4*4/4 = 4,
    # the update 2/sqrt(4) = 1 everywhere.
    p = nn.Parameter(jtorch.full((2, 3), 0.5))
    q = nn.Parameter(jtorch.full((2, 2, 3), 0.5))
    opt = jtorch.optim.Adafactor([p, q], maximize=True)
    _step_all(opt, [p, q], [np.full((2, 3), -2.0), np.full((2, 2, 3), -2.0)])
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


def _newton_schulz_scalar(x, steps=5, a=3.4445, b=-4.7750, c=2.0315):
    y = math.copysign(1.0, x)  # normalized by its norm
    for _ in range(steps):
        y = a * y + (b * y * y + c * y**4) * y
    return y


def test_muon_first_step_one_by_one():
    # A 1x1 matrix: the momentum and Nesterov mix only rescale the gradient, normalizing
    # leaves its sign, and the quintic iteration runs on that scalar (in bfloat16).
    p = nn.Parameter(jtorch.tensor([[0.5]]))
    opt = jtorch.optim.Muon([p], lr=0.1, weight_decay=0.2)
    _step_all(opt, [p], [[[-3.0]]])
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
        _step_all(opt, [p], [g])
        s = np.linalg.svd(-p.detach().numpy() / ratio, compute_uv=False)
        assert np.all((s > 0.5) & (s < 1.5)), s


def test_muon_errors():
    with pytest.raises(
        ValueError,
        match=r"Muon only supports 2D parameters whereas we found a "
        r"parameter with size: torch.Size\(\[3\]\)",
    ):
        jtorch.optim.Muon([nn.Parameter(jtorch.ones(3))])
    with pytest.raises(ValueError, match="Adjust learning rate function x is not supported"):
        jtorch.optim.Muon([nn.Parameter(jtorch.ones(2, 2))], adjust_lr_fn="x")
    p = nn.Parameter(jtorch.ones(2, 2))
    p.grad = jtorch.ones(2, 2)
    with pytest.raises(ValueError, match="Number of steps must be less than 100"):
        jtorch.optim.Muon([p], ns_steps=100).step()
    assert p.tolist() == [[1.0, 1.0], [1.0, 1.0]]
