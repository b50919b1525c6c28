"""Data-movement kernels of a new shape run on the host (jtorch/_ops/_host.py): no program is
made, and the result is bit for bit the compiled kernel's, edge values included."""

import os

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from jtorch import _programs, _stored
from jtorch._ops import _dispatch, _host


@pytest.fixture(autouse=True)
def _no_kept_kernels(monkeypatch):
    """A kernel an earlier test compiled may be kept by jtorch's key (`_stored`); found
    there, it runs instead of the host (`_dispatch._kept`): the same bits, but not the path
    these tests look at."""
    monkeypatch.setitem(_stored._state, "off", True)


@pytest.fixture
def spy(monkeypatch):
    """Records, per call of `_host.evaluate`, whether the host computed the result."""
    taken = []
    evaluate = _host.evaluate

    def recording(*args):
        out = evaluate(*args)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(_host, "evaluate", recording)
    return taken


def _fresh():
    """Forgets every kernel and sighting: the next call of a kernel is its first."""
    _host._seen.clear()
    _host._PLANS.clear()
    _host._SHAPELESS.clear()
    _dispatch._HOSTED.clear()
    _host._declined.clear()
    _dispatch.KERNELS.clear()


def _compiled(monkeypatch, fn):
    with monkeypatch.context() as m:
        m.setattr(_host, "evaluate", lambda *a: None)
        _fresh()
        return fn()


def _bits(t) -> np.ndarray:
    a = np.asarray(t._array)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind in "fV" else a


def _edge_values(dtype: str) -> np.ndarray:
    if dtype in ("int64", "int32", "uint8", "bool"):
        return np.array([0, 1, -1, 7, 2**31 - 1, -(2**31), 100, 3], np.int64)
    # -0.0, subnormals (XLA's CPU code flushes them in arithmetic), inf, NaNs with payloads
    f = np.array([0.0, -0.0, 1e-45, -1e-40, 1.5, np.inf, -np.inf, 3e38, -7.25, 1e-39], np.float32)
    nans = np.array([0x7FC00001, 0xFFC12345, 0x7F800001], np.uint32).view(np.float32)
    if dtype == "float64":  # its own subnormals, and a NaN payload of its width
        nan64 = np.array([0x7FF0000000000001], np.uint64).view(np.float64)
        with np.errstate(invalid="ignore"):  # (the float32 signalling NaN widened)
            return np.concatenate([f, nans, [5e-324, -2e-310, 1e-300], nan64])
    return np.concatenate([f, nans])


ARITHMETIC = ("add", "add_broadcast", "sub_number", "mul", "mul_number", "neg")
DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool", "uint8")
# Each dtype compiles ~50 kernels to compare with (~8 s): the default run takes one of each
# kind (float, half, integer, bool); JTORCH_HOST_KERNELS_FULL=1 takes them all.
CHECKED = (
    DTYPES
    if os.environ.get("JTORCH_HOST_KERNELS_FULL") == "1"
    else ("float32", "bfloat16", "int64", "bool")
)


