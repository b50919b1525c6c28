"""Module parity for recurrent layers, attention and transformers, and `nn.utils.rnn`."""

import warnings

import numpy as np
import pytest

pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.module_parity import Case, _compare, _flat, check  # noqa: E402

_rng = np.random.default_rng(0)


def _x(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _lib(m):
    """torch or jtorch, whichever built module `m`."""
    if type(m).__module__.startswith("torch"):
        import torch

        return torch
    return jtorch


def _packed(lengths, enforce_sorted=False, batch_first=False):
    """forward(m, x, ...): packs padded `x` with `lengths`, runs `m`, returns its outputs."""

    def forward(m, x, *rest):
        lib = _lib(m)
        p = lib.nn.utils.rnn.pack_padded_sequence(
            x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted
        )
        out, h = m(p, *rest) if rest else m(p)
        padded, lens = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)
        return out, h, padded, lens

    return forward


def _hc(m, x, h, c):
    return m(x, (h, c))


# seq 5, batch 3, input 3, hidden 4
RNN_CASES = [
    Case("RNN", lambda nn: nn.RNN(3, 4), (_x(5, 3, 3),)),
    Case("RNN.relu.h0", lambda nn: nn.RNN(3, 4, nonlinearity="relu"), (_x(5, 3, 3), _x(1, 3, 4))),
    Case(
        "RNN.2layer.bidir.batch_first",
        lambda nn: nn.RNN(3, 4, 2, batch_first=True, bidirectional=True),
        (_x(3, 5, 3), _x(4, 3, 4)),
    ),
    Case("RNN.nobias", lambda nn: nn.RNN(3, 4, bias=False), (_x(5, 3, 3),)),
    Case("RNN.unbatched", lambda nn: nn.RNN(3, 4, 2), (_x(5, 3), _x(2, 4))),
    Case("RNN.unbatched.batch_first", lambda nn: nn.RNN(3, 4, batch_first=True), (_x(5, 3),)),
    Case(
        "RNN.dropout0.5.eval",
        lambda nn: nn.RNN(3, 4, 2, dropout=0.5),
        (_x(5, 3, 3),),
        modes=("eval",),
    ),
    Case("LSTM", lambda nn: nn.LSTM(3, 4), (_x(5, 3, 3),)),
    Case(
        "LSTM.hc", lambda nn: nn.LSTM(3, 4, 2), (_x(5, 3, 3), _x(2, 3, 4), _x(2, 3, 4)), forward=_hc
    ),
    Case(
        "LSTM.bidir.batch_first",
        lambda nn: nn.LSTM(3, 4, 2, batch_first=True, bidirectional=True),
        (_x(3, 5, 3),),
    ),
    Case("LSTM.proj", lambda nn: nn.LSTM(3, 4, proj_size=2), (_x(5, 3, 3),)),
    Case(
        "LSTM.proj.bidir.2layer.hc",
        lambda nn: nn.LSTM(3, 4, 2, proj_size=2, bidirectional=True),
        (_x(5, 3, 3), _x(4, 3, 2), _x(4, 3, 4)),
        forward=_hc,
    ),
    Case("LSTM.proj.nobias", lambda nn: nn.LSTM(3, 4, proj_size=3, bias=False), (_x(5, 3, 3),)),
    Case("LSTM.nobias", lambda nn: nn.LSTM(3, 4, bias=False), (_x(5, 3, 3),)),
    Case(
        "LSTM.unbatched.hc",
        lambda nn: nn.LSTM(3, 4, bidirectional=True),
        (_x(5, 3), _x(2, 4), _x(2, 4)),
        forward=_hc,
    ),
    Case(
        "LSTM.dropout0.3.eval",
        lambda nn: nn.LSTM(3, 4, 3, dropout=0.3),
        (_x(5, 3, 3),),
        modes=("eval",),
    ),
    Case(
        "LSTM.double",
        lambda nn: nn.LSTM(3, 4, dtype=_lib_dtype(nn, "float64")),
        (_x(5, 3, 3).astype(np.float64),),
    ),
    Case("GRU", lambda nn: nn.GRU(3, 4), (_x(5, 3, 3),)),
    Case(
        "GRU.h0.2layer.bidir",
        lambda nn: nn.GRU(3, 4, 2, bidirectional=True),
        (_x(5, 3, 3), _x(4, 3, 4)),
    ),
    Case(
        "GRU.nobias.batch_first",
        lambda nn: nn.GRU(3, 4, bias=False, batch_first=True),
        (_x(3, 5, 3),),
    ),
    Case("GRU.unbatched", lambda nn: nn.GRU(3, 4), (_x(5, 3), _x(1, 4))),
    # Packed sequences: sorted and unsorted batches, both directions, hidden permutations.
    Case(
        "RNN.packed",
        lambda nn: nn.RNN(3, 4),
        (_x(5, 3, 3),),
        forward=_packed([5, 3, 2], enforce_sorted=True),
    ),
    Case(
        "RNN.packed.unsorted.bidir.h0",
        lambda nn: nn.RNN(3, 4, 2, bidirectional=True),
        (_x(5, 3, 3), _x(4, 3, 4)),
        forward=_packed([2, 5, 3]),
    ),
    Case(
        "LSTM.packed.unsorted.bidir",
        lambda nn: nn.LSTM(3, 4, 2, bidirectional=True),
        (_x(5, 3, 3),),
        forward=_packed([3, 1, 5]),
    ),
    Case(
        "LSTM.packed.proj.hc",
        lambda nn: nn.LSTM(3, 4, proj_size=2, bidirectional=True),
        (_x(5, 3, 3), _x(2, 3, 2), _x(2, 3, 4)),
        forward=lambda m, x, h, c: _packed([4, 5, 2])(m, x, (h, c)),
    ),
    Case(
        "GRU.packed.batch_first",
        lambda nn: nn.GRU(3, 4, batch_first=True),
        (_x(3, 5, 3),),
        forward=_packed([4, 5, 1], batch_first=True),
    ),
    Case(
        "GRU.packed.short_max",
        lambda nn: nn.GRU(3, 4, bidirectional=True),
        (_x(5, 3, 3),),
        forward=_packed([3, 3, 2]),
    ),
    # Cells
    Case("RNNCell", lambda nn: nn.RNNCell(3, 4), (_x(2, 3),)),
    Case(
        "RNNCell.relu.nobias.h",
        lambda nn: nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
        (_x(2, 3), _x(2, 4)),
    ),
    Case("RNNCell.unbatched", lambda nn: nn.RNNCell(3, 4), (_x(3), _x(4))),
    Case("LSTMCell", lambda nn: nn.LSTMCell(3, 4), (_x(2, 3),)),
    Case(
        "LSTMCell.hc",
        lambda nn: nn.LSTMCell(3, 4, bias=False),
        (_x(2, 3), _x(2, 4), _x(2, 4)),
        forward=lambda m, x, h, c: m(x, (h, c)),
    ),
    Case(
        "LSTMCell.unbatched",
        lambda nn: nn.LSTMCell(3, 4),
        (_x(3), _x(4), _x(4)),
        forward=lambda m, x, h, c: m(x, (h, c)),
    ),
    Case("GRUCell", lambda nn: nn.GRUCell(3, 4), (_x(2, 3), _x(2, 4))),
    Case("GRUCell.unbatched.nobias", lambda nn: nn.GRUCell(3, 4, bias=False), (_x(3),)),
]


