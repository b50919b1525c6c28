"""Gather/scatter/index ops against numpy and PyTorch's documented behaviour."""

import numpy as np
import pytest

import jtorch as torch

from .helpers import same, t

A = np.arange(6.0, dtype=np.float32).reshape(2, 3)
IDX = np.array([[0, 1, 1], [1, 0, 0]])


def np_scatter(base, dim, index, src, op=None):
    out = base.copy()
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = index[pos]
        target = tuple(target)
        v = src[pos] if np.ndim(src) else src
        out[target] = v if op is None else op(out[target], v)
    return out


# ---------------------------------------------------------------------------
# gather / scatter


def test_gather():
    x, i = t(A), t(IDX)
    same(torch.gather(x, 1, i), np.take_along_axis(A, IDX, 1))
    same(x.gather(0, t(IDX, torch.int32)), np.take_along_axis(A, IDX, 0))
    same(torch.gather(torch.tensor(5.0), 0, torch.tensor(0)), 5.0)
    assert torch.gather(x, 0, torch.zeros(0, 3, dtype=torch.int64)).shape == (0, 3)
    out = torch.empty(0)
    torch.gather(x, 1, i, out=out)
    same(out, np.take_along_axis(A, IDX, 1))


def test_gather_errors():
    x, i = t(A), t(IDX)
    with pytest.raises(RuntimeError, match="gather\\(\\): Expected dtype int32/int64 for index"):
        torch.gather(x, 0, x)
    with pytest.raises(RuntimeError, match="index 2 is out of bounds for dimension 0 with size 2"):
        torch.gather(x, 0, i + 1)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1"):
        torch.gather(x, 1, -i)
    with pytest.raises(RuntimeError, match="same number of dimensions as input"):
        torch.gather(x, 1, i[0])
    with pytest.raises(RuntimeError, match="Size does not match at dimension 1"):
        torch.gather(x, 0, torch.zeros(2, 4, dtype=torch.int64))
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.gather(x, 2, i)


def test_scatter_src_value_and_reduce():
    x, i = t(A), t(IDX)
    src = A * 10
    same(torch.scatter(x, 0, i, t(src)), np_scatter(A, 0, IDX, src))
    same(x.scatter(1, t([[2], [0]]), t(src)), np_scatter(A, 1, np.array([[2], [0]]), src))
    same(torch.scatter(x, 0, i, 7), np_scatter(A, 0, IDX, 7.0))
    same(torch.scatter(x, 0, i, value=7.5), np_scatter(A, 0, IDX, 7.5))
    same(torch.scatter(torch.zeros(2, 3, dtype=torch.int64), 0, i, -7.5), np.full((2, 3), -7))
    with pytest.warns(UserWarning, match="deprecated"):
        r = torch.scatter(x, 0, i, t(A), reduce="add")
    same(r, np_scatter(A, 0, IDX, A, np.add))
    same(torch.scatter(x, 0, i, 2.0, reduce="multiply"), np_scatter(A, 0, IDX, 2.0, np.multiply))
    same(torch.scatter_add(x, 0, i, t(A)), np_scatter(A, 0, IDX, A, np.add))
    same(torch.scatter_add(t([True, False]), 0, t([1]), t([True])), [True, True], torch.bool)


def test_scatter_inplace_and_errors_leave_self_unchanged():
    x, i = t(A), t(IDX)
    y = x.clone()
    assert y.scatter_(0, i, 1.5) is y
    same(y, np_scatter(A, 0, IDX, 1.5))
    y = x.clone()
    y.scatter_add_(1, i, x)
    same(y, np_scatter(A, 1, IDX, A, np.add))
    y = x.clone()
    with pytest.raises(RuntimeError, match="index 2 is out of bounds for dimension 0"):
        y.scatter_(0, i + 1, x)
    same(y, A)
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        y.scatter_(0, i, t(A, torch.float64))
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        y.scatter_(0, i, x, reduce="sum")
    with pytest.raises(RuntimeError, match="no larger size than src"):
        torch.scatter(x, 0, i, torch.ones(1, 3))
    same(y, A)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(include_self):
    x, i = t(A), t(IDX)
    src = A * 3 - 7
    ops = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}
    for name, fn in ops.items():
        if include_self:
            expected = np_scatter(A, 0, IDX, src, fn)
        else:
            hit = np_scatter(np.zeros_like(A), 0, IDX, 1.0) > 0
            start = {"sum": 0.0, "prod": 1.0, "amax": -np.inf, "amin": np.inf}[name]
            expected = np_scatter(np.where(hit, start, A), 0, IDX, src, fn)
        same(torch.scatter_reduce(x, 0, i, t(src), name, include_self=include_self), expected)
    total = np_scatter(A if include_self else np.zeros_like(A), 0, IDX, src, np.add)
    count = np_scatter(np.full_like(A, 1.0 if include_self else 0.0), 0, IDX, 1.0, np.add)
    mean = np.where(count > 0, total / np.maximum(count, 1), A)
    np.testing.assert_allclose(
        np.asarray(torch.scatter_reduce(x, 0, i, t(src), "mean", include_self=include_self)),
        mean,
        rtol=1e-6,
    )