def _cases(dtype: str, clean: bool):
    base = np.arange(-4, 8, dtype=np.float64) * 1.25 if clean else _edge_values(dtype)
    w = torch.tensor(base).to(getattr(torch, dtype))
    n = w.shape[0]
    rows = w.reshape(-1, 1).expand(n, 3).contiguous()
    idx = torch.tensor([0, n - 1, 2, 1, n - 1, 3])
    mask = torch.tensor(np.arange(n) % 2 == 0)
    cases = {
        "embedding": lambda: F.embedding(idx, rows) if rows.is_floating_point() else rows[idx],
        "cat": lambda: torch.cat([w, w.flip(0)]),
        "stack": lambda: torch.stack([w, w], 1),
        "where": lambda: torch.where(mask, w, w.flip(0)),
        "masked_fill": lambda: w.masked_fill(mask, 1),
        "index_select": lambda: torch.index_select(rows, 0, idx),
        "gather": lambda: torch.gather(rows, 1, torch.tensor([[2, 0]] * n)),
        "take": lambda: torch.take(rows, torch.tensor([1, 5, -1])),
        "index": lambda: rows[idx],
        "index_columns": lambda: rows[:, torch.tensor([2, -3])],
    }
    if dtype != "bool":
        cases["add"] = lambda: w + w.flip(0)
        cases["add_broadcast"] = lambda: rows + w.reshape(-1, 1)
        cases["sub_number"] = lambda: w - 3
        cases["mul"] = lambda: w * w.flip(0)
        cases["mul_number"] = lambda: w * 3
        cases["neg"] = lambda: -w
        # two roundings XLA may contract into one, and division: compiled (not asserted)
        cases["_add_alpha"] = lambda: torch.add(w, w.flip(0), alpha=3)
        cases["_div"] = lambda: w / 3
    if dtype in ("int64", "int32", "uint8"):  # integer division truncates in XLA, floors in numpy
        cases["remainder"] = lambda: w % 5
        cases["floor_divide"] = lambda: w // -3
        cases["div_trunc"] = lambda: torch.div(w, 3, rounding_mode="trunc")
        cases["fmod"] = lambda: torch.fmod(w, -4)
        cases["_abs"] = lambda: w.abs()  # (a custom JVP: compiled, not asserted)
        cases["sign"] = lambda: w.sign()
        cases["_remainder_by_zero"] = lambda: torch.remainder(w, w.flip(0))  # (0 among them)
    for to in DTYPES:
        cases["_to_" + to] = lambda to=to: w.to(getattr(torch, to))
    return cases


@pytest.mark.parametrize("dtype", CHECKED)
def test_host_results_are_the_compiled_kernels_bit_for_bit(dtype, spy, monkeypatch):
    for clean in (True, False):
        for name, fn in _cases(dtype, clean).items():
            spy.clear()
            _fresh()
            host = fn()
            on_host = any(spy)
            compiled = _compiled(monkeypatch, fn)
            assert host.dtype == compiled.dtype and host.shape == compiled.shape, name
            np.testing.assert_array_equal(_bits(host), _bits(compiled), err_msg=f"{dtype} {name}")
            # (casts: the tests below; arithmetic: on ordinary values)
            if not name.startswith("_") and (clean or name not in ARITHMETIC):
                assert on_host, f"{dtype} {name} compiled"


def test_casts_of_ordinary_values_run_on_the_host(spy):
    values = np.array([-3.5, 0.0, 1.25, 1000.0], np.float32)
    for to in (torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32):
        _fresh()
        spy.clear()
        out = torch.tensor(values).to(to)
        assert spy == [True] and out.dtype == to, to
        np.testing.assert_array_equal(out.float().numpy(), values.astype(to.np).astype(np.float32))


def test_casts_that_xla_computes_differently_are_left_to_it(spy):
    # subnormals (XLA flushes them), NaN, and float -> int out of range decline
    for values, to in (
        (np.array([1e-45, 1.0], np.float32), torch.float64),
        (np.array([np.nan, 1.0], np.float32), torch.float16),
        (np.array([3e19, 1.0], np.float32), torch.int32),
        (np.array([2**60 + 1, 1], np.int64), torch.float32),
    ):
        _fresh()
        spy.clear()
        torch.tensor(values).to(to)
        assert spy == [False], (values, to)


