"""Private/aten-level ops: empty_permuted, histogramdd, _chunk_cat, _segment_reduce,
_softmax_backward_data, native_dropout_backward and the unsafe masked index ops."""

import math

import numpy as np
import pytest

import jtorch as torch
from tests.helpers import close, same


def test_empty_permuted_shape_strides_and_errors():
    x = torch.empty_permuted((2, 3, 4), (2, 0, 1), dtype=torch.float64)
    assert x.shape == (2, 3, 4) and x.dtype is torch.float64
    assert x.stride() == (3, 1, 6)  # dim 2 outermost in memory, then 0, then 1
    assert torch.empty_permuted((), ()).shape == ()
    with pytest.raises(RuntimeError, match="does not match the length of the physical_layout"):
        torch.empty_permuted((2,), (0, 1))
    with pytest.raises(RuntimeError, match="Dimension out of range"):
        torch.empty_permuted((2,), (3,))
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        torch.empty_permuted((2, 3), (0, 0))


PTS = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 2.0], [5.0, 5.0]], np.float32)


def test_histogramdd_counts_edges_weights_density():
    r = torch.histogramdd(torch.from_numpy(PTS), [2, 3])
    hist, edges = np.histogramdd(PTS, bins=[2, 3])
    assert type(r).__name__ == "histogramdd" and r._fields == ("hist", "bin_edges")
    same(r.hist, hist, torch.float32)
    assert len(r.bin_edges) == 2
    close(r.bin_edges[1], edges[1])
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    bins = [torch.tensor([0.0, 1.0, 3.0]), torch.tensor([0.0, 2.0, 5.0])]
    r = torch.histogramdd(torch.from_numpy(PTS), bins, weight=torch.from_numpy(w), density=True)
    expected, _ = np.histogramdd(PTS, bins=[[0, 1, 3], [0, 2, 5]], weights=w, density=True)
    close(r.hist, expected)
    r = torch.histogramdd(torch.ones(3, 2), 2)  # a degenerate range widens by half a unit
    close(r.bin_edges[0], [0.5, 1.0, 1.5])


def test_histogramdd_errors():
    x = torch.from_numpy(PTS)
    with pytest.raises(RuntimeError, match="size of bins must be equal"):
        torch.histogramdd(x, [2, 3, 4])
    with pytest.raises(RuntimeError, match="min should not exceed max"):
        torch.histogramdd(x, 2, range=[1.0, 0.0, 0.0, 1.0])
    with pytest.raises(RuntimeError, match="same shape as the input tensor excluding"):
        torch.histogramdd(x, 2, weight=torch.ones(3))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch.histogramdd(torch.ones(2, 2, dtype=torch.int64), 2)


def test_chunk_cat_values_out_and_errors():
    a = torch.arange(6.0).reshape(2, 3)
    b = torch.arange(4.0).reshape(2, 2)
    # chunk i of each tensor (zero-padded to 2 chunks along dim 1) goes into row i
    expected = [[[0, 1, 0], [2, 0, 1]], [[3, 4, 2], [5, 0, 3]]]
    same(torch._chunk_cat([a, b], 1, 2), expected, torch.float32)
    out = torch.empty(0)
    torch._chunk_cat([a, b], 1, 2, out=out)
    same(out, expected)
    same(torch._chunk_cat([torch.arange(5.0)], 0, 2), [[0, 1, 2], [3, 4, 0]])
    with pytest.raises(RuntimeError, match="expects non-negative dim"):
        torch._chunk_cat([torch.zeros(2, 3), torch.zeros(4)], -1, 3)
    with pytest.raises(RuntimeError, match="expects positive num_chunks"):
        torch._chunk_cat([a], 0, 0)
    with pytest.raises(RuntimeError, match="non-empty input tensor list"):
        torch._chunk_cat([], 0, 1)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch._chunk_cat([a, b.double()], 1, 2)


X6 = torch.arange(1.0, 7.0)