def _lib_dtype(nn, name):
    lib = __import__("torch") if nn.__name__.startswith("torch") else jtorch
    return getattr(lib, name)


def _bool(a):
    return np.asarray(a, dtype=bool)


_E = 8  # embed dim
_KPM = _bool([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]])  # (batch 2, source 5)
_CAUSAL = _bool(np.triu(np.ones((4, 5)), 1))  # (target 4, source 5)


def _mha(**kw):
    return lambda nn: nn.MultiheadAttention(_E, 2, **kw)


def _fmask(m):
    return np.where(m, -1e9, 0.0).astype(np.float32) + _x(*m.shape) * 0.1


MHA_CASES = [
    Case("MHA.self", _mha(), (_x(4, 2, _E),), forward=lambda m, x: m(x, x, x)),
    Case("MHA.cross", _mha(), (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E))),
    Case(
        "MHA.kpm.bool",
        _mha(),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        kwargs={"key_padding_mask": _KPM},
    ),
    Case(
        "MHA.kpm.float",
        _mha(),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        kwargs={"key_padding_mask": _fmask(_KPM)},
    ),
    Case(
        "MHA.attn_mask.bool2d",
        _mha(),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        kwargs={"attn_mask": _CAUSAL},
    ),
    Case(
        "MHA.attn_mask.float3d",
        _mha(),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        kwargs={"attn_mask": _x(4, 4, 5)},
    ),
    Case(
        "MHA.attn_mask.bool3d+kpm",
        _mha(),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        kwargs={"attn_mask": np.broadcast_to(_CAUSAL, (4, 4, 5)).copy(), "key_padding_mask": _KPM},
    ),
    Case(
        "MHA.no_avg",
        _mha(),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        kwargs={"average_attn_weights": False},
    ),
    Case(
        "MHA.no_weights",
        _mha(),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        kwargs={"need_weights": False},
    ),
    Case(
        "MHA.batch_first",
        _mha(batch_first=True),
        (_x(2, 4, _E), _x(2, 5, _E), _x(2, 5, _E)),
        kwargs={"key_padding_mask": _KPM},
    ),
    Case(
        "MHA.batch_first.self",
        _mha(batch_first=True),
        (_x(2, 4, _E),),
        forward=lambda m, x: m(x, x, x),
    ),
    Case("MHA.nobias", _mha(bias=False), (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E))),
    Case(
        "MHA.bias_kv",
        _mha(add_bias_kv=True),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        kwargs={"key_padding_mask": _KPM, "attn_mask": _CAUSAL},
    ),
    Case(
        "MHA.zero_attn",
        _mha(add_zero_attn=True),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        kwargs={"key_padding_mask": _KPM},
    ),
    Case(
        "MHA.bias_kv.zero_attn",
        _mha(add_bias_kv=True, add_zero_attn=True),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
    ),
    Case(
        "MHA.kdim_vdim",
        _mha(kdim=3, vdim=5),
        (_x(4, 2, _E), _x(5, 2, 3), _x(5, 2, 5)),
        kwargs={"key_padding_mask": _KPM},
    ),
    Case(
        "MHA.kdim_vdim.batch_first",
        _mha(kdim=3, vdim=5, batch_first=True),
        (_x(2, 4, _E), _x(2, 5, 3), _x(2, 5, 5)),
    ),
    Case(
        "MHA.unbatched",
        _mha(),
        (_x(4, _E), _x(5, _E), _x(5, _E)),
        kwargs={"key_padding_mask": _KPM[0], "attn_mask": _CAUSAL},
    ),
    Case(
        "MHA.is_causal",
        _mha(),
        (_x(4, 2, _E),),
        forward=lambda m, x: m(
            x,
            x,
            x,
            attn_mask=_lib(m).tensor(_bool(np.triu(np.ones((4, 4)), 1))),
            is_causal=True,
            need_weights=False,
        ),
    ),
    Case(
        "MHA.dropout.eval",
        _mha(dropout=0.5),
        (_x(4, 2, _E), _x(5, 2, _E), _x(5, 2, _E)),
        modes=("eval",),
    ),
]


