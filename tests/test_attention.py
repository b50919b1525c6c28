"""`scaled_dot_product_attention` and `multi_head_attention_forward`
(`jtorch/_ops/nn/attention.py`), checked with numpy."""

import math

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from tests.helpers import close
from tests.helpers import f32 as t

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _attention(q, k, v, bias):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]) + bias
    s = np.exp(s - s.max(-1, keepdims=True))
    return (s / s.sum(-1, keepdims=True)) @ v


def test_scaled_dot_product_attention():
    q, k, v = rand(2, 2, 3, 4), rand(2, 2, 5, 4), rand(2, 2, 5, 4)
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    close(F.scaled_dot_product_attention(t(q), t(k), t(v)), _attention(q64, k64, v64, 0))
    causal = np.where(np.tril(np.ones((3, 5), bool)), 0.0, -np.inf)
    close(
        F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True),
        _attention(q64, k64, v64, causal),
    )
    fmask = rand(3, 5)
    close(
        F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(fmask)),
        _attention(q64, k64, v64, fmask),
    )
    bmask = np.ones((3, 5), bool)
    bmask[1] = False  # a row that attends to nothing gives zeros
    bmask[0, 2] = False
    out = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(bmask)).numpy()
    ref = _attention(q64, k64, v64, np.where(bmask, 0.0, -1e30))
    ref[..., 1, :] = 0
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    close(
        F.scaled_dot_product_attention(t(q), t(k), t(v), scale=0.5),
        _attention(q64 * 0.5 * math.sqrt(4), k64, v64, 0),
    )
    # Grouped-query attention: 4 query heads share 2 key/value heads.
    q4 = rand(1, 4, 3, 4)
    out = F.scaled_dot_product_attention(t(q4), t(k[:1]), t(v[:1]), enable_gqa=True)
    close(
        out,
        _attention(q4.astype(np.float64), np.repeat(k64[:1], 2, 1), np.repeat(v64[:1], 2, 1), 0),
    )
    torch.manual_seed(0)
    dropped = F.scaled_dot_product_attention(t(q), t(k), t(v), dropout_p=0.5)
    assert tuple(dropped.shape) == (2, 2, 3, 4)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype"):
        F.scaled_dot_product_attention(t(q), t(k), torch.from_numpy(v.astype(np.float64)))


def test_multi_head_attention_forward():
    length, n, e, h = 3, 2, 4, 2
    q, k = rand(length, n, e), rand(5, n, e)
    w_in, b_in, w_out, b_out = rand(3 * e, e), rand(3 * e), rand(e, e), rand(e)
    mask = np.zeros((n, 5), bool)
    mask[1, 0] = True  # batch 1 ignores key 0
    out, weights = F.multi_head_attention_forward(
        t(q),
        t(k),
        t(k),
        e,
        h,
        t(w_in),
        t(b_in),
        None,
        None,
        False,
        0.0,
        t(w_out),
        t(b_out),
        key_padding_mask=t(mask),
    )
    q64, k64 = q.astype(np.float64), k.astype(np.float64)
    pq = q64 @ w_in[:e].T + b_in[:e]
    pk = k64 @ w_in[e : 2 * e].T + b_in[e : 2 * e]
    pv = k64 @ w_in[2 * e :].T + b_in[2 * e :]
    hd = e // h
    heads = lambda a: a.reshape(a.shape[0], n, h, hd).transpose(1, 2, 0, 3)  # noqa: E731
    bias = np.where(mask, -np.inf, 0.0)[:, None, None, :]
    att = heads(pq) @ np.swapaxes(heads(pk), -1, -2) / math.sqrt(hd) + bias
    att = np.exp(att - att.max(-1, keepdims=True))
    att /= att.sum(-1, keepdims=True)
    ref = (att @ heads(pv)).transpose(2, 0, 1, 3).reshape(length, n, e) @ w_out.T + b_out
    close(out, ref, rtol=1e-4, atol=1e-5)
    close(weights, att.mean(1), rtol=1e-4, atol=1e-6)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        F.multi_head_attention_forward(
            t(q),
            t(k),
            t(k),
            e,
            h,
            t(w_in),
            t(b_in),
            None,
            None,
            False,
            0.0,
            t(w_out),
            t(b_out),
            is_causal=True,
        )
