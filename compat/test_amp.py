"""CPU autocast (bfloat16) and GradScaler against real PyTorch."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

RNG = np.random.default_rng(0)


def both(shape, dtype="float32", low=None):
    a = RNG.standard_normal(shape).astype(dtype)
    if low is not None:
        a = np.abs(a) + low
    return torch.from_numpy(a.copy()), jtorch.from_numpy(a.copy())


def _jt_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


X, JX = both((4, 6))
W, JW = both((5, 6))
B, JB = both((5,))
M, JM = both((6, 6))
P, JP = both((4, 6), low=0.1)
C2, JC2 = both((1, 2, 5, 5))
K2, JK2 = both((3, 2, 3, 3))
T3, JT3 = both((2, 3, 4))
XH, JXH = X.bfloat16(), JX.bfloat16()
LBL, JLBL = torch.tensor([0, 1, 2, 3]), jtorch.tensor([0, 1, 2, 3])

# name -> f(lib, tensors...) ; each case also runs some ops outside autocast's lists.
CASES = {
    "mm": lambda L, x, w, m: L.mm(x, m),
    "matmul_operator": lambda L, x, w, m: x @ m,
    "linear": lambda L, x, w, m: L.nn.functional.linear(x, w),
    "addmm": lambda L, x, w, m: L.addmm(x, x, m),
    "bmm": lambda L, x, w, m: L.bmm(x.reshape(2, 2, 6), m.reshape(2, 6, 3)),
    "add_unlisted": lambda L, x, w, m: x + 1,
    "relu_unlisted": lambda L, x, w, m: L.relu(x),
    "softmax_cpu_unlisted": lambda L, x, w, m: L.softmax(x, -1),
    "mixed_promote": lambda L, x, w, m: L.mm(x, m) + x,
    "mse_loss": lambda L, x, w, m: L.nn.functional.mse_loss(x.bfloat16(), x.bfloat16()),
    "l1_loss": lambda L, x, w, m: L.nn.functional.l1_loss(x.bfloat16(), x.bfloat16()),
    "prod": lambda L, x, w, m: L.prod(x.bfloat16()),
    "cdist": lambda L, x, w, m: L.cdist(x.bfloat16(), x.bfloat16()),
    "float64_untouched": lambda L, x, w, m: L.mm(x.double(), m.double()),
    "einsum": lambda L, x, w, m: L.einsum("ij,jk->ik", x, m),
    "tensordot": lambda L, x, w, m: L.tensordot(x, m, 1),
    "sdpa": lambda L, x, w, m: L.nn.functional.scaled_dot_product_attention(
        x[None], x[None], x[None]
    ),
    "layer_norm_cpu_unlisted": lambda L, x, w, m: L.nn.functional.layer_norm(x.bfloat16(), (6,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_autocast_cpu_output_dtype(name):
    f = CASES[name]
    with torch.autocast("cpu"):
        expected = f(torch, X, W, M)
    with jtorch.autocast("cpu"):
        actual = f(jtorch, JX, JW, JM)
    assert _jt_name(actual.dtype) == _jt_name(expected.dtype)
    np.testing.assert_allclose(
        np.asarray(actual.float()), expected.float().numpy(), rtol=2e-2, atol=2e-2
    )


def test_autocast_cpu_conv_and_cross_entropy_dtypes():
    with torch.autocast("cpu"):
        e_conv = torch.nn.functional.conv2d(C2, K2)
        e_ce = torch.nn.functional.cross_entropy(torch.mm(X, M)[:, :5], LBL)
        e_nll = torch.nn.functional.nll_loss(XH[:, :5], LBL)
    with jtorch.autocast("cpu"):
        a_conv = jtorch.nn.functional.conv2d(JC2, JK2)
        a_ce = jtorch.nn.functional.cross_entropy(jtorch.mm(JX, JM)[:, :5], JLBL)
        a_nll = jtorch.nn.functional.nll_loss(JXH[:, :5], JLBL)
    for e, a in ((e_conv, a_conv), (e_ce, a_ce), (e_nll, a_nll)):
        assert _jt_name(a.dtype) == _jt_name(e.dtype)
        np.testing.assert_allclose(np.asarray(a.float()), e.float().numpy(), rtol=2e-2, atol=2e-2)


def _mlp(lib):
    g = np.random.default_rng(1)
    w1 = lib.from_numpy(g.standard_normal((8, 6)).astype("float32") * 0.3).requires_grad_()
    b1 = lib.from_numpy(g.standard_normal(8).astype("float32") * 0.1).requires_grad_()
    w2 = lib.from_numpy(g.standard_normal((3, 8)).astype("float32") * 0.3).requires_grad_()
    return [w1, b1, w2]


def _forward(lib, params, x, y):
    w1, b1, w2 = params
    F = lib.nn.functional
    h = F.relu(F.linear(x, w1, b1))
    logits = F.linear(h, w2)
    return logits, F.cross_entropy(logits, y)


def test_autocast_small_model_forward_and_grads():
    x_np = RNG.standard_normal((4, 6)).astype("float32")
    y_np = np.array([0, 2, 1, 2])
    tp, jp = _mlp(torch), _mlp(jtorch)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        e_logits, e_loss = _forward(torch, tp, torch.from_numpy(x_np), torch.from_numpy(y_np))
    with jtorch.autocast("cpu", dtype=jtorch.bfloat16):
        a_logits, a_loss = _forward(jtorch, jp, jtorch.from_numpy(x_np), jtorch.from_numpy(y_np))
    assert _jt_name(a_logits.dtype) == _jt_name(e_logits.dtype) == "bfloat16"
    assert _jt_name(a_loss.dtype) == _jt_name(e_loss.dtype) == "float32"
    np.testing.assert_allclose(
        np.asarray(a_logits.detach().float()),
        e_logits.detach().float().numpy(),
        rtol=3e-2,
        atol=3e-2,
    )
    e_loss.backward()
    a_loss.backward()
    for e, a in zip(tp, jp):
        assert _jt_name(a.grad.dtype) == _jt_name(e.grad.dtype) == "float32"
        np.testing.assert_allclose(np.asarray(a.grad), e.grad.numpy(), rtol=5e-2, atol=2e-2)


def _scaler_run(lib, grads_per_step):
    """Scale trajectory, growth tracker and parameter values over a few manual steps."""
    p = lib.zeros(2, requires_grad=True)
    opt = lib.optim.SGD([p], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    out = []
    for g in grads_per_step:
        opt.zero_grad()
        loss = (p * lib.tensor(g)).sum()
        scaler.scale(loss).backward()
        if len(out) == 1:
            scaler.unscale_(opt)  # explicit unscale, then step must not redo it
        scaler.step(opt)
        scaler.update()
        out.append(
            (
                scaler.get_scale(),
                scaler.state_dict()["_growth_tracker"],
                p.detach().numpy().tolist(),
            )
        )
    return out, scaler.state_dict()


def test_grad_scaler_trajectory_matches_torch():
    inf = float("inf")
    steps = [
        [1.0, 2.0],
        [0.5, -1.0],
        [1.0, 1.0],
        [inf, 1.0],
        [1.0, float("nan")],
        [2.0, 1.0],
        [1.0, 1.0],
        [0.25, 0.5],
    ]
    expected, e_state = _scaler_run(torch, steps)
    actual, a_state = _scaler_run(jtorch, steps)
    assert a_state == e_state
    for (es, et, ep), (as_, at, ap) in zip(expected, actual):
        assert (as_, at) == (es, et)
        np.testing.assert_allclose(ap, ep, rtol=1e-6)
