"""Index forms: Python sequences, numpy arrays and scalars, bool lists and `__index__` objects
as indices, read and written; the assigned value's conversion. Expected values come from
numpy's indexing (which PyTorch follows) and PyTorch's documented rules."""

import collections
import warnings

import numpy as np
import pytest

import jtorch as torch
from tests.helpers import same


def _grid():
    return torch.arange(24).reshape(4, 6), np.arange(24).reshape(4, 6)


@pytest.mark.parametrize(
    "index, np_index",
    [
        (range(3), np.arange(3)),
        (range(3, 0, -1), np.array([3, 2, 1])),
        ((range(3), [1, 2, 3]), (np.arange(3), np.array([1, 2, 3]))),
        ((slice(None), range(0, 6, 2)), (slice(None), np.array([0, 2, 4]))),
        ([0, 2], np.array([0, 2])),
        ([True, False, True, True], np.array([True, False, True, True])),
        ((slice(None), [True, False] * 3), (slice(None), np.array([True, False] * 3))),
        (np.array([1, 0], dtype=np.int32), np.array([1, 0])),
        (np.array([[0, 1], [2, 3]]), np.array([[0, 1], [2, 3]])),
        (np.int64(2), 2),
        (collections.deque([3, 1]), np.array([3, 1])),
        ([np.int64(0), np.int64(3)], np.array([0, 3])),
        (([[0, 1], [3, 2]],), np.array([[0, 1], [3, 2]])),
        ((None, range(2)), (None, np.arange(2))),
        ([1.0, 2.9], np.array([1, 2])),  # floats in a list truncate, as C++ casts
        (range(0), np.arange(0)),
    ],
)
def test_read_matches_numpy(index, np_index):
    x, a = _grid()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of these forms is deprecated
        out = x[index]
    assert out.dtype is torch.int64
    np.testing.assert_array_equal(out.numpy(), a[np_index])


def test_short_list_of_sequences_is_a_tuple_with_warning():
    x, a = _grid()
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        out = x[[[0, 1], [1, 0]]]
    np.testing.assert_array_equal(out.numpy(), a[[0, 1], [1, 0]])
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        np.testing.assert_array_equal(x[[slice(None), 1]].numpy(), a[:, 1])
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        assert x[[torch.tensor(1), 2]].item() == a[1, 2]


def test_long_list_is_one_index():
    x, a = _grid()
    idx = [0, 1, 2] * 12  # 32 or more elements: never a tuple
    np.testing.assert_array_equal(x[idx].numpy(), a[np.array(idx)])


def test_index_object_and_numpy_zero_d():
    class Two:
        def __index__(self):
            return 2

    x, a = _grid()
    np.testing.assert_array_equal(x[Two()].numpy(), a[2])
    np.testing.assert_array_equal(x[0, Two()].numpy(), a[0, 2])
    np.testing.assert_array_equal(x[np.array(3)].numpy(), a[3])


def test_uint8_mask_warns_and_masks():
    x, a = _grid()
    with pytest.warns(UserWarning, match="dtype torch.uint8 is now deprecated"):
        out = x[torch.tensor([1, 0, 1, 1], dtype=torch.uint8)]
    np.testing.assert_array_equal(out.numpy(), a[[0, 2, 3]])


@pytest.mark.parametrize(
    "index, exc, match",
    [
        ("a", TypeError, "new\\(\\): invalid data type 'str'"),
        (["a"], TypeError, "invalid data type 'str'"),
        (1.0, IndexError, "valid indices \\(got float\\)"),
        (np.float64(1), IndexError, "got numpy.float64"),
        (np.bool_(True), IndexError, "got numpy.bool"),
        ({0: 1}, IndexError, "got dict"),
        ([True, False, True], IndexError, "shape of the mask \\[3\\] at index 0"),
        (torch.tensor([1, 0], dtype=torch.int16), IndexError, "long, int, byte or bool"),
        (torch.tensor([1.0]), IndexError, "long, int, byte or bool"),
        (np.array(["a"]), TypeError, "numpy.str_"),
        ([2**63], ValueError, "Overflow when unpacking long long"),
        ([4], IndexError, "index 4 is out of bounds for dimension 0 with size 4"),
        (([[0, 1], [1]],), ValueError, "expected sequence of length 2 at dim 1 \\(got 1\\)"),
        (([0, 1], [0, 1, 2]), IndexError, "broadcast together with shapes \\[2\\], \\[3\\]"),
        (slice(1.0, 2), TypeError, "slice indices must be integers"),
    ],
)
def test_read_errors(index, exc, match):
    x, _ = _grid()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match):
            x[index]


def test_several_ellipses_skip_the_same_dims():
    x = torch.arange(60).reshape(3, 4, 5)
    a = np.arange(60).reshape(3, 4, 5)
    np.testing.assert_array_equal(x[..., 0, ...].numpy(), a[..., 0])
    np.testing.assert_array_equal(x[..., 1, 2, 3, ...].numpy(), a[1, 2, 3])
    with pytest.raises(IndexError):
        x[..., 0, ..., 1]