def _enc(nn, **kw):
    return nn.TransformerEncoderLayer(_E, 2, 16, dropout=0.0, **kw)


def _dec(nn, **kw):
    return nn.TransformerDecoderLayer(_E, 2, 16, dropout=0.0, **kw)


def _gelu_module(nn):
    return nn.GELU()


def _causal(m, n):
    return _lib(m).nn.Transformer.generate_square_subsequent_mask(n)


TRANSFORMER_CASES = [
    Case("EncoderLayer", lambda nn: _enc(nn), (_x(5, 2, _E),)),
    Case(
        "EncoderLayer.norm_first.gelu",
        lambda nn: _enc(nn, norm_first=True, activation="gelu"),
        (_x(5, 2, _E),),
    ),
    Case(
        "EncoderLayer.batch_first.masks",
        lambda nn: _enc(nn, batch_first=True),
        (_x(2, 5, _E),),
        kwargs={"src_key_padding_mask": _bool([[0, 0, 0, 1, 1], [0] * 5])},
    ),
    Case(
        "EncoderLayer.callable_act.nobias",
        lambda nn: _enc(nn, activation=_gelu_module(nn), bias=False, layer_norm_eps=1e-3),
        (_x(5, 2, _E),),
        kwargs={"src_mask": np.triu(np.full((5, 5), -np.inf, np.float32), 1)},
    ),
    Case(
        "EncoderLayer.fn_act", lambda nn: _enc(nn, activation=_lib_fn(nn, "tanh")), (_x(5, 2, _E),)
    ),
    Case(
        "EncoderLayer.is_causal",
        lambda nn: _enc(nn),
        (_x(5, 2, _E),),
        forward=lambda m, x: m(x, src_mask=_causal(m, 5), is_causal=True),
    ),
    Case(
        "EncoderLayer.dropout.eval",
        lambda nn: nn.TransformerEncoderLayer(_E, 2, 16),
        (_x(5, 2, _E),),
        modes=("eval",),
    ),
    Case(
        "Encoder",
        lambda nn: nn.TransformerEncoder(_enc(nn), 2, nn.LayerNorm(_E)),
        (_x(5, 2, _E),),
        kwargs={"src_key_padding_mask": _bool([[0, 0, 0, 1, 1], [0] * 5])},
    ),
    Case(
        "Encoder.causal_detect",
        lambda nn: nn.TransformerEncoder(_enc(nn), 2, enable_nested_tensor=False),
        (_x(5, 2, _E),),
        forward=lambda m, x: m(x, mask=_causal(m, 5)),
    ),
    Case("DecoderLayer", lambda nn: _dec(nn), (_x(4, 2, _E), _x(5, 2, _E))),
    Case(
        "DecoderLayer.norm_first.masks",
        lambda nn: _dec(nn, norm_first=True),
        (_x(4, 2, _E), _x(5, 2, _E)),
        kwargs={
            "tgt_mask": np.triu(np.full((4, 4), -np.inf, np.float32), 1),
            "memory_key_padding_mask": _KPM,
            "tgt_key_padding_mask": _KPM[:, :4],
        },
    ),
    Case(
        "DecoderLayer.batch_first.gelu",
        lambda nn: _dec(nn, batch_first=True, activation="gelu"),
        (_x(2, 4, _E), _x(2, 5, _E)),
    ),
    Case(
        "Decoder",
        lambda nn: nn.TransformerDecoder(_dec(nn), 2, nn.LayerNorm(_E)),
        (_x(4, 2, _E), _x(5, 2, _E)),
        kwargs={"memory_mask": _CAUSAL},
    ),
    Case(
        "Transformer",
        lambda nn: nn.Transformer(_E, 2, 2, 1, 16, dropout=0.0),
        (_x(5, 2, _E), _x(4, 2, _E)),
    ),
    Case(
        "Transformer.batch_first.norm_first.masks",
        lambda nn: nn.Transformer(_E, 2, 1, 2, 16, dropout=0.0, batch_first=True, norm_first=True),
        (_x(2, 5, _E), _x(2, 4, _E)),
        forward=lambda m, s, t: m(
            s,
            t,
            tgt_mask=_causal(m, 4),
            tgt_is_causal=True,
            src_key_padding_mask=_lib(m).tensor(_KPM),
        ),
    ),
    Case(
        "Transformer.unbatched",
        lambda nn: nn.Transformer(_E, 2, 1, 1, 16, dropout=0.0),
        (_x(5, _E), _x(4, _E)),
    ),
]