def test_scatter_reduce_integer_mean_floors_and_nan():
    r = torch.scatter_reduce(t([-1, 2, 3]), 0, t([0, 0, 0]), t([-4, -4, -5]), "mean")
    same(r, [-4, 2, 3], torch.int64)  # (-1 - 4 - 4 - 5) / 4 = -3.5, floored
    r = torch.scatter_reduce(t([1.0, 2, 3]), 0, t([0, 0, 1]), t([np.nan, 4, 5]), "amax")
    assert np.isnan(r[0].item()) and r[1:].tolist() == [5.0, 3.0]
    y = t(A)
    y.scatter_reduce_(1, t(IDX), t(A), "amax", include_self=False)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean"):
        torch.scatter_reduce(t(A), 0, t(IDX), t(A), "foo")


# ---------------------------------------------------------------------------
# index_* family


def test_index_select():
    x = t(A)
    same(torch.index_select(x, 1, t([2, 0, 2])), A[:, [2, 0, 2]])
    same(x.index_select(0, torch.tensor(1)), A[[1]])
    same(torch.index_select(x, 1, t([2, 0], torch.int32)), A[:, [2, 0]])
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.index_select(x, 0, t([2]))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        torch.index_select(x, 0, t([[0]]))
    with pytest.raises(RuntimeError, match="Expected dtype int32 or int64 for index"):
        torch.index_select(x, 0, t([0.0]))


def test_index_add_copy_fill():
    x = t(A)
    expected = A.copy()
    np.add.at(expected, [1, 1, 0], 2 * np.ones((3, 3)))
    same(torch.index_add(x, 0, t([1, 1, 0]), torch.ones(3, 3), alpha=2), expected)
    y = x.clone()
    assert y.index_add_(1, t([2, 0]), torch.ones(2, 2)) is y
    expected = A.copy()
    expected[:, [2, 0]] += 1
    same(y, expected)

    expected = A.copy()
    expected[:, [2, 0]] = 9
    same(torch.index_copy(x, 1, t([2, 0]), torch.full((2, 2), 9.0)), expected)
    y = x.clone()
    y.index_copy_(0, t([1]), torch.full((1, 3), 9.0))
    same(y[1], [9.0, 9.0, 9.0])

    expected = A.copy()
    expected[:, [2, 0]] = -1  # -3 counts from the end
    same(torch.index_fill(x, 1, t([2, -3]), -1.0), expected)
    y = x.clone()
    y.index_fill_(0, torch.tensor(1), torch.tensor(2.5, dtype=torch.float64))
    same(y[1], [2.5, 2.5, 2.5])