def test_a_new_shape_makes_no_program_until_it_comes_back(monkeypatch):
    monkeypatch.setattr(_programs, "HOST_RENT_S", 0.0)  # (due at its COMPILE_AFTER-th call)
    _fresh()
    w = torch.randn(50, 8)
    made = []
    for n in range(1, 6):  # a growing sequence, as in a generate loop
        ids = torch.arange(n).reshape(1, n)
        before = _programs.programs_made()
        torch.cat([F.embedding(ids, w), torch.zeros(1, 1, 8)], 1)
        made.append(_programs.programs_made() - before)
    assert made == [0] * 5
    ids = torch.arange(3).reshape(1, 3)
    for _ in range(_programs.COMPILE_AFTER + 1):
        out = F.embedding(ids, w)
    assert _dispatch.KERNELS.get(next(k for k in _dispatch.KERNELS if k[0].name == "embedding"))
    np.testing.assert_array_equal(out.numpy(), w.numpy()[:3][None])


def test_errors_are_pytorchs_as_before():
    _fresh()
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        torch.cat([torch.zeros(2, 3), torch.zeros(2, 4)])
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(torch.tensor([5]), torch.zeros(3, 2))
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        torch.where(torch.tensor([1, 0]), torch.zeros(2), torch.ones(2))
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.stack([torch.zeros(2), torch.zeros(3)])


def test_calls_the_tape_records_compile_and_no_grad_calls_do_not(spy):
    _fresh()
    w = torch.randn(6, 4, requires_grad=True)
    ids = torch.tensor([1, 2, 2])
    spy.clear()
    out = F.embedding(ids, w)
    assert spy == [] and out.grad_fn is not None  # recorded: its kernel's program is built
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[2], np.full(4, 2.0))
    _fresh()
    spy.clear()
    with torch.no_grad():
        out = F.embedding(ids, w)
    assert spy == [True] and out.grad_fn is None and not out.requires_grad


def test_results_keep_their_inputs_committedness():
    _fresh()
    x = torch.arange(6)
    y = torch.cat([x, x])
    assert y._array.committed == x._array.committed
    np.testing.assert_array_equal(y.numpy(), np.concatenate([np.arange(6)] * 2))


@pytest.mark.parametrize("dtype", ("float32", "float64", "float16", "bfloat16"))
def test_host_arithmetic_matches_xla_on_random_values(dtype, spy, monkeypatch):
    rng = np.random.default_rng(0)
    dt = getattr(torch, dtype)
    x = torch.tensor(rng.standard_normal((64, 33)) * 100).to(dt)
    y = torch.tensor(rng.standard_normal((64, 33)) * 1e-3).to(dt)
    row = torch.tensor(rng.standard_normal(33)).to(dt)
    for fn in (
        lambda: x + y,
        lambda: x - y,
        lambda: x * y,
        lambda: x + row,
        lambda: x * 0.1,
        lambda: x - 2.5,
        lambda: torch.add(x, y, alpha=3),
        lambda: torch.sub(x, y, alpha=0.1),
    ):
        spy.clear()
        _fresh()
        host = fn()
        compiled = _compiled(monkeypatch, fn)
        np.testing.assert_array_equal(_bits(host), _bits(compiled))
        assert host.dtype == compiled.dtype == dt


def test_a_cheap_host_kernel_compiles_once_its_runs_cost_a_compile(monkeypatch):
    """Rent, then buy: a kernel that comes back runs on the host until its runs there have
    cost about a compile (`_programs.HOST_RENT_S`), and at most COMPILE_BY calls."""
    x, y = torch.ones(3, 5), torch.zeros(3, 5)

    def calls_until_compiled():
        _fresh()
        for n in range(1, _programs.COMPILE_BY + 1):
            torch.cat([x, y])
            if any(k[0].name == "cat" for k in _dispatch.KERNELS):
                return n
        return None

    monkeypatch.setattr(_programs, "HOST_RENT_S", 1e9)  # never paid: compiled at COMPILE_BY
    assert calls_until_compiled() == _programs.COMPILE_BY
    monkeypatch.setattr(_programs, "HOST_RENT_S", 0.0)  # paid at once: at COMPILE_AFTER
    assert calls_until_compiled() == _programs.COMPILE_AFTER
    # each host run pays the time it took: a rent of a few runs is paid between the two
    monkeypatch.setattr(_programs, "HOST_RENT_S", 0.002)
    assert _programs.COMPILE_AFTER <= calls_until_compiled() < _programs.COMPILE_BY


