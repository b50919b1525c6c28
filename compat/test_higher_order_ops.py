"""`torch._higher_order_ops.associative_scan` and `scan` against PyTorch: values, dtypes,
gradients and errors. PyTorch's `scan` compiles (seconds per call), so its expected values
come from the loop that defines it, run in PyTorch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch._higher_order_ops.associative_scan import associative_scan as torch_ascan  # noqa: E402

import jtorch  # noqa: E402
import jtorch._higher_order_ops as jhop  # noqa: E402


def _add(a, b):
    return a + b


def _mul(a, b):
    return a * b


def _max(a, b):
    return a.maximum(b) if hasattr(a, "maximum") else np.maximum(a, b)


def _ssm(left, right):
    """Mamba's combine: (A, B) pairs of a linear recurrence h = A h + B."""
    a_l, b_l = left
    a_r, b_r = right
    return a_l * a_r, a_r * b_l + b_r


def _matmul(a, b):
    """2x2 matrix products (associative, not elementwise: needs the per-element vmap)."""
    return a @ b


CASES = [  # (name, combine, shapes of the leaves, dim, reverse)
    ("add", _add, [(9,)], 0, False),
    ("add_rev", _add, [(3, 8, 2)], 1, True),
    ("mul_neg_dim", _mul, [(2, 5)], -1, False),
    ("max", _max, [(4, 11)], 1, False),
    ("ssm", _ssm, [(2, 3, 7, 4), (2, 3, 7, 4)], 2, False),
    ("ssm_rev", _ssm, [(2, 6, 3), (2, 6, 3)], 1, True),
    ("matmul", _matmul, [(6, 2, 2)], 0, False),
    ("one", _add, [(1, 3)], 0, False),
    ("two", _add, [(2, 3)], 0, False),
]


def _leaves(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 1.5, s).astype(np.float32) for s in shapes]


def _run(L, scan, name, combine, shapes, dim, reverse):
    ts = [L.tensor(a, requires_grad=True) for a in _leaves(shapes)]
    xs = ts[0] if len(ts) == 1 else tuple(ts)
    out = scan(combine, xs, dim=dim, reverse=reverse, combine_mode="generic")
    outs = [out] if len(ts) == 1 else list(out)
    weights = _leaves([tuple(o.shape) for o in outs], seed=1)
    sum(((o * L.tensor(w)).sum() for o, w in zip(outs, weights)), L.tensor(0.0)).backward()
    return (
        [o.detach().numpy() for o in outs],
        [str(o.dtype) for o in outs],
        [t.grad.numpy() for t in ts],
    )


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_associative_scan_matches_pytorch(case):
    want = _run(torch, torch_ascan, *case)
    got = _run(jtorch, jhop.associative_scan, *case)
    assert got[1] == want[1]
    for g, w in zip(got[0] + got[2], want[0] + want[2]):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


def test_associative_scan_integers_match_pytorch():
    x = np.arange(1, 13).reshape(3, 4)
    want = torch_ascan(_add, torch.tensor(x), dim=1, combine_mode="generic")
    got = jhop.associative_scan(_add, jtorch.tensor(x), dim=1, combine_mode="generic")
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


ERRORS = [
    lambda L, f: f(_add, L.ones(3), dim=0),  # pointwise on CPU
    lambda L, f: f(_add, L.ones(3), dim=0, combine_mode="fused"),
    lambda L, f: f(_add, L.ones(3), dim=1, combine_mode="generic"),
    lambda L, f: f(_add, L.ones(3, 0), dim=1, combine_mode="generic"),
    lambda L, f: f(_add, L.ones(3), dim=0, reverse=1, combine_mode="generic"),
    lambda L, f: f(_add, [], dim=0, combine_mode="generic"),
    lambda L, f: f(3, L.ones(3), dim=0, combine_mode="generic"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_associative_scan_errors_match_pytorch(i):
    with pytest.raises(Exception) as want:
        ERRORS[i](torch, torch_ascan)
    with pytest.raises(Exception) as got:
        ERRORS[i](jtorch, jhop.associative_scan)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)


def _rnn(L):
    def step(carry, x):
        h = (carry["h"] * 0.5 + x[0] * x[1]).tanh()
        return {"h": h}, (h.sum(-1), h * 2)

    return step


def _torch_scan_by_definition(combine, init, xs, dim, reverse):
    """PyTorch's documented result of scan: the loop over slices, outputs stacked."""
    leaves = [x.movedim(dim, 0) for x in xs]
    order = range(leaves[0].shape[0])
    carry, ys = init, []
    for i in reversed(order) if reverse else order:
        carry, y = combine(carry, tuple(x[i] for x in leaves))
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = tuple(torch.stack(col).movedim(0, dim) for col in zip(*ys))
    return carry, stacked


@pytest.mark.parametrize("dim,reverse", [(0, False), (1, True)])
def test_scan_matches_the_loop_in_pytorch(dim, reverse):
    arrays = _leaves([(5, 6, 3), (5, 6, 3)])
    h0 = _leaves([(6, 3) if dim == 0 else (5, 3)], seed=2)[0]

    def run(L, scan):
        xs = tuple(L.tensor(a, requires_grad=True) for a in arrays)
        init = {"h": L.tensor(h0, requires_grad=True)}
        carry, ys = scan(_rnn(L), init, xs, dim, reverse)
        (carry["h"].sum() + ys[0].pow(2).sum() + ys[1].mean()).backward()
        return [carry["h"], *ys], [*xs, init["h"]]

    want_out, want_in = run(torch, _torch_scan_by_definition)
    got_out, got_in = run(jtorch, lambda f, i, x, d, r: jhop.scan(f, i, x, dim=d, reverse=r))
    for g, w in zip(got_out, want_out):
        assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == str(w.dtype)
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)
    for g, w in zip(got_in, want_in):
        np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=1e-5, atol=1e-6)
