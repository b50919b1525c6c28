"""Recurrent layers, attention, transformers and `nn.utils.rnn` (no torch: numpy references)."""

import math
import warnings

import numpy as np
import pytest

import jtorch
import jtorch.nn as nn
from jtorch.nn.utils import rnn as rnn_utils

from .helpers import to_np as _np


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _lstm_ref(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One LSTM layer over time-major x, from the documented equations."""
    outs = []
    for t in range(x.shape[0]):
        g = x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, gg, o = np.split(g, 4, axis=-1)
        c = _sig(f) * c + _sig(i) * np.tanh(gg)
        h = _sig(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def _gru_ref(x, h, w_ih, w_hh, b_ih, b_hh):
    outs = []
    for t in range(x.shape[0]):
        ri, zi, ni = np.split(x[t] @ w_ih.T + b_ih, 3, axis=-1)
        rh, zh, nh = np.split(h @ w_hh.T + b_hh, 3, axis=-1)
        r, z = _sig(ri + rh), _sig(zi + zh)
        n = np.tanh(ni + r * nh)
        h = (1 - z) * n + z * h
        outs.append(h)
    return np.stack(outs), h


def _params(m, suffix=""):
    return [
        _np(getattr(m, f"{n}_l0{suffix}")).astype(np.float64)
        for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    ]


def test_lstm_matches_equations():
    jtorch.manual_seed(0)
    m = nn.LSTM(3, 4, bidirectional=True)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    out, (h, c) = m(jtorch.tensor(x, dtype=jtorch.float32))
    assert out.shape == (5, 2, 8) and h.shape == (2, 2, 4) and c.shape == (2, 2, 4)
    z = np.zeros((2, 4))
    fo, fh, fc = _lstm_ref(x, z, z, *_params(m))
    bo, bh, bc = _lstm_ref(x[::-1], z, z, *_params(m, "_reverse"))
    np.testing.assert_allclose(_np(out), np.concatenate([fo, bo[::-1]], -1), atol=1e-5)
    np.testing.assert_allclose(_np(h), np.stack([fh, bh]), atol=1e-5)
    np.testing.assert_allclose(_np(c), np.stack([fc, bc]), atol=1e-5)


def test_gru_and_cell_match_equations():
    jtorch.manual_seed(1)
    m = nn.GRU(3, 4, batch_first=True)
    x = np.random.default_rng(1).standard_normal((2, 5, 3))
    h0 = np.random.default_rng(2).standard_normal((1, 2, 4))
    out, h = m(jtorch.tensor(x, dtype=jtorch.float32), jtorch.tensor(h0, dtype=jtorch.float32))
    ro, rh = _gru_ref(x.transpose(1, 0, 2), h0[0], *_params(m))
    np.testing.assert_allclose(_np(out), ro.transpose(1, 0, 2), atol=1e-5)
    np.testing.assert_allclose(_np(h)[0], rh, atol=1e-5)
    cell = nn.GRUCell(3, 4)
    w = [
        _np(p).astype(np.float64)
        for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    ]
    got = cell(jtorch.tensor(x[:, 0], dtype=jtorch.float32))
    np.testing.assert_allclose(
        _np(got), _gru_ref(x[:, :1].transpose(1, 0, 2), np.zeros((2, 4)), *w)[1], atol=1e-5
    )


def test_rnn_relu_and_tanh():
    for nl, f in (("tanh", np.tanh), ("relu", lambda v: np.maximum(v, 0))):
        m = nn.RNN(2, 3, nonlinearity=nl, bias=False)
        x = np.random.default_rng(3).standard_normal((4, 1, 2))
        out, h = m(jtorch.tensor(x, dtype=jtorch.float32))
        w_ih, w_hh = _np(m.weight_ih_l0), _np(m.weight_hh_l0)
        hh = np.zeros((1, 3))
        for t in range(4):
            hh = f(x[t] @ w_ih.T + hh @ w_hh.T)
        np.testing.assert_allclose(_np(h)[0], hh, atol=1e-5)


def test_parameter_names_shapes_and_init_bounds():
    m = nn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=2)
    shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
    assert list(shapes)[:5] == [
        "weight_ih_l0",
        "weight_hh_l0",
        "bias_ih_l0",
        "bias_hh_l0",
        "weight_hr_l0",
    ]
    assert shapes["weight_ih_l0"] == (24, 3)
    assert shapes["weight_hh_l0"] == (24, 2)
    assert shapes["weight_hr_l0_reverse"] == (2, 6)
    assert shapes["weight_ih_l1"] == (24, 4)
    assert len(shapes) == 20
    bound = 1 / math.sqrt(6)
    for p in m.parameters():
        assert float(p.abs().max()) <= bound
    assert [len(w) for w in m.all_weights] == [5, 5, 5, 5]
    assert m._flat_weights[0] is m.weight_ih_l0
    m.flatten_parameters()  # a no-op
    g = nn.GRU(2, 3, bias=False)
    assert list(g.state_dict()) == ["weight_ih_l0", "weight_hh_l0"]
    assert tuple(g.weight_ih_l0.shape) == (9, 2)
    cell = nn.LSTMCell(2, 5)
    assert tuple(cell.weight_hh.shape) == (20, 5) and tuple(cell.bias_ih.shape) == (20,)


def test_reprs():
    assert repr(
        nn.LSTM(3, 4, 2, batch_first=True, dropout=0.5, bidirectional=True, proj_size=2, bias=False)
    ) == (
        "LSTM(3, 4, proj_size=2, num_layers=2, bias=False, batch_first=True, dropout=0.5, "
        "bidirectional=True)"
    )
    assert repr(nn.RNN(3, 4, nonlinearity="relu")) == "RNN(3, 4)"
    assert repr(nn.RNNCell(3, 4, bias=False, nonlinearity="relu")) == (
        "RNNCell(3, 4, bias=False, nonlinearity=relu)"
    )
    assert repr(nn.GRUCell(3, 4)) == "GRUCell(3, 4)"
    assert (
        "(out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, "
        "bias=True)" in repr(nn.MultiheadAttention(4, 2))
    )


def test_unbatched_and_hidden_shapes():
    m = nn.LSTM(3, 4, num_layers=2, proj_size=2)
    out, (h, c) = m(jtorch.randn(5, 3))
    assert out.shape == (5, 2) and h.shape == (2, 2) and c.shape == (2, 4)
    g = nn.GRU(3, 4, batch_first=True)
    out, h = g(jtorch.randn(5, 3), jtorch.zeros(1, 4))
    assert out.shape == (5, 4) and h.shape == (1, 4)
    cell = nn.LSTMCell(3, 4)
    h, c = cell(jtorch.randn(3))
    assert h.shape == (4,) and c.shape == (4,)


def test_errors():
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'x'"):
        nn.RNN(3, 4, nonlinearity="x")
    with pytest.raises(ValueError, match="dropout should be a number"):
        nn.GRU(3, 4, dropout=2)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        nn.GRU(3, 4)(jtorch.zeros(2, 2, 3), jtorch.zeros(1, 3, 4))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        nn.RNN(3, 4)(jtorch.zeros(2, 2, 3, dtype=jtorch.float64))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        nn.RNNCell(3, 4)(jtorch.zeros(2, 5))
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")


def test_dropout_between_layers_train_only():
    jtorch.manual_seed(0)
    m = nn.LSTM(3, 8, num_layers=2, dropout=0.5)
    x = jtorch.randn(4, 2, 3)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(_np(a), _np(b))
    m.train()
    c, _ = m(x)
    d, _ = m(x)
    assert not np.allclose(_np(c), _np(d))  # fresh masks per call
    m1 = nn.LSTM(3, 8, num_layers=2, dropout=1.0)
    m1.train()
    m1.load_state_dict(m.state_dict())
    # with every first-layer output dropped, layer 2 sees zeros: its output is input-independent
    e, _ = m1(x)
    f, _ = m1(jtorch.randn(4, 2, 3))
    np.testing.assert_allclose(_np(e), _np(f), atol=1e-6)


def test_gradients_match_finite_differences():
    jtorch.manual_seed(0)
    m = nn.GRU(2, 3, bidirectional=True).double()
    x = jtorch.randn(4, 2, 2, dtype=jtorch.float64, requires_grad=True)
    out, h = m(x)
    (out.sum() + h.pow(2).sum()).backward()
    eps = 1e-6
    xn = _np(x).copy()
    num = np.zeros_like(xn)
    for idx in np.ndindex(*xn.shape):
        vals = []
        for s in (1, -1):
            xp = xn.copy()
            xp[idx] += s * eps
            with jtorch.no_grad():
                o, hh = m(jtorch.tensor(xp))
            vals.append(float(o.sum() + hh.pow(2).sum()))
        num[idx] = (vals[0] - vals[1]) / (2 * eps)
    np.testing.assert_allclose(_np(x.grad), num, rtol=1e-5, atol=1e-7)
    assert m.weight_hh_l0_reverse.grad is not None


def test_packed_matches_per_sequence_runs():
    """A packed batch gives each sequence what running it alone gives."""
    jtorch.manual_seed(0)
    m = nn.LSTM(2, 3, bidirectional=True)
    seqs = [jtorch.randn(n, 2) for n in (2, 4, 3)]
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    out, (h, c) = m(packed)
    padded, lengths = rnn_utils.pad_packed_sequence(out)
    assert lengths.tolist() == [2, 4, 3]
    for b, s in enumerate(seqs):
        o1, (h1, c1) = m(s)
        n = s.shape[0]
        np.testing.assert_allclose(_np(padded[:n, b]), _np(o1), atol=1e-5)
        assert not _np(padded[n:, b]).any()
        np.testing.assert_allclose(_np(h[:, b]), _np(h1), atol=1e-5)
        np.testing.assert_allclose(_np(c[:, b]), _np(c1), atol=1e-5)


def test_pack_pad_roundtrip_and_structure():
    x = jtorch.arange(12.0).reshape(4, 3, 1)
    p = rnn_utils.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
    assert p.batch_sizes.tolist() == [3, 2, 1, 1]
    assert p.batch_sizes.dtype == jtorch.int64
    assert p.sorted_indices.tolist() == [1, 0, 2]
    assert p.unsorted_indices.tolist() == [1, 0, 2]
    # time-major rows of sequences in sorted order: t=0: b1, b0, b2; t=1: b1, b0; ...
    assert p.data.flatten().tolist() == [1.0, 0.0, 2.0, 4.0, 3.0, 7.0, 10.0]
    padded, lens = rnn_utils.pad_packed_sequence(p, padding_value=-1.0)
    expected = np.arange(12.0).reshape(4, 3, 1)
    for b, n in enumerate([2, 4, 1]):
        expected[n:, b] = -1
    np.testing.assert_array_equal(_np(padded), expected)
    assert lens.tolist() == [2, 4, 1]
    data, bs, si, ui = p  # a 4-tuple
    assert data is p.data and si is p.sorted_indices
    q = p.to(jtorch.float64)
    assert q.data.dtype == jtorch.float64 and q.batch_sizes is p.batch_sizes
    assert p.to(jtorch.float32) is p


def test_pad_sequence_and_unpad():
    a, b = jtorch.ones(2, 2), jtorch.ones(3, 2) * 2
    out = rnn_utils.pad_sequence([a, b], batch_first=True, padding_value=-1)
    np.testing.assert_array_equal(_np(out)[0, :, 0], [1, 1, -1])
    left = rnn_utils.pad_sequence([a, b], padding_side="left")
    assert left.shape == (3, 2, 2)
    np.testing.assert_array_equal(_np(left)[:, 0, 0], [0, 1, 1])
    parts = rnn_utils.unpad_sequence(left.flip(0), jtorch.tensor([2, 3]))
    assert [tuple(p.shape) for p in parts] == [(2, 2), (3, 2)]
    seqs = rnn_utils.unpack_sequence(rnn_utils.pack_sequence([b, a]))
    np.testing.assert_array_equal(_np(seqs[1]), _np(a))
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        rnn_utils.pack_sequence([a, b])


def _attention_ref(q, k, v, w_in, b_in, w_out, b_out, heads, mask=None):
    """Unbatched multi-head attention from its definition (q: (L, E), k/v: (S, E))."""
    e = q.shape[-1]
    d = e // heads
    wq, wk, wv = np.split(w_in, 3)
    bq, bk, bv = np.split(b_in, 3)
    qq, kk, vv = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    outs, ws = [], []
    for i in range(heads):
        s = qq[:, i * d : (i + 1) * d] @ kk[:, i * d : (i + 1) * d].T / math.sqrt(d)
        if mask is not None:
            s = np.where(mask, -np.inf, s)
        w = np.exp(s - s.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        ws.append(w)
        outs.append(w @ vv[:, i * d : (i + 1) * d])
    return np.concatenate(outs, -1) @ w_out.T + b_out, np.mean(ws, 0)


def test_multihead_attention_matches_definition():
    jtorch.manual_seed(0)
    m = nn.MultiheadAttention(8, 2)
    with jtorch.no_grad():
        m.in_proj_bias.uniform_(-0.5, 0.5)
        m.out_proj.bias.uniform_(-0.5, 0.5)
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((4, 8)), rng.standard_normal((5, 8))
    mask = np.triu(np.ones((4, 5), bool), 1)
    out, w = m(
        *(jtorch.tensor(a, dtype=jtorch.float32) for a in (q, k, k)), attn_mask=jtorch.tensor(mask)
    )
    ref_out, ref_w = _attention_ref(
        q,
        k,
        k,
        _np(m.in_proj_weight),
        _np(m.in_proj_bias),
        _np(m.out_proj.weight),
        _np(m.out_proj.bias),
        2,
        mask,
    )
    np.testing.assert_allclose(_np(out), ref_out, atol=1e-5)
    np.testing.assert_allclose(_np(w), ref_w, atol=1e-6)


def test_multihead_attention_parameters():
    m = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, bias=False)
    names = [n for n, _ in m.named_parameters()]
    assert names == [
        "q_proj_weight",
        "k_proj_weight",
        "v_proj_weight",
        "bias_k",
        "bias_v",
        "out_proj.weight",
    ]
    assert m.in_proj_weight is None and m.in_proj_bias is None
    assert tuple(m.k_proj_weight.shape) == (8, 3) and tuple(m.bias_k.shape) == (1, 1, 8)
    m2 = nn.MultiheadAttention(8, 2)
    assert not _np(m2.in_proj_bias).any() and not _np(m2.out_proj.bias).any()
    bound = math.sqrt(6 / (8 + 24))  # xavier_uniform_ on (24, 8)
    assert float(m2.in_proj_weight.abs().max()) <= bound


def test_transformer_shapes_and_mask():
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(_np(mask), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True)
    out = t(jtorch.randn(2, 5, 8), jtorch.randn(2, 3, 8), tgt_mask=mask)
    assert out.shape == (2, 3, 8)
    out.sum().backward()
    assert t.encoder.layers[0].linear1.weight.grad is not None
    keys = list(t.state_dict())
    assert "encoder.layers.0.self_attn.in_proj_weight" in keys
    assert "decoder.layers.0.multihead_attn.out_proj.bias" in keys
    assert "decoder.norm.weight" in keys


def test_encoder_layer_causal_equals_mask():
    jtorch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    x = jtorch.randn(5, 2, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    a = layer(x, src_mask=mask)
    b = layer(x, src_mask=mask, is_causal=True)
    np.testing.assert_allclose(_np(a), _np(b), atol=1e-5)
    # position 0 only sees itself: changing later positions leaves it as it is
    x2 = x.clone()
    x2[3:] = 0
    np.testing.assert_allclose(_np(layer(x2, src_mask=mask))[:3], _np(a)[:3], atol=1e-5)


def test_sdpa_kernel_records_the_choice_and_restores_it():
    from jtorch.nn.attention import SDPBackend, sdpa_kernel

    cuda = jtorch.backends.cuda
    assert (int(SDPBackend.MATH), int(SDPBackend.FLASH_ATTENTION)) == (0, 1)
    state = lambda: (
        cuda.flash_sdp_enabled(),
        cuda.mem_efficient_sdp_enabled(),  # noqa: E731
        cuda.math_sdp_enabled(),
        cuda.cudnn_sdp_enabled(),
    )
    before = state()
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):
        assert state() == (False, True, True, False)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            assert state() == (True, False, False, False)
        assert state() == (False, True, True, False)
    assert state() == before
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass
