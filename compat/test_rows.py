"""Row buckets (jtorch/_ops/_rows.py) against PyTorch: what a cache-less `generate` loop runs
without grad at each new length -- linear, layer_norm, gelu, causal attention, softmax,
rms_norm, elementwise math -- runs
padded to a bucket in jtorch and must give PyTorch's values, shapes and dtypes at every
length, in each float dtype, and the same values as jtorch's own exact kernels (the calls the
tape records run unpadded)."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

_TOL = {
    "float32": dict(rtol=1e-5, atol=1e-5),
    "float64": dict(rtol=1e-10, atol=1e-10),
    "bfloat16": dict(rtol=2e-2, atol=2e-2),
}


def _step(lib, x, p, causal):
    """One generate step's kernels, on `lib` (torch or jtorch)."""
    F = lib.nn.functional
    n = x.shape[1]
    h = F.layer_norm(x, (24,), p["ln_w"], p["ln_b"])
    qkv = F.linear(h, p["w"], p["b"])
    q, k, v = qkv.view(1, n, 3, 2, 12).permute(2, 0, 3, 1, 4).unbind(0)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    last = (F.softmax(h, -1), F.log_softmax(qkv, dim=2), F.rms_norm(h, (24,)), F.silu(h))
    elementwise = (lib.tanh(h), lib.exp(h), F.relu(h), lib.sigmoid(qkv))
    rows = (h, F.gelu(qkv, approximate="tanh"), F.gelu(h), a, F.linear(h, p["w"][:5]))
    return rows + last + elementwise


def _params(lib, dtype):
    rng = np.random.default_rng(0)
    shapes = {"w": (72, 24), "b": (72,), "ln_w": (24,), "ln_b": (24,)}
    return {k: lib.tensor(rng.standard_normal(s) * 0.3, dtype=dtype) for k, s in shapes.items()}


@pytest.mark.parametrize("dtype", sorted(_TOL))
@pytest.mark.parametrize("causal", [True, False])
def test_generate_step_kernels_match_pytorch_at_each_length(dtype, causal):
    tp, jp = _params(torch, getattr(torch, dtype)), _params(jtorch, getattr(jtorch, dtype))
    for n in range(1, 20):
        x = np.random.default_rng(n).standard_normal((1, n, 24))
        with torch.no_grad():
            want = _step(torch, torch.tensor(x, dtype=getattr(torch, dtype)), tp, causal)
        with jtorch.no_grad():
            got = _step(jtorch, jtorch.tensor(x, dtype=getattr(jtorch, dtype)), jp, causal)
        for w, g in zip(want, got):
            assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == str(w.dtype)
            np.testing.assert_allclose(
                g.float().numpy(), w.float().numpy(), err_msg=f"length {n}", **_TOL[dtype]
            )