def _lib_fn(nn, name):
    lib = __import__("torch") if nn.__name__.startswith("torch") else jtorch
    return getattr(lib, name)


CASES = RNN_CASES + MHA_CASES + TRANSFORMER_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_module_parity(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        err = check(case)
    assert err is None, err


# ---------------------------------------------------------------------------
# nn.utils.rnn against PyTorch


def _both(fn, *arrays):
    """Runs fn(lib, *tensors) with torch and jtorch; returns both flat outputs."""
    import torch

    outs = []
    for lib in (torch, jtorch):
        ts = [lib.tensor(a) for a in arrays]
        outs.append(_flat(fn(lib, *ts)))
    return outs


def _assert_same(t_out, j_out):
    assert len(t_out) == len(j_out)
    for i, (a, b) in enumerate(zip(t_out, j_out)):
        if hasattr(a, "dtype"):
            err = _compare(f"output {i}", a, b, 1e-6, 1e-6)
            assert err is None, err
        elif isinstance(a, list):
            assert len(a) == len(b)
        else:
            assert a == b, (i, a, b)


U = jtorch  # noqa: N816 (keeps the lambdas below short)


@pytest.mark.parametrize(
    "name,fn,arrays",
    [
        (
            "pack_padded.sorted",
            lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 1]),
            (_x(4, 3, 2),),
        ),
        (
            "pack_padded.unsorted.batch_first",
            lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(
                x, lib.tensor([1, 4, 2]), batch_first=True, enforce_sorted=False
            ),
            (_x(3, 4, 2),),
        ),
        (
            "pad_packed.roundtrip",
            lambda lib, x: lib.nn.utils.rnn.pad_packed_sequence(
                lib.nn.utils.rnn.pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False),
                padding_value=-1.0,
                total_length=5,
            ),
            (_x(3, 3, 2),),
        ),
        (
            "pad_packed.batch_first",
            lambda lib, x: lib.nn.utils.rnn.pad_packed_sequence(
                lib.nn.utils.rnn.pack_padded_sequence(x, [3, 1], batch_first=True), batch_first=True
            ),
            (_x(2, 3),),
        ),
        (
            "pad_sequence",
            lambda lib, a, b, c: lib.nn.utils.rnn.pad_sequence([a, b, c]),
            (_x(2, 3), _x(4, 3), _x(1, 3)),
        ),
        (
            "pad_sequence.left.batch_first",
            lambda lib, a, b: lib.nn.utils.rnn.pad_sequence(
                [a, b], batch_first=True, padding_value=7.0, padding_side="left"
            ),
            (_x(2), _x(4)),
        ),
        (
            "pack_sequence",
            lambda lib, a, b, c: lib.nn.utils.rnn.pack_sequence([a, b, c], enforce_sorted=False),
            (_x(2, 3), _x(4, 3), _x(1, 3)),
        ),
        (
            "unpack_sequence",
            lambda lib, a, b, c: lib.nn.utils.rnn.unpack_sequence(
                lib.nn.utils.rnn.pack_sequence([a, b, c], enforce_sorted=False)
            ),
            (_x(2, 3), _x(4, 3), _x(1, 3)),
        ),
        (
            "unpad_sequence",
            lambda lib, x: lib.nn.utils.rnn.unpad_sequence(x, lib.tensor([3, 1])),
            (_x(3, 2, 2),),
        ),
        (
            "invert_permutation",
            lambda lib, p: lib.nn.utils.rnn.invert_permutation(p),
            (np.array([2, 0, 3, 1]),),
        ),
    ],
)
def test_utils_rnn(name, fn, arrays):
    t_out, j_out = _both(fn, *arrays)
    _assert_same(t_out, j_out)