def test_rent_counts_calls_and_seconds():
    rent = _programs.Rent(limit=2)
    assert not any(rent.due("a") for _ in range(_programs.COMPILE_AFTER - 1))
    rent.pay("a", 1.0)
    assert rent.due("a")  # the COMPILE_AFTER-th call, its rent paid
    rent.due("b"), rent.due("c")  # (bounded: "a" is forgotten)
    assert "a" not in rent and "c" in rent
    rent.pay("zz", 1.0)  # (a key not met: nothing to pay for)
    assert "zz" not in rent


def test_gradients_meeting_in_a_backward_add_on_the_host(monkeypatch):
    """The engine sums gradients that meet at a node with the `add` kernel: a new shape's sum
    compiles nothing (jax's own `+` would compile it at once)."""
    added = []
    evaluate = _host.evaluate
    monkeypatch.setattr(
        _host, "evaluate", lambda key, *a: added.append(key[0].name) or evaluate(key, *a)
    )
    _fresh()
    x = torch.tensor(np.linspace(-1, 1, 21, dtype=np.float32).reshape(7, 3), requires_grad=True)
    (x.sin() * x.cos()).sum().backward()  # x's two paths meet
    assert "add" in added
    assert not any(k[0].name == "add" for k in _dispatch.KERNELS)
    v = np.linspace(-1, 1, 21).reshape(7, 3)
    np.testing.assert_allclose(x.grad.numpy(), np.cos(2 * v), rtol=1e-5, atol=1e-6)


def test_a_plan_that_holds_no_size_serves_every_length(monkeypatch, spy):
    """A `generate` loop's cache grows by one each step: its `cat` and elementwise adds are
    traced once for every length (their plans name no size), not once per length."""
    _fresh()
    traced = []
    plan = _host._plan
    monkeypatch.setattr(_host, "_plan", lambda fn, args: traced.append(1) or plan(fn, args))
    rng = np.random.default_rng(0)
    cache, new = rng.standard_normal((1, 3, 40, 5)), rng.standard_normal((1, 3, 1, 5))
    grown = []
    with torch.no_grad():
        for n in range(6, 15):
            k = torch.cat((torch.tensor(cache[:, :, :n]), torch.tensor(new)), dim=-2)
            grown.append((k, k + k, -k))
        assert len(traced) == 3 and all(spy)  # (cat, add, neg: once each)
        for n, (k, twice, negated) in zip(range(6, 15), grown):
            want = np.concatenate((cache[:, :, :n], new), axis=-2)
            np.testing.assert_array_equal(k.numpy(), want)
            np.testing.assert_array_equal(twice.numpy(), want + want)
            np.testing.assert_array_equal(negated.numpy(), -want)
        # sizes that meet (5 rows of 5: one size class fewer) are another family, traced
        torch.cat((torch.tensor(cache[:, :, :5]), torch.tensor(new)), dim=-2)
        assert len(traced) == 4
        # and a call the op refuses still raises PyTorch's error
        with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
            torch.cat((torch.tensor(cache[:, :, :7]), torch.tensor(new[..., :4])), dim=-2)


def test_a_plan_with_a_constant_that_could_be_a_size_is_not_shared():
    """An integer kernel may bake a size into its jaxpr as a literal (`i + n` wrapping a
    negative index): such a plan serves its own shape only."""
    import jax
    import jax.numpy as jnp

    ints = jnp.arange(6)
    assert _host._shape_free(jax.make_jaxpr(lambda i: i + 1 - i * 0)(ints))
    assert not _host._shape_free(jax.make_jaxpr(lambda i: i + i.shape[0])(ints))
    assert not _host._shape_free(jax.make_jaxpr(lambda i: i[::-1] + 1)(ints))  # (a reversal)
