"""flex_attention, BlockMask and create_block_mask against mathematics (numpy references).

Expected values: attention as softmax(scale * Q K^T + mods, masked) V in float64 numpy, its
logsumexp, its analytic gradients, and block tables derived by hand for a causal mask.
"""

import functools
import math

import numpy as np
import pytest

import jtorch as torch
from jtorch.nn.attention.flex_attention import (
    AuxRequest,
    BlockMask,
    and_masks,
    create_block_mask,
    create_mask,
    flex_attention,
    noop_mask,
    or_masks,
)

if torch.cuda.is_available():
    # PyTorch's masks are made on device="cuda" by default; these tests' tensors are the CPU's
    create_block_mask = functools.partial(create_block_mask, device="cpu")
    create_mask = functools.partial(create_mask, device="cpu")


def _data(B=2, Hq=4, L=9, E=8, Hkv=2, S=11, Ev=5, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((B, Hq, L, E)),
        rng.standard_normal((B, Hkv, S, E)),
        rng.standard_normal((B, Hkv, S, Ev)),
    )


def _ref(q, k, v, scale=None, bias=None, allowed=None):
    """(output, lse, probs) of dense attention in float64; rows with nothing allowed give 0
    and -inf."""
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, 1), np.repeat(v, g, 1)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = scale * q @ np.swapaxes(k, -1, -2)
    if bias is not None:
        s = s + bias
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    d = e.sum(-1, keepdims=True)
    p = np.where(d > 0, e / np.where(d > 0, d, 1), 0)
    lse = np.where(d[..., 0] > 0, np.log(np.where(d > 0, d, 1))[..., 0] + m[..., 0], -np.inf)
    return p @ v, lse, p


def _t(a, dtype=torch.float64, grad=False):
    return torch.tensor(a, dtype=dtype, requires_grad=grad)


def test_no_mods_is_softmax_attention_with_gqa_and_other_value_dim():
    q, k, v = _data()
    out, aux = flex_attention(_t(q), _t(k), _t(v), enable_gqa=True, return_aux=AuxRequest(lse=True))
    ref, lse, _ = _ref(q, k, v)
    assert tuple(out.shape) == (2, 4, 9, 5) and out.dtype == torch.float64
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(aux.lse.numpy(), lse, rtol=1e-10, atol=1e-12)
    assert aux.max_scores is None


def test_float32_default_scale_and_explicit_scale():
    q, k, v = _data(Hq=2)
    out = flex_attention(
        _t(q, torch.float32), _t(k, torch.float32), _t(v, torch.float32), scale=0.25
    )
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), _ref(q, k, v, scale=0.25)[0], rtol=1e-5, atol=1e-5)


def test_causal_mask_mod_equals_sdpa_is_causal():
    q, k, v = _data(Hq=2, L=37, S=37)
    bm = create_block_mask(lambda b, h, qi, kv: qi >= kv, None, None, 37, 37, BLOCK_SIZE=16)
    out = flex_attention(_t(q), _t(k), _t(v), block_mask=bm)
    sdpa = torch.nn.functional.scaled_dot_product_attention(_t(q), _t(k), _t(v), is_causal=True)
    np.testing.assert_allclose(out.numpy(), sdpa.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        out.numpy(),
        _ref(q, k, v, allowed=np.tril(np.ones((37, 37), bool)))[0],
        rtol=1e-10,
        atol=1e-12,
    )


def test_fully_masked_rows_give_zero_and_minus_inf_and_finite_gradients():
    q, k, v = _data()
    rows = (np.arange(9) % 3 != 0)[:, None]
    bm = create_block_mask(lambda b, h, qi, kv: (qi % 3 != 0) & (kv <= qi), 2, 4, 9, 11)
    tq, tk, tv = _t(q, grad=True), _t(k, grad=True), _t(v, grad=True)
    out, aux = flex_attention(
        tq, tk, tv, block_mask=bm, enable_gqa=True, return_aux=AuxRequest(lse=True, max_scores=True)
    )
    allowed = rows & np.tril(np.ones((9, 11), bool))
    ref, lse, _ = _ref(q, k, v, allowed=allowed)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(out.detach().numpy()[:, :, ::3], 0)
    np.testing.assert_allclose(aux.lse.detach().numpy(), lse, rtol=1e-10)
    assert np.isneginf(aux.max_scores.detach().numpy()[:, :, ::3]).all()
    out.sum().backward()
    assert np.isfinite(tq.grad.numpy()).all() and np.isfinite(tk.grad.numpy()).all()
    np.testing.assert_array_equal(tq.grad.numpy()[:, :, ::3], 0)