@pytest.mark.parametrize(
    "index, np_index",
    [
        (range(1, 3), np.arange(1, 3)),
        ((slice(None), range(0, 4, 2)), (slice(None), np.array([0, 2]))),
        ([0, 2], np.array([0, 2])),
        (np.array([1, 0]), np.array([1, 0])),
        ([True, False, True, False], np.array([True, False, True, False])),
        (np.int64(2), 2),
    ],
)
def test_write_matches_numpy(index, np_index):
    x, a = _grid()
    x[index] = -7
    a[np_index] = -7
    np.testing.assert_array_equal(x.numpy(), a)


@pytest.mark.parametrize(
    "value, exc, match",
    [
        ([1, 2, 3, 4, 5, 6], TypeError, "can't assign a list to a torch.LongTensor"),
        (np.arange(6), TypeError, "can't assign a numpy.ndarray to a torch.LongTensor"),
        ("a", TypeError, "can't assign a str"),
        (None, TypeError, "can't assign a NoneType"),
        (np.float32(1.5), TypeError, "can't assign a numpy.float32"),
    ],
)
def test_value_types(value, exc, match):
    x, _ = _grid()
    with pytest.raises(exc, match=match):
        x[[0]] = value
    np.testing.assert_array_equal(x.numpy(), np.arange(24).reshape(4, 6))


@pytest.mark.parametrize(
    "dtype, value, match",
    [
        (torch.int8, 300, "type int8_t"),
        (torch.int32, 2**40, "type int without"),
        (torch.uint8, -300, "type uint8_t"),
        (torch.float32, 1e300, "type float without"),
        (torch.float32, 2j, "type float without"),
        (torch.int64, float("nan"), "type int64_t"),
    ],
)
def test_value_overflow(dtype, value, match):
    x = torch.zeros(3, dtype=dtype)
    with pytest.raises(RuntimeError, match=f"value cannot be converted to {match}"):
        x[0] = value
    assert x.tolist() == [0, 0, 0]


def test_value_conversions():
    x = torch.zeros(3, dtype=torch.uint8)
    x[0] = -1  # wraps, as two's complement
    assert x.tolist() == [255, 0, 0]
    y = torch.zeros(2, dtype=torch.float16)
    y[0] = 1e10  # too large for float16: inf, no error
    assert y[0].item() == float("inf")
    z = torch.zeros(2)
    z[0] = 1 + 0j  # a complex with no imaginary part converts
    assert z.tolist() == [1.0, 0.0]


def test_advanced_write_needs_matching_dtype_but_mask_fill_casts():
    x, _ = _grid()
    with pytest.raises(RuntimeError, match="got Long for the destination and Float"):
        x[[0]] = torch.ones(6)
    x[torch.tensor([True, False, False, False])] = torch.tensor(2.5)  # masked_fill_ casts
    assert x[0].tolist() == [2] * 6
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks"):
        x[torch.tensor([1, 0, 0, 0], dtype=torch.uint8)] = 5


def test_leading_ones_of_the_value_are_dropped():
    x, a = _grid()
    x[[0, 1]] = torch.ones(1, 1, 2, 6, dtype=torch.int64)
    x[3] = torch.full((1, 1, 6), 5)
    a[[0, 1]] = 1
    a[3] = 5
    np.testing.assert_array_equal(x.numpy(), a)


def test_false_index_writes_nothing():
    x, a = _grid()
    x[False] = torch.ones(3, dtype=torch.int64)  # not even the shape is checked
    np.testing.assert_array_equal(x.numpy(), a)


def test_duplicate_positions_all_get_the_gradient():
    # index_put's backward gathers the output gradient for every value written
    x = torch.zeros(4, 6, requires_grad=True)
    v = torch.ones(3, 6, requires_grad=True)
    y = x * 1
    y[[1, 1, 3]] = v
    w = torch.arange(24.0).reshape(4, 6)
    (y * w).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), w.numpy()[[1, 1, 3]])
    expected = w.numpy().copy()
    expected[[1, 3]] = 0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


# ---------------------------------------------------------------------------
# Unsafe masked indexing


def test_unsafe_masked_index_and_put_accumulate():
    x = torch.arange(12.0).reshape(3, 4)
    i0 = torch.tensor([0, 2, 5]).view(3, 1)
    i1 = torch.tensor([1, 3, -1, 7]).view(1, 4)
    mask = (i0 < 3) & (i1 >= 0) & (i1 < 4)
    same(
        torch._unsafe_masked_index(x, mask, [i0, i1], -1.0),
        [[1, 3, -1, -1], [9, 11, -1, -1], [-1, -1, -1, -1]],
        torch.float32,
    )
    r = torch._unsafe_masked_index_put_accumulate(x, mask, [i0, i1], torch.ones(3, 4))
    same(r, [[0, 2, 2, 4], [4, 5, 6, 7], [8, 10, 10, 12]])
    same(x, np.arange(12.0).reshape(3, 4))  # out of place
    with pytest.raises(RuntimeError, match="source and destination dtypes match"):
        torch._unsafe_masked_index_put_accumulate(x, mask, [i0, i1], torch.ones(3, 4).double())
