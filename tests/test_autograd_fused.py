"""The fused whole-graph backward runs what the node-by-node engine runs, or declines.

A repeated `backward()` goes through `jtorch.autograd._fused` once its graph has come back
`_fused._AFTER` times (here 2: `fuse_early`). These tests check that it gives bit-for-bit
the engine's gradients, and that a graph it cannot trace (a backward that needs host
values) or cannot compile stays with the engine instead of failing the step.
"""

import concurrent.futures

import jax
import numpy as np
import pytest

import jtorch as torch
from jtorch._ops import _registry
from jtorch._ops._registry import NONE, TI, T
from jtorch.autograd import _fused


@pytest.fixture(autouse=True)
def fuse_early(monkeypatch):
    """Graphs fuse from their second sighting (not after a long loop's worth of steps)."""
    monkeypatch.setattr(_fused, "_AFTER", 2)


@pytest.fixture
def foreground(monkeypatch):
    """Compiles fused backwards on the calling thread, so the third step runs fused."""
    monkeypatch.setattr(_fused, "_BACKGROUND", False)


def _steps(loss_fn, leaves, n=3):
    """Runs `loss_fn().backward()` n times; returns each step's grads (numpy)."""
    out = []
    for _ in range(n):
        for leaf in leaves:
            leaf.grad = None
        loss_fn().backward()
        out.append([leaf.grad.numpy().copy() for leaf in leaves])
    return out


def test_masked_select_in_a_loop_fuses_and_matches(foreground):
    x = torch.tensor([0.5, -1.0, 2.0, 3.0, -4.0], requires_grad=True)
    mask = torch.tensor([True, False, True, True, False])
    fused_before = len(_fused._compiled)
    grads = _steps(lambda: x.masked_select(mask).pow(2).sum(), [x])
    # d/dx sum(x[mask]^2) = 2x on the selected positions, 0 elsewhere
    expected = np.where(mask.numpy(), 2 * x.detach().numpy(), 0.0)
    for (g,) in grads:
        np.testing.assert_array_equal(g, expected)
    assert len(_fused._compiled) == fused_before + 1  # the graph did fuse


def test_masked_select_loop_with_background_compile():
    x = torch.arange(6.0).reshape(2, 3).requires_grad_(True)
    mask = torch.tensor([[True, False, True], [False, True, True]])
    grads = _steps(lambda: (x.masked_select(mask) * 3.0).sum(), [x], n=2)
    for _, future in list(_fused._pending.values()):
        future.result()
    grads += _steps(lambda: (x.masked_select(mask) * 3.0).sum(), [x], n=2)
    for (g,) in grads:
        np.testing.assert_array_equal(g, np.where(mask.numpy(), 3.0, 0.0))


# A kernel whose backward reads its mask on the host (the way `masked_select` used to):
# the engine runs it eagerly, the fused program cannot trace it.
@_registry.kernel(name="_host_select", promote=NONE, jit=False)
def _host_select(input: T, mask: TI):
    return input[np.asarray(mask)]


def test_a_backward_that_needs_host_values_stays_with_the_engine(foreground):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    mask = torch.tensor([True, True, False, True])
    grads = _steps(lambda: (_host_select(x, mask) ** 3).sum(), [x], n=4)
    expected = np.where(mask.numpy(), 3 * x.detach().numpy() ** 2, 0.0)
    for (g,) in grads:
        np.testing.assert_array_equal(g, expected)
    assert "TracerArrayConversionError" in _fused.last_failure[0]


def test_a_failed_background_compile_falls_back(monkeypatch):
    class FailingExecutor:
        def submit(self, fn, *args):
            future = concurrent.futures.Future()
            future.set_exception(RuntimeError("XLA compile failed"))
            return future

    monkeypatch.setattr(_fused, "_BACKGROUND", True)
    monkeypatch.setattr(_fused, "_executor", FailingExecutor())
    w = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    x = torch.tensor([[2.0, 1.0], [-1.0, 4.0]])
    grads = _steps(lambda: torch.sin(x @ w).sum() * 1.5, [w], n=4)
    expected = 1.5 * x.numpy().T @ np.cos(x.numpy() @ w.detach().numpy())
    for (g,) in grads:
        np.testing.assert_allclose(g, expected, rtol=1e-6)
    assert _fused.last_failure[0] == "RuntimeError: XLA compile failed"


def test_fused_sums_meeting_gradients_in_the_engines_order(foreground):
    # Five paths meet at x: float addition is not associative, so the fused program must
    # add them in the order the engine does to give the same bits.
    torch.manual_seed(0)
    x = torch.randn(64, requires_grad=True)
    w = torch.randn(64, requires_grad=True)

    def loss():
        return ((x * w).exp() + torch.sin(x) * 1e3 + x.tanh() / 7 + (x * 1e-3).cos() + x * x).sum()

    grads = _steps(loss, [x, w], n=3)
    fused_before = len(_fused._compiled)
    grads += _steps(loss, [x, w], n=1)
    assert len(_fused._compiled) == fused_before  # (compiled by the steps before)
    for step in grads[1:]:
        for g, g0 in zip(step, grads[0]):
            np.testing.assert_array_equal(g, g0)


