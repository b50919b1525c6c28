"""`F.embedding` (max_norm renorm), `embedding_bag`, `one_hot` (`jtorch/_ops/nn/embedding.py`),
checked with numpy."""

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from tests.helpers import close
from tests.helpers import f32 as t

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


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


def test_embedding_renorm_rescales_only_long_indexed_rows():
    w = torch.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    torch.embedding_renorm_(w, torch.tensor([0, 1]), 1.0, 2.0)
    got = np.asarray(w)
    np.testing.assert_allclose(got[0], [0.6, 0.8], rtol=1e-5)  # norm 5 -> 1
    np.testing.assert_allclose(got[1], [0.3, 0.4], rtol=1e-6)  # norm 0.5 <= 1: unchanged
    np.testing.assert_allclose(got[2], [6.0, 8.0], rtol=1e-6)  # not indexed: unchanged


def test_embedding_bag():
    w = rand(6, 2)
    inp = t([1, 2, 4, 5, 4, 3], np.int64)
    offsets = t([0, 2, 2], np.int64)
    close(
        F.embedding_bag(inp, t(w), offsets, mode="sum"),
        [w[1] + w[2], [0, 0], w[4] + w[5] + w[4] + w[3]],
    )
    close(
        F.embedding_bag(inp, t(w), offsets),
        [(w[1] + w[2]) / 2, [0, 0], (w[4] + w[5] + w[4] + w[3]) / 4],
    )
    close(
        F.embedding_bag(inp, t(w), offsets, mode="max"),
        [np.maximum(w[1], w[2]), [0, 0], w[[4, 5, 3]].max(0)],
    )
    close(
        F.embedding_bag(inp, t(w), t([0, 2, 4], np.int64), include_last_offset=True, mode="sum"),
        [w[1] + w[2], w[4] + w[5]],
    )
    psw = np.arange(1, 7, dtype=np.float32)
    close(
        F.embedding_bag(inp, t(w), offsets, mode="sum", per_sample_weights=t(psw)),
        [w[1] + 2 * w[2], [0, 0], 3 * w[4] + 4 * w[5] + 5 * w[4] + 6 * w[3]],
    )
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