def test_packed_sequence_grad_roundtrip():
    """Gradients flow through pack -> pad as in PyTorch."""
    import torch

    x = _x(4, 3, 2)
    w = _x(5, 3, 2)
    grads = []
    for lib in (torch, jtorch):
        t = lib.tensor(x, requires_grad=True)
        p = lib.nn.utils.rnn.pack_padded_sequence(t, [2, 4, 1], enforce_sorted=False)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(p, total_length=5)
        (padded * lib.tensor(w)).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


@pytest.mark.parametrize(
    "name,fn",
    [
        (
            "unsorted",
            lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 3, 1), [1, 3, 2]),
        ),
        (
            "len_mismatch",
            lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 3, 1), [3, 2]),
        ),
        (
            "zero_len",
            lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 3, 1), [3, 2, 0]),
        ),
        (
            "2d_lengths",
            lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
                lib.zeros(3, 3, 1), lib.tensor([[3, 2, 1]])
            ),
        ),
        (
            "total_length",
            lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
                lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2), [3, 1]), total_length=2
            ),
        ),
        ("pad_empty", lambda lib: lib.nn.utils.rnn.pad_sequence([])),
        ("pad_side", lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2)], padding_side="mid")),
        (
            "pad_trailing",
            lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2, 3), lib.zeros(3, 2)]),
        ),
        ("rnn_dtype", lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(2, 2, 3, dtype=lib.float64))),
        ("rnn_input_size", lambda lib: lib.nn.GRU(3, 4)(lib.zeros(2, 2, 5))),
        ("rnn_hidden", lambda lib: lib.nn.GRU(3, 4)(lib.zeros(2, 2, 3), lib.zeros(1, 3, 4))),
        (
            "lstm_cell_hidden",
            lambda lib: lib.nn.LSTM(3, 4)(
                lib.zeros(2, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 3, 4))
            ),
        ),
        ("rnn_4d", lambda lib: lib.nn.RNN(3, 4)(lib.zeros(1, 2, 2, 3))),
        (
            "lstm_hx_dims",
            lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(2, 2, 3), (lib.zeros(2, 4), lib.zeros(2, 4))),
        ),
        ("cell_input_size", lambda lib: lib.nn.LSTMCell(3, 4)(lib.zeros(2, 5))),
        ("cell_batch", lambda lib: lib.nn.GRUCell(3, 4)(lib.zeros(2, 3), lib.zeros(3, 4))),
        (
            "cell_hidden",
            lambda lib: lib.nn.LSTMCell(3, 4)(lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(2, 5))),
        ),
        ("cell_nonlin", lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="x")(lib.zeros(2, 3))),
        ("rnn_nonlin", lambda lib: lib.nn.RNN(3, 4, nonlinearity="x")),
        ("gru_proj", lambda lib: lib.nn.GRU(3, 4, proj_size=2)),
        ("proj_too_big", lambda lib: lib.nn.LSTM(3, 4, proj_size=4)),
        ("bad_dropout", lambda lib: lib.nn.LSTM(3, 4, dropout=1.5)),
        ("mha_divisible", lambda lib: lib.nn.MultiheadAttention(6, 4)),
        ("mha_zero", lambda lib: lib.nn.MultiheadAttention(0, 4)),
        (
            "mha_mask_shape",
            lambda lib: lib.nn.MultiheadAttention(4, 2)(
                lib.zeros(3, 1, 4),
                lib.zeros(3, 1, 4),
                lib.zeros(3, 1, 4),
                attn_mask=lib.zeros(2, 3),
            ),
        ),
        (
            "mha_int_mask",
            lambda lib: lib.nn.MultiheadAttention(4, 2)(
                lib.zeros(3, 1, 4),
                lib.zeros(3, 1, 4),
                lib.zeros(3, 1, 4),
                attn_mask=lib.zeros(3, 3, dtype=lib.int64),
            ),
        ),
        (
            "mha_kpm_batch",
            lambda lib: lib.nn.MultiheadAttention(4, 2)(
                lib.zeros(3, 2, 4),
                lib.zeros(3, 2, 4),
                lib.zeros(3, 2, 4),
                key_padding_mask=lib.zeros(3, 3, dtype=lib.bool),
            ),
        ),
        (
            "mha_kpm_len.bias_kv",
            lambda lib: lib.nn.MultiheadAttention(4, 2, add_bias_kv=True)(
                lib.zeros(3, 2, 4),
                lib.zeros(3, 2, 4),
                lib.zeros(3, 2, 4),
                key_padding_mask=lib.zeros(2, 4, dtype=lib.bool),
            ),
        ),
        (
            "sdpa_heads_no_gqa",
            lambda lib: lib.nn.functional.scaled_dot_product_attention(
                lib.zeros(1, 4, 3, 4), lib.zeros(1, 2, 3, 4), lib.zeros(1, 2, 3, 4)
            ),
        ),
        (
            "mha_causal_no_mask",
            lambda lib: lib.nn.MultiheadAttention(4, 2)(
                lib.zeros(3, 1, 4), lib.zeros(3, 1, 4), lib.zeros(3, 1, 4), is_causal=True
            ),
        ),
        (
            "transformer_batch",
            lambda lib: lib.nn.Transformer(4, 2, 1, 1, 8)(lib.zeros(3, 2, 4), lib.zeros(3, 1, 4)),
        ),
        (
            "transformer_dmodel",
            lambda lib: lib.nn.Transformer(4, 2, 1, 1, 8)(lib.zeros(3, 2, 4), lib.zeros(3, 2, 6)),
        ),
        ("activation", lambda lib: lib.nn.TransformerEncoderLayer(4, 2, activation="tanh")),
    ],
)
def test_errors(name, fn):
    import torch

    errs = []
    for lib in (torch, jtorch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fn(lib)
                errs.append(None)
            except Exception as e:  # noqa: BLE001 - comparing PyTorch's exception
                errs.append((type(e).__name__, str(e)))
    assert errs[0] is not None
    assert errs[0] == errs[1]


def test_generate_square_subsequent_mask():
    import torch

    a = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    b = jtorch.nn.Transformer.generate_square_subsequent_mask(4, dtype=jtorch.float64)
    assert b.dtype == jtorch.float64
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_encoder_nested_inference():
    """Inference with a padding mask zeroes padded positions, as PyTorch's nested path does."""
    import torch

    x = _x(2, 5, _E)
    kpm = _bool([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]])
    outs, sd = [], None
    for lib in (torch, jtorch):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            enc = lib.nn.TransformerEncoder(
                lib.nn.TransformerEncoderLayer(_E, 2, 16, batch_first=True), 2
            )
        if sd is None:
            sd = enc.state_dict()
        else:
            enc.load_state_dict({k: jtorch.tensor(v.numpy()) for k, v in sd.items()})
        enc.eval()
        with lib.no_grad():
            outs.append(enc(lib.tensor(x), src_key_padding_mask=lib.tensor(kpm)).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-5)
    assert not outs[1][0, 3:].any()


