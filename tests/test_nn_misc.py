"""linear, embedding, one_hot, pad, distances and attention (`jtorch/_ops/nn_misc.py`)."""

import math

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F

RNG = np.random.default_rng(0)


def t(values, dtype=None):
    arr = np.asarray(values, dtype=dtype)
    if dtype is None and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return torch.from_numpy(arr)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual.numpy(), dtype=np.float64),
                               np.asarray(expected, dtype=np.float64), rtol=rtol, atol=atol)


def test_linear_and_bilinear():
    x, w, b = rand(2, 3), rand(4, 3), rand(4)
    close(F.linear(t(x), t(w), t(b)), x @ w.T + b)
    close(F.linear(t(x), t(w)), x @ w.T)
    close(F.linear(t(x), t(w[0])), x @ w[0])
    i = F.linear(t([[1, 2]], np.int64), t([[3, 4]], np.int64))
    assert i.dtype == torch.int64 and i.tolist() == [[11]]
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and "
                       r"2x4\)"):
        F.linear(t(x), t(rand(4, 2)))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(t(x), torch.from_numpy(w.astype(np.float64)))
    x2, wb = rand(2, 5), rand(4, 3, 5)
    close(F.bilinear(t(x), t(x2), t(wb), t(b)), np.einsum("bi,oij,bj->bo", x, wb, x2) + b,
          rtol=1e-4)
    with pytest.raises(RuntimeError, match="input2 size does not match weight size"):
        F.bilinear(t(x), t(x), t(wb))


def test_embedding():
    w = rand(5, 3)
    idx = t([[0, 2], [4, 2]], np.int64)
    close(F.embedding(idx, t(w)), w[[[0, 2], [4, 2]]])
    close(torch.embedding(t(w), idx), w[[[0, 2], [4, 2]]])
    close(F.embedding(t([1, 3], np.int32), t(w), padding_idx=-1), w[[1, 3]])
    with pytest.raises(RuntimeError, match="Long, Int; but got torch.FloatTensor"):
        F.embedding(t([1.0]), t(w))
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(t([1], np.int64), t(w[0]))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(t([1], np.int64), t(w), padding_idx=5)


def test_embedding_max_norm_renorms_weight_in_place():
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], np.float32)
    wt = t(w)
    out = F.embedding(t([0, 1], np.int64), wt, max_norm=1.0)
    scale = 1.0 / (5.0 + 1e-7)
    close(out, [[3 * scale, 4 * scale], [0.3, 0.4]])
    # Row 2 was not looked up: left as it was.
    close(wt, [[3 * scale, 4 * scale], [0.3, 0.4], [6.0, 8.0]])


def test_embedding_bag():
    w = rand(6, 2)
    inp = t([1, 2, 4, 5, 4, 3], np.int64)
    offsets = t([0, 2, 2], np.int64)
    close(F.embedding_bag(inp, t(w), offsets, mode="sum"),
          [w[1] + w[2], [0, 0], w[4] + w[5] + w[4] + w[3]])
    close(F.embedding_bag(inp, t(w), offsets), [(w[1] + w[2]) / 2, [0, 0],
                                                (w[4] + w[5] + w[4] + w[3]) / 4])
    close(F.embedding_bag(inp, t(w), offsets, mode="max"),
          [np.maximum(w[1], w[2]), [0, 0], w[[4, 5, 3]].max(0)])
    close(F.embedding_bag(inp, t(w), t([0, 2, 4], np.int64), include_last_offset=True,
                          mode="sum"), [w[1] + w[2], w[4] + w[5]])
    psw = np.arange(1, 7, dtype=np.float32)
    close(F.embedding_bag(inp, t(w), offsets, mode="sum", per_sample_weights=t(psw)),
          [w[1] + 2 * w[2], [0, 0], 3 * w[4] + 4 * w[5] + 5 * w[4] + 6 * w[3]])
    two_d = t([[1, 2], [4, 4]], np.int64)
    close(F.embedding_bag(two_d, t(w), mode="sum", padding_idx=4), [w[1] + w[2], [0, 0]])
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(inp, t(w))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(two_d, t(w), mode="min")
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(inp, t(w), offsets, per_sample_weights=t(psw))


def test_one_hot():
    out = F.one_hot(t([0, 2, 1], np.int64))
    assert out.dtype == torch.int64 and out.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert tuple(F.one_hot(t([[1]], np.int64), 4).shape) == (1, 1, 4)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(t([1, -1], np.int64))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(t([1, 3], np.int64), 2)
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type LongTensor"):
        F.one_hot(t([1.0]))
    with pytest.raises(RuntimeError, match="Can not infer total number of classes"):
        F.one_hot(t(np.zeros(0, np.int64)))


def test_pad():
    x = np.arange(10, dtype=np.float32).reshape(1, 2, 5)
    close(F.pad(t(x), (1, 2)), np.pad(x, ((0, 0), (0, 0), (1, 2))))
    close(F.pad(t(x), (1, 0, 0, 1), value=-1.0),
          np.pad(x, ((0, 0), (0, 1), (1, 0)), constant_values=-1))
    close(F.pad(t(x), (-1, -2)), x[..., 1:-2])
    close(torch.constant_pad_nd(t(x), (2, 0), 7.0),
          np.pad(x, ((0, 0), (0, 0), (2, 0)), constant_values=7))
    close(F.pad(t(x), (2, 3), mode="reflect"), np.pad(x, ((0, 0), (0, 0), (2, 3)), "reflect"))
    close(F.pad(t(x), (2, 3), mode="replicate"), np.pad(x, ((0, 0), (0, 0), (2, 3)), "edge"))
    close(F.pad(t(x), (2, 3), mode="circular"), np.pad(x, ((0, 0), (0, 0), (2, 3)), "wrap"))
    close(F.pad(t(x), (1, 1, 1, 0), mode="reflect"),
          np.pad(x, ((0, 0), (1, 0), (1, 1)), "reflect"))
    # Negative circular pads crop first, then wrap the cropped range.
    close(F.pad(t(x), (-1, 2), mode="circular"), np.pad(x[..., 1:], ((0, 0), (0, 0), (0, 2)),
                                                       "wrap"))
    assert F.pad(t(x, np.int64), (1, 1)).dtype == torch.int64
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(t(x), (1,))
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding "
                       "input dimension"):
        F.pad(t(x), (5, 5), mode="reflect")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D input"):
        F.pad(t([1.0, 2.0]), (1, 1), mode="replicate")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(t(x), (1, 1), mode="foo")