def test_index_errors_leave_self_unchanged():
    y = t(A)
    with pytest.raises(RuntimeError, match="index 2 is out of bounds for dimension 0 with size 2"):
        y.index_add_(0, t([2]), torch.ones(1, 3))
    with pytest.raises(RuntimeError, match="must have the same scalar type"):
        y.index_add_(0, t([1]), torch.ones(1, 3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="Number of indices \\(1\\) should be equal"):
        y.index_add_(0, t([1]), torch.ones(2, 3))
    with pytest.raises(IndexError, match="index_copy_\\(\\): index 2 is out of bounds"):
        y.index_copy_(0, t([2]), torch.ones(1, 3))
    with pytest.raises(RuntimeError, match="Expected a long tensor for index, but got Int"):
        y.index_copy_(0, t([1], torch.int32), torch.ones(1, 3))
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        y.index_fill_(0, t([2]), 1.0)
    with pytest.raises(RuntimeError, match="only supports a 0-dimensional value tensor"):
        y.index_fill_(0, t([1]), t([1.0]))
    with pytest.raises(IndexError, match="index out of range in self"):
        y.index_reduce_(0, t([2]), torch.ones(1, 3), "prod")
    same(y, A)


@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(include_self):
    x = t(A)
    index = [2, 2, 0]
    src = A[:, [0, 1, 0]] * 2 - 3
    for name, fn in {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}.items():
        expected = A.copy()
        if not include_self:
            expected[:, [2, 0]] = {"prod": 1, "amax": -np.inf, "amin": np.inf}[name]
        for k, j in enumerate(index):
            expected[:, j] = fn(expected[:, j], src[:, k])
        same(torch.index_reduce(x, 1, t(index), t(src), name, include_self=include_self), expected)
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or"):
        torch.index_reduce(x, 0, t([1]), torch.ones(1, 3), "sum")


def test_index_reduce_mean():
    same(torch.index_reduce(t([1, 2, 3]), 0, t([0, 0, 0]), t([4, 4, 5]), "mean"), [3, 2, 3])
    y = t(A)
    y.index_reduce_(0, t([1, 1]), torch.ones(2, 3), "mean", include_self=False)
    same(y, [[0, 1, 2], [1, 1, 1]])


# ---------------------------------------------------------------------------
# Masks


def test_masked_fill():
    x = t(A)
    same(torch.masked_fill(x, x > 2, -1), np.where(A > 2, -1, A))
    y = x.clone()
    assert y.masked_fill_(t([True, False, True]), torch.tensor(7.0)) is y
    same(y, np.where([True, False, True], 7.0, A))
    same(
        torch.masked_fill(torch.ones(3), torch.ones(2, 3, dtype=torch.bool), 2.0),
        np.full((2, 3), 2.0),
    )
    same(
        torch.masked_fill(torch.zeros(3, dtype=torch.int64), t([True, False, True]), 2.7), [2, 0, 2]
    )
    y = torch.ones(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast"):
        y.masked_fill_(torch.ones(2, 3, dtype=torch.bool), 2.0)
    with pytest.raises(
        RuntimeError, match="only supports boolean masks, but got mask with dtype float"
    ):
        y.masked_fill_(torch.ones(3), 1.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        y.masked_fill_(y > 0, t([1.0]))
    same(y, np.ones(3))


def test_masked_scatter_and_select():
    x = t(A)
    src = np.arange(10.0, dtype=np.float32)
    expected = A.copy()
    expected[A > 2] = src[:3]
    same(torch.masked_scatter(x, x > 2, t(src).reshape(2, 5)), expected)
    y = x.clone()
    mask = np.array([True, False, True])
    y.masked_scatter_(t(mask), t(src))
    expected = A.copy()
    expected[np.broadcast_to(mask, A.shape)] = src[:4]
    same(y, expected)
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        y.masked_scatter_(y > -1, torch.ones(1))
    with pytest.raises(RuntimeError, match="expected self and source to have same dtypes"):
        y.masked_scatter_(y > 2, torch.ones(6, dtype=torch.float64))
    same(y, expected)
    same(torch.masked_select(x, t(mask)), A[np.broadcast_to(mask, A.shape)])
    same(x.masked_select(x > 2), A[A > 2])
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        torch.masked_select(x, torch.ones(3))


# ---------------------------------------------------------------------------
# nonzero family


def test_nonzero():
    x = t(A)
    same(torch.nonzero(x), np.argwhere(A), torch.int64)
    same((x > 2).nonzero(), np.argwhere(A > 2))
    rows, cols = torch.nonzero(x, as_tuple=True)
    same(rows, np.nonzero(A)[0])
    same(cols, np.nonzero(A)[1])
    same(torch.argwhere(x), np.argwhere(A))
    assert torch.nonzero(torch.tensor(3.0)).shape == (1, 0)
    (only,) = torch.nonzero(torch.tensor(3.0), as_tuple=True)
    same(only, [0])
    w = torch.where(x > 2)
    same(w[0], np.nonzero(A > 2)[0])


def test_nonzero_static():
    x = t(A)
    same(
        torch.nonzero_static(x, size=8),
        np.concatenate([np.argwhere(A), np.full((3, 2), -1)]),
        torch.int64,
    )
    same(torch.nonzero_static(x, size=2, fill_value=7), np.argwhere(A)[:2])
    same(torch.nonzero_static(torch.zeros(2, 0), size=1), [[-1, -1]])
    with pytest.raises(RuntimeError, match="'size' must be an non-negative integer"):
        torch.nonzero_static(x, size=-1)


# ---------------------------------------------------------------------------
# take / put / take_along_dim / isin


def test_take_and_put():
    x = t(A)
    same(torch.take(x, t([[1, -1], [5, 0]])), A.ravel()[[[1, -1], [5, 0]]])
    with pytest.raises(IndexError, match="out of range: tried to access index 6 on a tensor of 6"):
        torch.take(x, t([6]))
    with pytest.raises(RuntimeError, match="Expected a long tensor for index, but got Int"):
        torch.take(x, t([1], torch.int32))
    expected = A.copy().ravel()
    expected[[1, -1]] = [9, 8]
    same(torch.put(x, t([1, -1]), t([9.0, 8.0])), expected.reshape(2, 3))
    y = x.clone()
    assert y.put_(t([[1], [1]]), t([9.0, 8.0]), accumulate=True) is y
    assert y.reshape(-1)[1].item() == 18.0
    y = x.clone()
    with pytest.raises(IndexError, match="Expected source and index to have the same number"):
        y.put_(t([1, 2]), t([1.0]))
    with pytest.raises(IndexError, match="out of range"):
        y.put_(t([6]), t([1.0]))
    same(y, A)
    same(torch.put(t([True, False]), t([1, 1]), t([True, False]), accumulate=True), [True, True])


def test_take_along_dim():
    x = t(A)
    ind = np.array([[1, 0], [2, 2]])
    same(torch.take_along_dim(x, t(ind), 1), np.take_along_axis(A, ind, 1))
    same(x.take_along_dim(t([[1], [2]]), 1), np.take_along_axis(A, np.array([[1], [2]]), 1))
    same(torch.take_along_dim(x, t([5, 0])), A.ravel()[[5, 0]])
    with pytest.raises(RuntimeError, match="dtype of indices should be Long but got Int"):
        torch.take_along_dim(x, t([[1]], torch.int32), 1)
    with pytest.raises(RuntimeError, match="should have the same number of dimensions"):
        torch.take_along_dim(x, t([1]), 1)


def test_isin():
    x = t(A)
    same(torch.isin(x, t([1, 4])), np.isin(A, [1, 4]), torch.bool)
    same(torch.isin(x, t([1, 4]), invert=True), ~np.isin(A, [1, 4]))
    same(torch.isin(torch.arange(10), torch.arange(0, 300, 3)), np.arange(10) % 3 == 0)
    same(torch.isin(x, 2), A == 2)
    same(torch.isin(2, x), True)
    same(torch.isin(t([np.nan, 1.0]), t([np.nan, 1.5])), [False, False])
    same(torch.isin(t([1, 2]), t([1.5, 2.0])), [False, True])
    with pytest.raises(
        RuntimeError, match="Unsupported input type encountered for isin\\(\\): Bool"
    ):
        torch.isin(t([True]), t([True]))


# ---------------------------------------------------------------------------
# *_scatter


def test_view_scatters():
    x = t(A)
    expected = A.copy()
    np.fill_diagonal(expected, 1)
    same(torch.diagonal_scatter(x, torch.ones(2)), expected)
    expected = A.copy()
    expected[0, 1], expected[1, 2] = 1, 1
    same(torch.diagonal_scatter(x, torch.ones(2, dtype=torch.int64), 1), expected, torch.float32)
    expected = A.copy()
    expected[-1] = 1
    same(torch.select_scatter(x, torch.ones(3), 0, -1), expected)
    expected = A.copy()
    expected[:, ::2] = 1
    same(torch.slice_scatter(x, torch.ones(2, 2), 1, 0, None, 2), expected)
    expected = A.copy().ravel()
    expected[[1, 3]] = 1
    same(torch.as_strided_scatter(x, torch.ones(2), (2,), (2,), 1), expected.reshape(2, 3))
    with pytest.raises(RuntimeError, match=r"src size = \[3\], slice size = \[2\]"):
        torch.diagonal_scatter(x, torch.ones(3))
    with pytest.raises(IndexError, match="select\\(\\): index 2 out of range"):
        torch.select_scatter(x, torch.ones(3), 0, 2)
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        torch.slice_scatter(x, torch.ones(2, 0), 1, 0, 3, 0)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        torch.as_strided_scatter(x, torch.ones(2), (2,), (5,), 1)
