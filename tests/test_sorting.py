"""Sorting and selection: values from numpy, torch's tie/NaN rules, dtypes and errors."""

import math

import numpy as np
import pytest

import jtorch as torch

nan = math.nan
A = np.array([[3.0, -1.0, 2.0, 5.0, 2.0], [0.5, 4.0, -2.0, 1.0, 4.0]], np.float32)


def t(a, dtype=None):
    return torch.tensor(a, dtype=dtype)


def eq(result, expected, dtype):
    assert result.dtype is dtype, (result.dtype, dtype)
    np.testing.assert_array_equal(result.numpy(), np.asarray(expected))


def test_sort_stable_descending_and_return_type():
    r = torch.sort(t(A))
    assert type(r).__name__ == "sort" and r._fields == ("values", "indices")
    eq(r.values, np.sort(A), torch.float32)
    eq(r.indices, np.argsort(A, kind="stable"), torch.int64)
    v, i = t(A).sort(dim=0, descending=True)
    eq(v, -np.sort(-A, 0), torch.float32)
    v, i = torch.sort(t([2, 1, 2, 1]), descending=True, stable=True)
    eq(i, [0, 2, 1, 3], torch.int64)  # ties keep order
    v, i = torch.sort(t(3.0))
    assert v.item() == 3.0 and i.item() == 0


def test_sort_nan_placement_and_out():
    x = t([2.0, nan, 1.0])
    eq(torch.sort(x).values, [1.0, 2.0, nan], torch.float32)  # NaN last ascending
    eq(torch.sort(x, descending=True).values, [nan, 2.0, 1.0], torch.float32)
    vals, idx = torch.empty(0), torch.empty(0, dtype=torch.int64)
    torch.sort(x, out=(vals, idx))
    eq(idx, [2, 0, 1], torch.int64)
    with pytest.raises(RuntimeError, match="complex"):
        torch.sort(t([1 + 1j]))


def test_argsort_msort():
    eq(torch.argsort(t(A), dim=1), np.argsort(A, 1, kind="stable"), torch.int64)
    eq(t(A).argsort(descending=True)[0], [3, 0, 2, 4, 1], torch.int64)
    eq(torch.msort(t(A)), np.sort(A, 0), torch.float32)


def test_topk_kthvalue():
    r = torch.topk(t([1.0, 3.0, 3.0, 2.0]), 2)
    assert type(r).__name__ == "topk"
    eq(r.values, [3.0, 3.0], torch.float32)
    eq(r.indices, [1, 2], torch.int64)
    r = torch.topk(t([1.0, nan, 3.0, 2.0]), 2, largest=False)
    eq(r.indices, [0, 3], torch.int64)
    eq(torch.topk(t(A), 2, dim=0).values, -np.sort(-A, 0)[:2], torch.float32)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(t([1, 2, 3]), 4)
    r = torch.kthvalue(t(A[:, :4]), 2, 1)
    assert type(r).__name__ == "kthvalue"
    eq(r.values, [2.0, 0.5], torch.float32)
    eq(r.indices, [2, 0], torch.int64)
    r = torch.kthvalue(t(A), 1, 0, keepdim=True)
    eq(r.values, A.min(0, keepdims=True), torch.float32)
    with pytest.raises(RuntimeError, match="out of range for dimension 0"):
        torch.kthvalue(t([1, 2, 3]), 4)


def test_unique():
    x = np.array([3, 1, 2, 1, 3, 3])
    eq(torch.unique(t(x)), [1, 2, 3], torch.int64)
    u, inv, cnt = torch.unique(t(x), return_inverse=True, return_counts=True)
    eq(u, [1, 2, 3], torch.int64)
    eq(inv, [2, 0, 1, 0, 2, 2], torch.int64)
    eq(cnt, [2, 1, 3], torch.int64)
    u, inv = t(x.reshape(2, 3)).unique(return_inverse=True)
    eq(inv, [[2, 0, 1], [0, 2, 2]], torch.int64)  # inverse keeps the shape
    m = np.array([[1, 2], [1, 2], [0, 5]])
    u, inv, cnt = torch.unique(t(m), dim=0, return_inverse=True, return_counts=True)
    eq(u, [[0, 5], [1, 2]], torch.int64)
    eq(inv, [1, 1, 0], torch.int64)
    eq(cnt, [1, 2], torch.int64)
    eq(torch.unique(t([nan, nan, 1.0])), [1.0, nan, nan], torch.float32)  # NaNs stay distinct


def test_unique_consecutive():
    x = t([1, 1, 2, 2, 3, 1, 1, 2])
    eq(torch.unique_consecutive(x), [1, 2, 3, 1, 2], torch.int64)
    u, inv, cnt = torch.unique_consecutive(x, return_inverse=True, return_counts=True)
    eq(inv, [0, 0, 1, 1, 2, 3, 3, 4], torch.int64)
    eq(cnt, [2, 2, 1, 2, 1], torch.int64)
    m = t([[1, 1, 2], [1, 1, 2], [3, 1, 2]])
    u, cnt = torch.unique_consecutive(m, return_counts=True, dim=0)
    eq(u, [[1, 1, 2], [3, 1, 2]], torch.int64)
    eq(cnt, [2, 1], torch.int64)


def test_searchsorted_bucketize():
    b = np.array([1.0, 3.0, 5.0, 7.0, 9.0], np.float32)
    v = np.array([[3.0, 6.0, 9.0], [3.0, 6.0, 10.0]], np.float32)
    eq(torch.searchsorted(t(b), t(v)), np.searchsorted(b, v), torch.int64)
    eq(torch.searchsorted(t(b), t(v), right=True), np.searchsorted(b, v, "right"), torch.int64)
    eq(
        torch.searchsorted(t(b), t(v), side="right", out_int32=True),
        np.searchsorted(b, v, "right"),
        torch.int32,
    )
    bb = np.array([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
    eq(
        torch.searchsorted(t(bb), t(v)),
        [np.searchsorted(bb[0], v[0]), np.searchsorted(bb[1], v[1])],
        torch.int64,
    )
    unsorted = np.array([5.0, 1.0, 9.0, 3.0, 7.0], np.float32)
    sorter = np.argsort(unsorted)
    eq(torch.searchsorted(t(unsorted), t(v), sorter=t(sorter)), np.searchsorted(b, v), torch.int64)
    eq(torch.searchsorted(t(b), 6), 3, torch.int64)
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        torch.searchsorted(t(b), t(v), side="left", right=True)
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension"):
        torch.searchsorted(t([[1.0, 2.0]]), t([2.0, 3.0]))
    eq(torch.bucketize(t(v), t(b)), np.searchsorted(b, v), torch.int64)
    eq(torch.bucketize(t(v), t(b), right=True), np.searchsorted(b, v, "right"), torch.int64)
    with pytest.raises(RuntimeError, match="1 dimension"):
        torch.bucketize(t(v), t([[1.0]]))