def test_max_scores_are_the_row_maxima_of_modified_scores():
    q, k, v = _data(Hq=2, Hkv=2)
    _, aux = flex_attention(
        _t(q),
        _t(k),
        _t(v),
        score_mod=lambda s, b, h, qi, kv: s * 2,
        return_aux=AuxRequest(max_scores=True),
    )
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(8) * 2
    np.testing.assert_allclose(aux.max_scores.numpy(), s.max(-1), rtol=1e-12)
    assert aux.lse is None


@pytest.mark.parametrize("mod", ["alibi", "softcap", "table", "chained_index", "document"])
def test_score_and_mask_mods(mod):
    B, L, S = 2, 9, 11
    q, k, v = _data()
    qi, kv = np.arange(L)[:, None], np.arange(S)[None, :]
    slopes = np.array([0.5, 0.25, -0.125, 1.0])
    table = np.random.default_rng(1).standard_normal((B, 1, L, S))
    docs = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3])
    score_mod, block_mask, bias, allowed = None, None, None, None
    if mod == "alibi":
        ts = _t(slopes)
        score_mod = lambda s, b, h, i, j: s + ts[h] * (j - i)  # noqa: E731
        bias = slopes[None, :, None, None] * (kv - qi)
    elif mod == "table":
        tt = _t(table)
        score_mod = lambda s, b, h, i, j: s + tt[b, 0, i, j]  # noqa: E731
        bias = table
    elif mod == "chained_index":  # not elementwise on broadcast indices: runs under vmap
        tt = _t(table)
        score_mod = lambda s, b, h, i, j: s + tt[b][0][i][j]  # noqa: E731
        bias = table
    elif mod == "document":
        td = torch.tensor(docs)
        block_mask = create_block_mask(
            lambda b, h, i, j: td[i] == td[j], None, None, L, S, BLOCK_SIZE=4
        )
        allowed = docs[:L, None] == docs[None, :]
    if mod == "softcap":
        out = flex_attention(
            _t(q),
            _t(k),
            _t(v),
            enable_gqa=True,
            score_mod=lambda s, b, h, i, j: 2.0 * torch.tanh(s / 2.0),
        )
        s = q @ np.swapaxes(np.repeat(k, 2, 1), -1, -2) / math.sqrt(8)
        p = np.exp(2 * np.tanh(s / 2))
        ref = (p / p.sum(-1, keepdims=True)) @ np.repeat(v, 2, 1)
    else:
        out = flex_attention(
            _t(q), _t(k), _t(v), score_mod=score_mod, block_mask=block_mask, enable_gqa=True
        )
        ref = _ref(q, k, v, bias=bias, allowed=allowed)[0]
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_gradients_are_the_analytic_ones():
    q, k, v = _data(Hq=2, Hkv=2)
    allowed = np.tril(np.ones((9, 11), bool), 2)
    bm = create_block_mask(lambda b, h, i, j: j <= i + 2, None, None, 9, 11, BLOCK_SIZE=4)
    w = np.random.default_rng(5).standard_normal((2, 2, 9, 5))
    tq, tk, tv = _t(q, grad=True), _t(k, grad=True), _t(v, grad=True)
    (flex_attention(tq, tk, tv, block_mask=bm) * _t(w)).sum().backward()
    _, _, p = _ref(q, k, v, allowed=allowed)
    scale = 1 / math.sqrt(8)
    dv = np.swapaxes(p, -1, -2) @ w
    dp = w @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    np.testing.assert_allclose(tv.grad.numpy(), dv, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(tq.grad.numpy(), scale * ds @ k, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        tk.grad.numpy(), scale * np.swapaxes(ds, -1, -2) @ q, rtol=1e-9, atol=1e-12
    )


def test_lse_gradient_is_the_softmax():
    q, k, v = _data(Hq=2, Hkv=2)
    tq = _t(q, grad=True)
    _, aux = flex_attention(tq, _t(k), _t(v), return_aux=AuxRequest(lse=True))
    aux.lse.sum().backward()
    _, _, p = _ref(q, k, v)
    np.testing.assert_allclose(tq.grad.numpy(), p @ k / math.sqrt(8), rtol=1e-9, atol=1e-12)


def test_half_inputs_compute_in_float32():
    q, k, v = _data()
    out, aux = flex_attention(
        _t(q, torch.bfloat16),
        _t(k, torch.bfloat16),
        _t(v, torch.bfloat16),
        enable_gqa=True,
        return_aux=AuxRequest(lse=True),
    )
    assert out.dtype == torch.bfloat16 and aux.lse.dtype == torch.float32
    np.testing.assert_allclose(out.float().numpy(), _ref(q, k, v)[0], atol=3e-2)


def test_key_value_batch_broadcasts_with_a_batched_block_mask():
    q, k, v = _data(B=3, Hq=2, Hkv=2)
    lengths = torch.tensor([11, 5, 2])
    bm = create_block_mask(lambda b, h, i, j: j < lengths[b], 3, None, 9, 11)
    out = flex_attention(_t(q), _t(k[:1]), _t(v[:1]), block_mask=bm)
    allowed = np.arange(11)[None, None, None, :] < np.array([11, 5, 2])[:, None, None, None]
    ref = _ref(q, np.repeat(k[:1], 3, 0), np.repeat(v[:1], 3, 0), allowed=allowed)[0]
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_block_tables_are_honoured_as_the_kernels_read_them():
    """A full block is attended without the mask_mod; an unlisted block not at all."""
    q, k, v = _data(B=1, Hq=1, Hkv=1, L=8, S=8)
    num = torch.tensor([[[1, 1]]], dtype=torch.int32)
    idx = torch.tensor([[[[1, 0], [0, 1]]]], dtype=torch.int32)
    bm = BlockMask.from_kv_blocks(
        num,
        idx,
        num,
        torch.tensor([[[[0, 0], [1, 0]]]], dtype=torch.int32),
        BLOCK_SIZE=4,
        mask_mod=lambda b, h, i, j: i == j,
    )
    # row block 0: partial block 1 (diagonal: nothing there), full block 0
    # row block 1: partial block 0 (diagonal: nothing there), full block 1
    allowed = np.zeros((8, 8), bool)
    allowed[:4, :4] = allowed[4:, 4:] = True
    out = flex_attention(_t(q), _t(k), _t(v), block_mask=bm)
    np.testing.assert_allclose(out.numpy(), _ref(q, k, v, allowed=allowed)[0], rtol=1e-10)


def test_causal_block_tables():
    bm = create_block_mask(lambda b, h, i, j: i >= j, None, None, 64, 64, BLOCK_SIZE=16)
    R = 4
    assert bm.shape == (1, 1, 64, 64) and bm.BLOCK_SIZE == (16, 16)
    assert bm.kv_num_blocks.tolist() == [[[1] * R]]
    assert [row[0] for row in bm.kv_indices[0, 0].tolist()] == list(range(R))
    assert bm.full_kv_num_blocks.tolist() == [[list(range(R))]]
    for r, row in enumerate(bm.full_kv_indices[0, 0].tolist()):
        assert row[:r] == list(range(r))
    assert bm.q_num_blocks.tolist() == [[[1] * R]]
    assert bm.full_q_num_blocks.tolist() == [[[R - 1 - c for c in range(R)]]]
    for c, row in enumerate(bm.full_q_indices[0, 0].tolist()):
        assert row[: R - 1 - c] == list(range(c + 1, R))
    assert bm.to_dense().tolist() == [[np.tril(np.ones((R, R), int)).tolist()]]
    assert bm.kv_num_blocks.dtype == torch.int32 and bm.kv_indices.dtype == torch.int32
    # 4 partial + 6 full blocks of 256 over 64 * 64 positions
    assert bm.sparsity() == pytest.approx(100 * (1 - 10 * 256 / 4096))
    assert str(bm).splitlines()[2:6] == ["██      ", "████    ", "██████  ", "████████"]


def test_block_mask_indexing_and_adjust():
    bm = create_block_mask(lambda b, h, i, j: (i >= j) & (h != 1), 2, 3, 40, 40, BLOCK_SIZE=8)
    assert bm[1].kv_num_blocks.shape == (1, 3, 5)
    assert bm[0, 1].to_dense().sum().item() == 0 and bm[0, 2].to_dense().sum().item() == 15
    assert bm[:, 1:].shape == (2, 2, 40, 40)
    with pytest.raises(RuntimeError, match="sliced BlockMask"):
        bm[0].mask_mod(*(torch.tensor(0),) * 4)
    small = bm._adjust(16, 16)
    assert small.shape == (2, 3, 16, 16) and small.kv_num_blocks.shape == (2, 3, 2)
    assert small.to_dense()[0, 0].tolist() == [[1, 0], [1, 1]]


def test_create_mask_and_mask_combinators():
    causal = lambda b, h, i, j: i >= j  # noqa: E731
    first = lambda b, h, i, j: j == 0  # noqa: E731
    m = create_mask(or_masks(and_masks(causal, lambda b, h, i, j: i - j < 2), first), 2, None, 5, 5)
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    expected = ((i >= j) & (i - j < 2)) | (j == 0)
    assert m.dtype == torch.bool and tuple(m.shape) == (2, 1, 5, 5)
    np.testing.assert_array_equal(m.numpy(), np.broadcast_to(expected, (2, 1, 5, 5)))
    s = create_mask(lambda sc, b, h, i, j: torch.where(i >= j, sc, -float("inf")), 1, 1, 4, 4)
    np.testing.assert_array_equal(s.numpy()[0, 0], np.tril(np.ones((4, 4), bool)))
    assert create_mask(noop_mask, None, None, 2, 3).numpy().all()


def test_compiled_flex_attention_matches_eager_and_trains():
    q, k, v = _data(Hq=2, Hkv=2)
    bias = torch.nn.Parameter(_t(np.zeros(2)))

    def step(q, k, v):
        bm = create_block_mask(lambda b, h, i, j: i >= j, None, None, 9, 11)
        out = flex_attention(
            q, k, v, score_mod=lambda s, b, h, i, j: s + bias[h] * j, block_mask=bm
        )
        return out

    compiled = torch.compile(step, fullgraph=True)  # raises rather than falling back
    eager = step(_t(q), _t(k), _t(v))
    np.testing.assert_allclose(
        compiled(_t(q), _t(k), _t(v)).detach().numpy(),
        eager.detach().numpy(),
        rtol=1e-10,
        atol=1e-12,
    )
    fa = torch.compile(flex_attention, fullgraph=True)
    tq = _t(q, grad=True)
    out = fa(tq, _t(k), _t(v))
    out.sum().backward()
    _, _, p = _ref(q, k, v)
    dp = np.ones((2, 2, 9, 5)) @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    np.testing.assert_allclose(tq.grad.numpy(), ds @ k / math.sqrt(8), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("bad", ["embed", "heads", "gqa_multiple", "lengths", "three_d"])
def test_bad_arguments_raise(bad):
    q, k, v = (_t(x) for x in _data())
    bm = create_block_mask(noop_mask, None, None, 4, 11)
    with pytest.raises((ValueError, NotImplementedError)):
        if bad == "embed":
            flex_attention(q, k[..., :3], v, enable_gqa=True)
        elif bad == "heads":
            flex_attention(q, k, v)
        elif bad == "gqa_multiple":
            flex_attention(q[:, :3], k, v, enable_gqa=True)
        elif bad == "lengths":
            flex_attention(q, k, v, block_mask=bm, enable_gqa=True)
        else:
            flex_attention(q[0], k[0], v[0], enable_gqa=True)


def test_compiled_create_block_mask_returns_the_same_block_mask():
    mod = lambda b, h, i, j: (i >= j) & (i - j < 70)  # noqa: E731
    eager = create_block_mask(mod, 2, None, 300, 260, BLOCK_SIZE=(64, 32))
    compiled = torch.compile(create_block_mask, fullgraph=True)(
        mod, 2, None, 300, 260, BLOCK_SIZE=(64, 32)
    )
    assert isinstance(compiled, BlockMask) and compiled.mask_mod is mod
    assert compiled.shape == eager.shape and compiled.BLOCK_SIZE == eager.BLOCK_SIZE
    for name in BlockMask._TENSOR_ATTRS[:8]:
        assert getattr(compiled, name).tolist() == getattr(eager, name).tolist(), name
