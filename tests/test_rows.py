"""Row buckets (jtorch/_ops/_rows.py): an eager call that records nothing, of a new row count,
runs its op's kernel at a bucketed row count: one program per bucket, not per length."""

import collections
import math

import jax
import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from jtorch import _programs, _stored
from jtorch._ops import _rows
from jtorch._ops._registry import T, kernel


@pytest.fixture(autouse=True)
def views_stay_on_the_host(monkeypatch):
    """The loops here take views whose shapes come back across tests: a view compiles its
    replay at its 16th sighting (`_views`), which would count among the programs made."""
    monkeypatch.setattr(_programs, "COMPILE_AFTER", 1 << 30)
    # and a kernel another test compiled may be kept on disk (`_stored`): found there, it would
    # load instead of running on the host, and count too
    monkeypatch.setitem(_stored._state, "off", True)


def made(fn) -> int:
    """How many XLA programs `fn()` made (compiled, or read from the disk cache)."""
    before = _programs.programs_made()
    fn()
    return _programs.programs_made() - before


def test_buckets_are_powers_of_two_and_their_three_quarters():
    assert [_rows.bucket(n) for n in (1, 2, 9, 16)] == [1, 16, 16, 16]  # (one row: a decode step)
    assert [_rows.bucket(n) for n in (17, 24, 25, 32, 33, 48, 49, 64, 65)] == [
        24, 24, 32, 32, 48, 48, 64, 64, 96,
    ]  # fmt: skip
    for n in range(1, 5000):
        b = _rows.bucket(n)
        assert n <= b < 2 * max(n, 9)  # past 16 rows, at most half of a bucket is padding
        assert _rows.bucket(b) == b


def _rng(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _generate_like(lengths, causal=True):
    """What a cache-less `generate` runs per step: linear, layer_norm, gelu, attention."""
    w, b = torch.tensor(_rng(48, 16, seed=1)), torch.tensor(_rng(48, seed=2))
    ln_w, ln_b = torch.tensor(_rng(16, seed=3)), torch.tensor(_rng(16, seed=4))
    outs = []
    with torch.no_grad():
        for n in lengths:
            x = torch.tensor(_rng(1, n, 16, seed=n))
            h = F.layer_norm(x, (16,), ln_w, ln_b)
            q, k, v = F.linear(h, w, b).view(1, n, 3, 16).permute(2, 0, 1, 3).unbind(0)
            a = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], is_causal=causal)
            outs.append((h, F.gelu(F.linear(h, w, b), approximate="tanh"), a))
    return outs


def _numpy_reference(n, causal=True):
    w, b = _rng(48, 16, seed=1).astype(np.float64), _rng(48, seed=2).astype(np.float64)
    ln_w, ln_b = _rng(16, seed=3).astype(np.float64), _rng(16, seed=4).astype(np.float64)
    x = _rng(1, n, 16, seed=n).astype(np.float64)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    h = (x - mu) / np.sqrt(var + 1e-5) * ln_w + ln_b
    y = h @ w.T + b
    g = 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) * (y + 0.044715 * y**3)))
    q, k, v = y.reshape(1, n, 3, 16).transpose(2, 0, 1, 3)
    s = q @ k.transpose(0, 2, 1) / 4.0
    if causal:
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    a = (p / p.sum(-1, keepdims=True)) @ v
    return h, g, a[:, None]


def test_a_growing_length_compiles_once_per_bucket():
    _generate_like([2])  # (the kernels of other ops in the loop, and bucket 16's)
    assert made(lambda: _generate_like(range(3, 17))) == 0  # lengths 2..16: bucket 16
    # 17..24 share bucket 24: linear, layer_norm, gelu and attention compile for it alone
    assert made(lambda: _generate_like(range(17, 25))) <= 4
    assert made(lambda: _generate_like(range(17, 25))) == 0