@pytest.mark.parametrize(
    "name", ["mha", "mha.no_avg", "mha.fully_masked", "enc_layer.kpm", "enc_layer.mask.gelu"]
)
def test_inference_fast_path(name):
    """Eval mode under no_grad, where PyTorch takes its fused fast paths."""
    import torch

    x = _x(2, 5, _E)
    kpm = _KPM if name != "mha.fully_masked" else _bool([[0, 0, 0, 1, 1], [1] * 5])
    mask = np.triu(np.ones((5, 5), bool), 1)

    def make(lib):
        if name.startswith("mha"):
            return lib.nn.MultiheadAttention(_E, 2, batch_first=True)
        act = "gelu" if name.endswith("gelu") else "relu"
        return lib.nn.TransformerEncoderLayer(_E, 2, 16, batch_first=True, activation=act)

    def fwd(lib, m):
        t = lib.tensor(x)
        if name.startswith("mha"):
            return m(
                t, t, t, key_padding_mask=lib.tensor(kpm), average_attn_weights=name != "mha.no_avg"
            )
        if name == "enc_layer.kpm":
            return m(t, src_key_padding_mask=lib.tensor(kpm))
        return m(t, src_mask=lib.tensor(mask))

    outs, sd = [], None
    for lib in (torch, jtorch):
        torch.manual_seed(0)
        m = make(lib)
        if sd is None:
            sd = m.state_dict()
        else:
            m.load_state_dict({k: jtorch.tensor(v.numpy()) for k, v in sd.items()})
        m.eval()
        with lib.no_grad():
            outs.append(_flat(fwd(lib, m)))
    _assert_same_tol(outs[0], outs[1])


def _assert_same_tol(t_out, j_out):
    assert len(t_out) == len(j_out)
    for i, (a, b) in enumerate(zip(t_out, j_out)):
        err = _compare(f"output {i}", a, b, 1e-4, 1e-5)
        assert err is None, err