def test_padded_and_exact_kernels_agree():
    """The same calls with the tape recording (exact kernels) and without (buckets)."""
    jp = _params(jtorch, jtorch.float32)
    tp = _params(torch, torch.float32)
    for n in (3, 5, 9, 13):
        x = np.random.default_rng(n).standard_normal((1, n, 24))
        with jtorch.no_grad():
            padded = _step(jtorch, jtorch.tensor(x, dtype=jtorch.float32), jp, True)
        xr = jtorch.tensor(x, dtype=jtorch.float32).requires_grad_()
        exact = _step(jtorch, xr, jp, True)
        assert all(e.grad_fn is not None for e in exact)
        want = _step(torch, torch.tensor(x, dtype=torch.float32), tp, True)
        for p, e, w in zip(padded, exact, want):
            np.testing.assert_allclose(p.numpy(), e.detach().numpy(), rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(e.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mask_kind", [None, "bool", "float"])
def test_decode_attention_over_a_growing_cache_matches_pytorch(mask_kind):
    """One query against a key-value cache one longer at each step (keys padded and masked)."""
    rng = np.random.default_rng(1)
    q, kv = rng.standard_normal((1, 2, 1, 8)), rng.standard_normal((1, 2, 30, 8))
    masks = {
        None: None,
        "bool": rng.random((1, 1, 1, 30)) > 0.3,
        "float": np.where(rng.random((1, 1, 1, 30)) > 0.3, 0.0, -np.inf) + rng.random((1, 30)),
    }
    m = masks[mask_kind]
    for n in range(2, 30):
        outs = []
        for lib, ctx in ((torch, torch.no_grad), (jtorch, jtorch.no_grad)):
            cache = lib.tensor(kv[:, :, :n], dtype=lib.float32)
            mask = None if m is None else lib.tensor(m[..., :n])
            if mask is not None and mask.is_floating_point():
                mask = mask.to(lib.float32)
            with ctx():
                outs.append(
                    lib.nn.functional.scaled_dot_product_attention(
                        lib.tensor(q, dtype=lib.float32), cache, cache, mask
                    )
                )
        want, got = outs
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(
            got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6, err_msg=f"length {n}"
        )


def _einsum_decode_step(lib, q, cache, positions, ints):
    """x-transformers' decode step without grad: rotary frequencies from the positions
    (`t.max()`, `einsum`, `/`), attention by `einsum` and `softmax` over keys one longer at
    each step, and binary ops over the growing dim (a number, a row, a column)."""
    max_pos = positions.max() + 1
    freqs = lib.einsum("b i , j -> b i j", positions[None].to(q.dtype), q[0, 0, 0, :4]) / 3.0
    sim = lib.einsum("b h i d, b h j d -> b h i j", q, cache) * 0.3
    attn = sim.softmax(dim=-1)
    out = lib.einsum("b h i j, b h j d -> b h i d", attn, cache)
    scores = cache[0, 0]
    return (
        max_pos, positions.min(), scores.max(), scores.min(), freqs, sim, attn,
        lib.nn.functional.log_softmax(sim, -1), out, scores / scores[:1], scores / scores[:, :1],
        lib.div(ints, 3, rounding_mode="floor"), lib.div(ints, -3, rounding_mode="trunc"),
        ints / 4, lib.true_divide(scores, 7.0),
    )  # fmt: skip


@pytest.mark.parametrize("dtype", sorted(_TOL))
def test_einsum_decode_steps_match_pytorch_at_each_length(dtype):
    rng = np.random.default_rng(2)
    q, kv = rng.standard_normal((2, 3, 1, 8)), rng.standard_normal((2, 3, 40, 8))
    for n in range(2, 40):
        outs = []
        for lib in (torch, jtorch):
            dt = getattr(lib, dtype)
            with lib.no_grad():
                outs.append(
                    _einsum_decode_step(
                        lib,
                        lib.tensor(q, dtype=dt),
                        lib.tensor(kv[:, :, :n], dtype=dt),
                        lib.arange(n),
                        lib.arange(-2 * n, 2 * n, 4).reshape(n, 1),
                    )
                )
        for k, (w, g) in enumerate(zip(*outs)):
            assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == str(w.dtype), k
            np.testing.assert_allclose(
                g.double().numpy(), w.double().numpy(), err_msg=f"length {n}, output {k}",
                **_TOL[dtype],
            )  # fmt: skip


def _matmul_attention_step(lib, x, bias, w):
    """nanoGPT's attention without flash (`@`, a mask compared from a buffer, `masked_fill`,
    softmax, `@`), a `bmm` and elementwise ops over a (T, T) shape that grows each step."""
    T = x.shape[1]
    q, k, v = (x @ w).view(1, T, 3, 2, 8).permute(2, 0, 3, 1, 4).unbind(0)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(8))
    causal = bias[:, :, :T, :T] == 0
    att = att.masked_fill(causal, float("-inf"))
    probs = lib.nn.functional.softmax(att, dim=-1)
    return (
        att, causal, probs, probs @ v, lib.bmm(probs[0], v[0]), att[0, 0] < 0.1,
        lib.maximum(att[0, 0], att[0, 1, :1]), lib.exp(att[0, 0]), att[0, 0] - att[0, 1],
    )  # fmt: skip


@pytest.mark.parametrize("dtype", sorted(_TOL))
def test_matmul_attention_steps_match_pytorch_at_each_length(dtype):
    rng = np.random.default_rng(3)
    xs, w = rng.standard_normal((1, 40, 16)), rng.standard_normal((16, 48)) * 0.3
    outs = {}
    for lib in (torch, jtorch):
        dt = getattr(lib, dtype)
        bias = lib.tril(lib.ones(40, 40)).view(1, 1, 40, 40)
        with lib.no_grad():
            wt = lib.tensor(w, dtype=dt)
            outs[lib] = [
                _matmul_attention_step(lib, lib.tensor(xs[:, :n], dtype=dt), bias, wt)
                for n in range(2, 40)
            ]
    for n, want, got in zip(range(2, 40), outs[torch], outs[jtorch]):
        for k, (w_, g) in enumerate(zip(want, got)):
            assert tuple(g.shape) == tuple(w_.shape) and str(g.dtype) == str(w_.dtype), k
            np.testing.assert_allclose(
                g.double().numpy(), w_.double().numpy(), err_msg=f"length {n}, output {k}",
                **_TOL[dtype],
            )  # fmt: skip