def test_a_growing_length_traces_each_op_once_per_bucket(monkeypatch):
    monkeypatch.setattr(_rows, "_PLANS", collections.OrderedDict())
    monkeypatch.setattr(_rows, "_FAMILIES", collections.OrderedDict())
    traced = []
    real = jax.eval_shape
    monkeypatch.setattr(jax, "eval_shape", lambda fn, *a: traced.append(fn) or real(fn, *a))
    _generate_like([2])
    first = len(traced)
    assert first >= 4  # linear, layer_norm, gelu, attention: traced at their first length
    _generate_like(range(3, 17))  # (the same bucket)
    assert len(traced) == first
    # a row count that equals another size of the call (12 rows of 12 features) is its own
    # family: traced again, once
    w = torch.tensor(_rng(8, 12))
    with torch.no_grad():
        for n in (5, 6, 12, 12):
            F.linear(torch.tensor(_rng(1, n, 12)), w)
    assert len(traced) == first + 2


def test_padded_rows_give_the_rows_values():
    for n, (h, g, a) in zip(range(1, 14), _generate_like(range(1, 14))):
        rh, rg, ra = _numpy_reference(n)
        assert h.shape == (1, n, 16) and g.shape == (1, n, 48) and a.shape == (1, 1, n, 16)
        np.testing.assert_allclose(h.numpy(), rh, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g.numpy(), rg, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(a.numpy(), ra, rtol=1e-4, atol=1e-4)


def test_numbers_depend_on_the_call_not_on_what_came_before():
    first = _generate_like([11])[0]
    _generate_like([9, 10, 12])
    again = _generate_like([11])[0]
    for u, v in zip(first, again):
        np.testing.assert_array_equal(u.numpy(), v.numpy())


def test_row_wise_and_elementwise_ops_share_their_buckets():
    x = torch.tensor(_rng(1, 12, 16))
    ops = [
        lambda t: F.softmax(t, -1),
        lambda t: F.log_softmax(t, dim=2),
        lambda t: F.rms_norm(t, (16,)),
        F.silu,
        F.relu,
        torch.tanh,
        torch.exp,
    ]
    with torch.no_grad():
        [f(x[:, :9]) for f in ops]  # bucket 16's programs
        outs = {}
        assert made(lambda: outs.update({n: [f(x[:, :n]) for f in ops] for n in (10, 11, 12)})) == 0
    for n, (sm, lsm, rms, silu, relu, tanh, exp) in outs.items():
        assert all(o.shape == (1, n, 16) for o in (sm, lsm, rms, silu, relu, tanh, exp))
        r = _rng(1, 12, 16)[:, :n].astype(np.float64)
        e = np.exp(r - r.max(-1, keepdims=True))
        np.testing.assert_allclose(sm.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(lsm.numpy(), np.log(e / e.sum(-1, keepdims=True)), rtol=1e-5)
        ms = (r * r).mean(-1, keepdims=True)
        want = r / np.sqrt(ms + np.finfo(np.float32).eps)
        np.testing.assert_allclose(rms.numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(silu.numpy(), r / (1 + np.exp(-r)), rtol=1e-5, atol=1e-7)
        np.testing.assert_array_equal(relu.numpy(), np.maximum(r, 0).astype(np.float32))
        np.testing.assert_allclose(tanh.numpy(), np.tanh(r), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(exp.numpy(), np.exp(r), rtol=1e-5)


def test_softmax_over_another_dim_runs_at_its_own_shape():
    x = torch.tensor(_rng(1, 9, 16))
    with torch.no_grad():
        F.softmax(x, 1)
        assert made(lambda: F.softmax(x[:, :7], 1)) == 1


def test_attention_that_sees_later_keys_masks_the_padded_ones():
    _generate_like([10], causal=False)
    assert made(lambda: _generate_like([11], causal=False)) == 0  # bucket 16's, with a mask
    for n, (_, _, a) in zip((11, 13), _generate_like((11, 13), causal=False)):
        np.testing.assert_allclose(
            a.numpy(), _numpy_reference(n, causal=False)[2], rtol=1e-4, atol=1e-4
        )


def test_attention_over_a_growing_key_cache_compiles_once_per_bucket():
    """A decode step with a key-value cache: one query, keys one longer at each step."""
    rng = np.random.default_rng(0)
    cache = rng.standard_normal((1, 2, 40, 8)).astype(np.float32)
    q = torch.tensor(rng.standard_normal((1, 2, 1, 8)).astype(np.float32))
    k = torch.tensor(cache)
    mask = torch.tensor(rng.random((1, 1, 1, 40)) > 0.3)
    with torch.no_grad():

        def steps(lengths, masked):
            m = (lambda n: mask[..., :n]) if masked else (lambda n: None)
            return [
                F.scaled_dot_product_attention(q, k[:, :, :n], k[:, :, :n], m(n)) for n in lengths
            ]

        steps([17], False), steps([17], True)  # bucket 24's programs
        outs = {}
        assert made(lambda: outs.update(zip(range(18, 25), steps(range(18, 25), False)))) == 0
        assert made(lambda: outs.update(zip(range(-18, -25, -1), steps(range(18, 25), True)))) == 0
    for n, a in outs.items():
        kv = cache[:, :, : abs(n)].astype(np.float64)
        s = np.asarray(q.numpy(), np.float64) @ kv.transpose(0, 1, 3, 2) / np.sqrt(8)
        if n < 0:
            s = np.where(mask.numpy()[..., : abs(n)], s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        want = (p / p.sum(-1, keepdims=True)) @ kv
        assert a.shape == (1, 2, 1, 8)
        np.testing.assert_allclose(a.numpy(), want, rtol=1e-5, atol=1e-6)


def test_a_call_the_tape_records_keeps_its_exact_kernel():
    w = torch.tensor(_rng(8, 16)).requires_grad_()
    x = torch.tensor(_rng(1, 5, 16))
    F.linear(x, w).sum().backward()
    plans = dict(_rows._PLANS)
    y = F.linear(torch.tensor(_rng(1, 6, 16)), w)
    assert y.grad_fn is not None
    assert dict(_rows._PLANS) == plans  # no bucket plan was made for the recorded call
    np.testing.assert_allclose(w.grad.numpy(), np.tile(_rng(1, 5, 16).sum(1), (8, 1)), rtol=1e-5)


def test_errors_name_the_calls_own_shapes():
    with torch.no_grad():
        with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(5x3 and 2x4\)"):
            F.linear(torch.ones(1, 5, 3), torch.ones(4, 2))
        with pytest.raises(RuntimeError, match=r"but got input of size\[1, 5, 3\]"):
            F.layer_norm(torch.ones(1, 5, 3), (4,))


def test_big_calls_run_at_their_own_shape():
    def plan_of(x, w):
        with torch.no_grad():
            F.linear(torch.tensor(x), torch.tensor(w))
        return _rows._PLANS[next(k for k in reversed(_rows._PLANS) if k[0].name == "linear")]

    # 70 rows pad to 96: an input of 96 x 12000 elements, past the bound
    assert plan_of(_rng(1, 70, 12000), _rng(4, 12000)) is None
    # a small input, but an output of 96 x 12000 elements
    assert plan_of(_rng(1, 70, 4), _rng(12000, 4)) is None
    assert plan_of(_rng(1, 70, 4), _rng(64, 4)) is not None


def test_a_declaration_names_only_the_ops_parameters():
    with pytest.raises(TypeError, match="rows= names 'x'"):

        @kernel(rows=_rows.Rows(("x",)))
        def _rows_test_kernel(input: T):
            return input


def _plan_of(name):
    return _rows._PLANS[next(k for k in reversed(_rows._PLANS) if k[0].name == name)]


def test_einsum_attention_over_a_growing_key_cache_compiles_once_per_bucket():
    """x-transformers' attention: scores and weighted values by `einsum`, one query over keys
    one longer at each step; only the key length pads (a head's width never changes)."""
    rng = np.random.default_rng(0)
    cache = rng.standard_normal((2, 3, 40, 20)).astype(np.float32)
    q = torch.tensor(rng.standard_normal((2, 3, 1, 20)).astype(np.float32))
    k = torch.tensor(cache)

    def step(n):
        s = torch.einsum("b h i d, b h j d -> b h i j", q, k[:, :, :n]) * 0.25
        a = s.softmax(dim=-1)
        return s, torch.einsum("b h i j, b h j d -> b h i d", a, k[:, :, :n])

    with torch.no_grad():
        step(17), step(18)  # (the exact programs of the first length, then bucket 24's)
        outs = {}
        assert made(lambda: outs.update((n, step(n)) for n in range(19, 25))) == 0
        step(30)
        # the weighted values' plan: the key length pads in both operands, the width (20)
        # and the single query in neither
        pads = sorted(p[:4] for p in _plan_of("einsum").pads)
        assert pads == [(0, -1, 30, 32), (1, -2, 30, 32)]
    for n, (s, o) in outs.items():
        kv = cache[:, :, :n].astype(np.float64)
        want = np.einsum("bhid,bhjd->bhij", q.numpy().astype(np.float64), kv) * 0.25
        p = np.exp(want - want.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        assert s.shape == (2, 3, 1, n) and o.shape == (2, 3, 1, 20)
        np.testing.assert_allclose(s.numpy(), want, rtol=1e-5, atol=1e-6)
        want = np.einsum("bhij,bhjd->bhid", p, kv)
        np.testing.assert_allclose(o.numpy(), want, rtol=1e-5, atol=1e-6)


def test_softmax_pads_its_last_dim_with_minus_infinity_once_its_size_changes(monkeypatch):
    monkeypatch.setattr(_rows, "_FIRST_SIZES", collections.OrderedDict())
    x = _rng(3, 40)
    x[0, 5] = -np.inf  # (a masked position among the real ones)
    t = torch.tensor(x)
    with torch.no_grad():
        F.softmax(t[:, :33], -1)
        # a size met once (a vocabulary's, maybe) stays; the rows pad (3 to 16)
        assert [p[1:4] for p in _plan_of("softmax").pads] == [(-2, 3, 16)]
        F.softmax(t[:, :34], -1), F.log_softmax(t[:, :33], 1), F.log_softmax(t[:, :34], 1)
        outs = {}
        fns = (lambda n: F.softmax(t[:, :n], -1), lambda n: F.log_softmax(t[:, :n], dim=1))
        assert made(lambda: outs.update((n, [f(n) for f in fns]) for n in range(35, 49))) == 0
    for n, (sm, lsm) in outs.items():
        r = x[:, :n].astype(np.float64)
        e = np.exp(r - r.max(-1, keepdims=True))
        np.testing.assert_allclose(sm.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=0)
        assert sm.numpy()[0, 5] == 0 and lsm.numpy()[0, 5] == -np.inf
        with np.errstate(divide="ignore"):  # (log 0: the masked position)
            want = np.log(e / e.sum(-1, keepdims=True))
        np.testing.assert_allclose(lsm.numpy(), want, rtol=1e-5)


def test_max_and_min_of_all_elements_pad_with_their_identity():
    with torch.no_grad():
        got = {}

        def run(lengths):
            for n in lengths:
                neg = -torch.arange(1, n + 1)  # (all below the zeros a padding would add)
                x = torch.tensor(np.linspace(-3, -1, n))
                got[n] = (neg.max(), neg.min(), x.max(), x.min(), (neg > -3).max())

        run([17, 18])  # (the first size runs as it is; a second, bucket 24's programs)
        assert made(lambda: run(range(19, 25))) == 0
    for n, (imax, imin, fmax, fmin, bmax) in got.items():
        assert (imax.item(), imin.item(), fmax.item(), fmin.item()) == (-1, -n, -1.0, -3.0)
        assert imax.dtype == torch.int64 and fmax.dtype == torch.float64 and bmax.item() is True
    nan = torch.tensor([1.0] * 19 + [float("nan")])
    assert math.isnan(nan.max().item()) and math.isnan(nan.min().item())


def test_a_binary_op_pads_the_operands_that_span_the_row_dim():
    a, b, c = _rng(30, 4), _rng(4, seed=1), _rng(30, 1, seed=2)
    ints = np.arange(-60, 60).reshape(30, 4)
    got = {}
    with torch.no_grad():

        def run(ns):
            for n in ns:
                ta, tb, tc = torch.tensor(a[:n]), torch.tensor(b), torch.tensor(c[:n])
                ti, tj = torch.tensor(ints[:n]), torch.tensor(ints[:n] % 5 + 1)
                floor = torch.div(ti, 7, rounding_mode="floor")
                # (the divisor's padded rows are zeros: their quotients are cut)
                got[n] = (
                    ta / 3.0,
                    ta / tb,
                    ta / tc,
                    floor,
                    torch.div(ti, tj, rounding_mode="trunc"),
                )

        run([17, 18])  # (the first size runs as it is; a second, bucket 24's programs)
        assert made(lambda: run(range(19, 25))) == 0
    assert sorted(got) == list(range(17, 25))
    for n, (by3, byb, byc, floor, trunc) in got.items():
        np.testing.assert_array_equal(by3.numpy(), a[:n] / np.float32(3.0))
        np.testing.assert_array_equal(byb.numpy(), a[:n] / b)
        np.testing.assert_array_equal(byc.numpy(), a[:n] / c[:n])
        np.testing.assert_array_equal(floor.numpy(), ints[:n] // 7)
        np.testing.assert_array_equal(trunc.numpy(), np.fix(ints[:n] / (ints[:n] % 5 + 1)))


def _manual_attention(x, bias, w):
    """nanoGPT's attention without flash: `q @ k^T`, a causal mask compared from a buffer,
    `masked_fill`, softmax over the last dim, `att @ v`."""
    T = x.shape[1]
    q, k, v = (x @ w).view(1, T, 3, 2, 8).permute(2, 0, 3, 1, 4).unbind(0)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(8))
    att = att.masked_fill(bias[:, :, :T, :T] == 0, float("-inf"))
    return torch.bmm(F.softmax(att, dim=-1)[0], v[0])


def test_attention_written_with_matmul_compiles_once_per_bucket():
    """A cache-less `generate` over attention written out: every matmul, the mask's
    comparison and softmax meet a (T, T) shape one bigger at each step."""
    bias = torch.tril(torch.ones(40, 40)).view(1, 1, 40, 40)
    w = torch.tensor(_rng(16, 48, seed=1))
    xs = _rng(1, 40, 16, seed=2)
    with torch.no_grad():
        _manual_attention(torch.tensor(xs[:, :17]), bias, w)
        _manual_attention(torch.tensor(xs[:, :18]), bias, w)  # (bucket 24's programs)
        outs = {}
        run = (
            lambda: outs.update(  # noqa: E731
                (n, _manual_attention(torch.tensor(xs[:, :n]), bias, w)) for n in range(19, 25)
            )
        )
        assert made(run) == 0
    for n, out in outs.items():
        y = xs[0, :n].astype(np.float64) @ _rng(16, 48, seed=1).astype(np.float64)
        q, k, v = y.reshape(n, 3, 2, 8).transpose(1, 2, 0, 3)
        s = np.where(
            np.tril(np.ones((n, n), bool)), q @ k.transpose(0, 2, 1) / math.sqrt(8), -np.inf
        )
        p = np.exp(s - s.max(-1, keepdims=True))
        assert out.shape == (2, n, 8)
        np.testing.assert_allclose(
            out.numpy(), (p / p.sum(-1, keepdims=True)) @ v, rtol=1e-4, atol=1e-5
        )


def test_products_and_binary_ops_of_fixed_sizes_run_as_they_are(monkeypatch):
    """Only sizes that change pad: a product whose sizes never change keeps its program and
    its numbers (no host copies at each call)."""
    monkeypatch.setattr(_rows, "_FIRST_SIZES", collections.OrderedDict())
    a, b = torch.tensor(_rng(3, 20, 20)), torch.tensor(_rng(3, 20, 20, seed=1))
    with torch.no_grad():
        for _ in range(3):
            out, most = a @ b, torch.maximum(a, b)
    assert _plan_of("matmul") is None and _plan_of("maximum") is None
    np.testing.assert_array_equal(
        most.numpy(), np.maximum(_rng(3, 20, 20), _rng(3, 20, 20, seed=1))
    )
    np.testing.assert_allclose(out.numpy(), _rng(3, 20, 20) @ _rng(3, 20, 20, seed=1), rtol=1e-5)