@pytest.mark.parametrize("reduce, plain, with_initial", [
    ("sum", [3, 0, 12, 6], [13, 10, 22, 16]),
    ("prod", [2, 1, 60, 6], [20, 10, 600, 60]),
    ("max", [2, -math.inf, 5, 6], [10, 10, 10, 10]),
    ("min", [1, math.inf, 3, 6], [1, 10, 3, 6]),
    ("mean", [1.5, math.nan, 4, 6], [6.5, 10, 22 / 3, 16]),
])
def test_segment_reduce_lengths(reduce, plain, with_initial):
    lengths = torch.tensor([2, 0, 3, 1])
    close(torch._segment_reduce(X6, reduce, lengths=lengths), plain)
    close(torch.segment_reduce(X6, reduce, lengths=lengths, initial=10), with_initial)


def test_segment_reduce_offsets_axis_and_errors():
    close(torch._segment_reduce(X6, "sum", offsets=torch.tensor([1, 2, 5]), unsafe=True),
          [2, 12])
    data = torch.arange(24.0).reshape(2, 3, 4)
    r = torch._segment_reduce(data, "sum", lengths=torch.tensor([[1, 2], [3, 0]]), axis=1)
    d = np.arange(24.0).reshape(2, 3, 4)
    close(r, [[d[0, 0], d[0, 1:].sum(0)], [d[1].sum(0), np.zeros(4)]])
    with pytest.raises(RuntimeError, match="sum to data.size"):
        torch._segment_reduce(X6, "sum", lengths=torch.tensor([2, 0, 3]))
    with pytest.raises(RuntimeError, match="lengths contains negative value"):
        torch._segment_reduce(X6, "sum", lengths=torch.tensor([-1, 7]))
    with pytest.raises(RuntimeError, match="Either lengths or offsets"):
        torch._segment_reduce(X6, "sum")
    with pytest.raises(NotImplementedError, match="'Long'"):
        torch._segment_reduce(torch.arange(6), "sum", lengths=torch.tensor([6]))


def test_softmax_backward_data():
    x = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    y = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    g = np.array([[1.0, -2.0, 0.5], [0.3, 0.0, 1.0]])
    r = torch._softmax_backward_data(torch.tensor(g), torch.tensor(y), 1, torch.float64)
    close(r, y * (g - (g * y).sum(1, keepdims=True)), rtol=1e-12)
    assert r.dtype is torch.float64
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        torch._softmax_backward_data(torch.tensor(g), torch.tensor(y).float(), 1, torch.float64)


def test_native_dropout_backward():
    mask = torch.tensor([True, False, True])
    same(torch.native_dropout_backward(torch.tensor([1.0, 2.0, 3.0]), mask, 2.0), [2, 0, 6],
         torch.float32)
    # integer gradients promote with the float scale to the default float dtype
    assert torch.native_dropout_backward(torch.tensor([1, 2, 3]), mask, 2.0).dtype is \
        torch.float32


def test_unsafe_masked_index_and_put_accumulate():
    x = torch.arange(12.0).reshape(3, 4)
    i0 = torch.tensor([0, 2, 5]).view(3, 1)
    i1 = torch.tensor([1, 3, -1, 7]).view(1, 4)
    mask = (i0 < 3) & (i1 >= 0) & (i1 < 4)
    same(torch._unsafe_masked_index(x, mask, [i0, i1], -1.0),
         [[1, 3, -1, -1], [9, 11, -1, -1], [-1, -1, -1, -1]], torch.float32)
    r = torch._unsafe_masked_index_put_accumulate(x, mask, [i0, i1], torch.ones(3, 4))
    same(r, [[0, 2, 2, 4], [4, 5, 6, 7], [8, 10, 10, 12]])
    same(x, np.arange(12.0).reshape(3, 4))  # out of place
    with pytest.raises(RuntimeError, match="source and destination dtypes match"):
        torch._unsafe_masked_index_put_accumulate(x, mask, [i0, i1], torch.ones(3, 4).double())