def test_distances():
    a, b = rand(3, 4), rand(3, 4)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    cos = (a64 * b64).sum(1) / np.linalg.norm(a64, axis=1) / np.linalg.norm(b64, axis=1)
    close(F.cosine_similarity(t(a), t(b)), cos)
    close(torch.cosine_similarity(t(a), t(b[:1]), dim=1),
          (a64 * b64[:1]).sum(1) / np.linalg.norm(a64, axis=1) / np.linalg.norm(b64[0]))
    close(F.pairwise_distance(t(a), t(b)), np.linalg.norm(a64 - b64 + 1e-6, axis=1))
    close(F.pairwise_distance(t(a), t(b), p=1.0, keepdim=True),
          np.abs(a64 - b64 + 1e-6).sum(1, keepdims=True))
    pairs = [(0, 1), (0, 2), (1, 2)]
    close(F.pdist(t(a)), [np.linalg.norm(a64[i] - a64[j]) for i, j in pairs])
    close(torch.pdist(t(a), p=math.inf), [np.abs(a64[i] - a64[j]).max() for i, j in pairs])
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        F.pdist(t(a[0]))
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point"):
        F.cosine_similarity(t([1, 2], np.int64), t([1, 2], np.int64), 0)


def _attention(q, k, v, bias):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]) + bias
    s = np.exp(s - s.max(-1, keepdims=True))
    return (s / s.sum(-1, keepdims=True)) @ v


def test_scaled_dot_product_attention():
    q, k, v = rand(2, 2, 3, 4), rand(2, 2, 5, 4), rand(2, 2, 5, 4)
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    close(F.scaled_dot_product_attention(t(q), t(k), t(v)), _attention(q64, k64, v64, 0))
    causal = np.where(np.tril(np.ones((3, 5), bool)), 0.0, -np.inf)
    close(F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True),
          _attention(q64, k64, v64, causal))
    fmask = rand(3, 5)
    close(F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(fmask)),
          _attention(q64, k64, v64, fmask))
    bmask = np.ones((3, 5), bool)
    bmask[1] = False  # a row that attends to nothing gives zeros
    bmask[0, 2] = False
    out = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(bmask)).numpy()
    ref = _attention(q64, k64, v64, np.where(bmask, 0.0, -1e30))
    ref[..., 1, :] = 0
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    close(F.scaled_dot_product_attention(t(q), t(k), t(v), scale=0.5),
          _attention(q64 * 0.5 * math.sqrt(4), k64, v64, 0))
    # Grouped-query attention: 4 query heads share 2 key/value heads.
    q4 = rand(1, 4, 3, 4)
    out = F.scaled_dot_product_attention(t(q4), t(k[:1]), t(v[:1]), enable_gqa=True)
    close(out, _attention(q4.astype(np.float64), np.repeat(k64[:1], 2, 1),
                          np.repeat(v64[:1], 2, 1), 0))
    torch.manual_seed(0)
    dropped = F.scaled_dot_product_attention(t(q), t(k), t(v), dropout_p=0.5)
    assert tuple(dropped.shape) == (2, 2, 3, 4)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same "
                       "dtype"):
        F.scaled_dot_product_attention(t(q), t(k), torch.from_numpy(v.astype(np.float64)))


def test_multi_head_attention_forward():
    length, n, e, h = 3, 2, 4, 2
    q, k = rand(length, n, e), rand(5, n, e)
    w_in, b_in, w_out, b_out = rand(3 * e, e), rand(3 * e), rand(e, e), rand(e)
    mask = np.zeros((n, 5), bool)
    mask[1, 0] = True  # batch 1 ignores key 0
    out, weights = F.multi_head_attention_forward(
        t(q), t(k), t(k), e, h, t(w_in), t(b_in), None, None, False, 0.0, t(w_out), t(b_out),
        key_padding_mask=t(mask))
    q64, k64 = q.astype(np.float64), k.astype(np.float64)
    pq = q64 @ w_in[:e].T + b_in[:e]
    pk = k64 @ w_in[e:2 * e].T + b_in[e:2 * e]
    pv = k64 @ w_in[2 * e:].T + b_in[2 * e:]
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
        F.multi_head_attention_forward(t(q), t(k), t(k), e, h, t(w_in), t(b_in), None, None,
                                       False, 0.0, t(w_out), t(b_out), is_causal=True)


def test_embedding_renorm_rescales_only_long_indexed_rows():
    w = torch.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    torch.embedding_renorm_(w, torch.tensor([0, 1]), 1.0, 2.0)
    got = np.asarray(w)
    np.testing.assert_allclose(got[0], [0.6, 0.8], rtol=1e-5)   # norm 5 -> 1
    np.testing.assert_allclose(got[1], [0.3, 0.4], rtol=1e-6)   # norm 0.5 <= 1: unchanged
    np.testing.assert_allclose(got[2], [6.0, 8.0], rtol=1e-6)   # not indexed: unchanged