def test_mvlgamma_fused_backward_is_the_engines_bit_for_bit(foreground):
    # mvlgamma's domain check reads values, so it used to run its kernel eagerly: its
    # backward was then a string of eager jax ops, each rounded on its own, while the fused
    # program contracted them (multiply-add) and gave other last bits in some elements.
    rng = np.random.RandomState(0)
    x = torch.tensor(rng.uniform(1, 5, (5, 5)).astype(np.float32), requires_grad=True)
    w = torch.tensor(rng.uniform(-1, 1, (5, 5)).astype(np.float32))
    grads = _steps(lambda: (torch.mvlgamma(x, 2) * w).sum(), [x], n=4)
    # d/dx mvlgamma(x, 2) = digamma(x) + digamma(x - 1/2)
    xd = x.detach()
    expected = (w * (torch.special.digamma(xd) + torch.special.digamma(xd - 0.5))).numpy()
    np.testing.assert_allclose(grads[0][0], expected, rtol=1e-5, atol=1e-6)
    for (g,) in grads[1:]:
        np.testing.assert_array_equal(g, grads[0][0])


def test_a_graph_whose_fused_program_rounds_otherwise_stays_with_the_engine(foreground):
    # XLA fuses pinv's backward (a sum of three products) into the matmul backward's
    # matrix-vector product and reduces there in another order: the fused program gave
    # other last bits than the nodes' own programs. Its first call is checked against the
    # engine, and such a graph is declined: every step gives the engine's bits.
    rng = np.random.RandomState(0)
    a = torch.tensor(rng.uniform(-9, 9, (3, 1)).astype(np.float32), requires_grad=True)
    b = torch.tensor(rng.uniform(-9, 9, (50, 1)).astype(np.float32), requires_grad=True)
    w = torch.tensor(rng.uniform(-1, 1, (50, 3)).astype(np.float32))
    grads = _steps(lambda: (torch.linalg.pinv(a @ b.mT) * w).sum(), [a, b], n=4)
    for step in grads[1:]:
        for g, g0 in zip(step, grads[0]):
            np.testing.assert_array_equal(g.view(np.uint32), g0.view(np.uint32))


def test_the_bit_check_compares_bits():
    same = np.array([0.0, np.nan, 1.5], np.float32)
    _fused._check_bits((same, None), (same.copy(), None))
    with pytest.raises(_fused.FusedDiffers):
        _fused._check_bits((np.array([0.0], np.float32),), (np.array([-0.0], np.float32),))
    with pytest.raises(_fused.FusedDiffers):
        _fused._check_bits((np.array([1.0], np.float32),), (np.array([1.0], np.float64),))
    with pytest.raises(_fused.FusedDiffers):
        _fused._check_bits((np.array([1.0], np.float32),), (None,))


def test_fused_and_engine_accumulate_into_an_existing_grad_alike(foreground):
    w = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
    results = []
    for _ in range(3):
        w.grad = torch.full((3,), 1.0)
        (w * w).sum().backward()
        results.append(w.grad.numpy().copy())
    for r in results:
        np.testing.assert_array_equal(r, 1.0 + 2 * w.detach().numpy())


def test_masked_select_values_and_errors():
    x = torch.arange(6.0).reshape(2, 3)
    m = torch.tensor([True, False, True])
    np.testing.assert_array_equal(torch.masked_select(x, m).numpy(), [0.0, 2.0, 3.0, 5.0])
    assert x.masked_select(m).dtype is torch.float32
    out = torch.empty(0)
    torch.masked_select(x, m, out=out)
    np.testing.assert_array_equal(out.numpy(), [0.0, 2.0, 3.0, 5.0])
    xg = x.clone().requires_grad_(True)
    assert xg.masked_select(m).grad_fn.name() == "MaskedSelectBackward0"
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support"):
        torch.masked_select(xg, m, out=torch.empty(0))
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        torch.masked_select(x, torch.ones(3))
    with pytest.raises(RuntimeError, match=r"tensor a \(4\) must match .* tensor b \(3\)"):
        torch.masked_select(x, torch.ones(4, dtype=torch.bool))
    with pytest.raises(NotImplementedError):
        torch.masked_select(torch.empty(2, 3, device="meta"), m.to("meta"))
    np.testing.assert_array_equal(
        torch.masked_select(torch.tensor(3.0), torch.tensor(True)).numpy(), [3.0]
    )


def test_masked_select_under_compile_of_the_step():
    # A compiled step that selects with a mask its graph cannot trace falls back to eager.
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    mask = torch.tensor([True, False, True])

    @torch.compile
    def step():
        return x.masked_select(mask).sum()

    with pytest.warns(UserWarning):
        value = step()
    assert float(value) == 4.0


def test_graph_structures_name_kernels_by_numbers_never_reused():
    # A structure's sightings and declines are keyed by its kernels' serial numbers: a kernel
    # freed and a new one made at the same address (same id) must not share them.
    numbers = set()
    for _ in range(100):
        fn = jax.jit(lambda x: x + 1)
        assert _fused._serial(fn) == _fused._serial(fn)
        numbers.add(_fused._serial(fn))
        del fn
    assert len(numbers) == 100
