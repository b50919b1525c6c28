"""`torch.masked`: values from numpy on the masked-in elements, PyTorch's dtypes and errors."""

import math

import numpy as np
import pytest

import jtorch as torch

inf = math.inf
A = np.array([[3.0, -1.0, 2.0, 5.0], [0.5, 4.0, -2.0, 1.0], [2.0, 2.0, 7.0, -3.0]], np.float32)
I = np.array([[3, 1, 2, 1], [0, 4, 4, 1], [2, 2, 7, 3]], np.int64)
# Row 2 is fully masked out.
M = np.array([[True, False, True, True], [False, True, True, False], [False] * 4])


def t(a, dtype=None):
    return torch.tensor(a, dtype=dtype)


def check(result, expected, dtype, rtol=1e-5, atol=1e-6):
    assert result.dtype is dtype, (result.dtype, dtype)
    exp = np.asarray(expected, np.float64)
    got = np.asarray(result.numpy(), np.float64)
    assert got.shape == exp.shape, (got.shape, exp.shape)
    np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol, equal_nan=True)


def rows(fn, a=A, m=M, empty=np.nan):
    """`fn` over the masked-in elements of each row; `empty` for a fully masked row."""
    return np.array([fn(r[k]) if k.any() else empty for r, k in zip(a, m)])


def test_sum_prod_fill_identities_and_dtypes():
    check(torch.masked.sum(t(A), 1, mask=t(M)), rows(np.sum, empty=0), torch.float32)
    check(torch.masked.sum(t(A), mask=t(M)), A[M].sum(), torch.float32)
    check(
        torch.masked.sum(t(A), 1, keepdim=True, mask=t(M)),
        rows(np.sum, empty=0)[:, None],
        torch.float32,
    )
    check(torch.masked.prod(t(A), 1, mask=t(M)), rows(np.prod, empty=1), torch.float32)
    # integers and bools accumulate in int64 unless dtype= is given
    check(torch.masked.sum(t(I, torch.int32), 1, mask=t(M)), rows(np.sum, I, empty=0), torch.int64)
    check(torch.masked.prod(t(M), mask=None), 0, torch.int64)
    check(torch.masked.sum(t(A), 0, dtype=torch.float64, mask=t(M)), (A * M).sum(0), torch.float64)
    # mask=None is every element; the mask broadcasts like a trailing-aligned tensor
    check(torch.masked.sum(t(A), (0, 1)), A.sum(), torch.float32)
    col = np.array([True, False, True, False])
    check(torch.masked.sum(t(A), 0, mask=t(col)), (A * col).sum(0), torch.float32)


def test_extrema_and_arg_extrema():
    check(torch.masked.amax(t(A), 1, mask=t(M)), rows(np.max, empty=-inf), torch.float32)
    check(torch.masked.amin(t(A), 1, mask=t(M)), rows(np.min, empty=inf), torch.float32)
    # integers fill with the dtype's extremes
    check(
        torch.masked.amax(t(I), 1, mask=t(M)),
        rows(np.max, I, empty=np.iinfo(np.int64).min),
        torch.int64,
        rtol=0,
    )
    # PyTorch casts masked arg-reduction indices to the input's dtype
    masked = np.where(M, A, -inf)
    check(torch.masked.argmax(t(A), 1, mask=t(M)), masked.argmax(1), torch.float32)
    check(
        torch.masked.argmin(t(A), 1, keepdim=True, mask=t(M)),
        np.where(M, A, inf).argmin(1)[:, None],
        torch.float32,
    )
    check(torch.masked.argmax(t(I), mask=None), I.argmax(), torch.int64)


def test_mean_var_std_count_masked_in_elements():
    check(torch.masked.mean(t(A), 1, mask=t(M)), rows(np.mean), torch.float32)
    check(torch.masked.mean(t(A), mask=t(M)), A[M].mean(), torch.float32)
    check(torch.masked.var(t(A), 1, mask=t(M)), rows(lambda r: r.var(ddof=1)), torch.float32)
    check(torch.masked.var(t(A), 1, False, mask=t(M)), rows(np.var), torch.float32)
    check(
        torch.masked.std(t(A), 1, correction=0, keepdim=True, mask=t(M)),
        rows(np.std)[:, None],
        torch.float32,
    )
    check(torch.masked.std(t(A), None), A.std(ddof=1), torch.float32)
    # integer inputs compute in float32
    check(torch.masked.var(t(I), 1), I.var(1, ddof=1), torch.float32)
    # more correction than elements clamps the divisor at 0
    check(torch.masked.var(t(A), 1, correction=3, mask=t(M)), [inf, inf, np.nan], torch.float32)


def test_median_logsumexp_norm():
    lower_median = lambda r: np.sort(r)[(len(r) - 1) // 2]  # noqa: E731
    check(torch.masked.median(t(A), 1, mask=t(M)), rows(lower_median), torch.float32)
    full = np.array([[True, False, True, True]] * 3)
    check(torch.masked.median(t(I), -1, mask=t(full)), rows(lower_median, I, full), torch.int64)
    check(
        torch.masked.logsumexp(t(A), 1, mask=t(M)),
        rows(lambda r: np.log(np.exp(r).sum()), empty=-inf),
        torch.float32,
    )
    check(torch.masked.norm(t(A), 2.0, 1, mask=t(M)), rows(np.linalg.norm, empty=0), torch.float32)
    check(torch.masked.norm(t(A), 1.0, mask=t(M)), np.abs(A[M]).sum(), torch.float32)
    check(
        torch.masked.norm(t(A), -inf, 1, mask=t(M)),
        rows(lambda r: np.abs(r).min(), empty=inf),
        torch.float32,
    )


def test_logaddexp_masks_each_input():
    B = A[::-1].copy()
    got = torch.masked.logaddexp(t(A), t(B), input_mask=t(M), other_mask=t(~M))
    check(got, np.logaddexp(np.where(M, A, -inf), np.where(~M, B, -inf)), torch.float32)


def test_scans_and_normalizations():
    check(torch.masked.cumsum(t(A), 1, mask=t(M)), np.cumsum(A * M, 1), torch.float32)
    check(torch.masked.cumprod(t(A), 1, mask=t(M)), np.cumprod(np.where(M, A, 1), 1), torch.float32)
    # PyTorch casts the scan back to the input's dtype when dtype= is not given
    check(torch.masked.cumsum(t(I, torch.int32), 1, mask=t(M)), np.cumsum(I * M, 1), torch.int32)
    e = np.where(M, np.exp(A), 0.0)
    with np.errstate(invalid="ignore"):
        soft = e / e.sum(1, keepdims=True)
    check(torch.masked.softmax(t(A), 1, mask=t(M)), soft, torch.float32)
    with np.errstate(divide="ignore"):
        check(torch.masked.log_softmax(t(A), 1, mask=t(M)), np.log(soft), torch.float32)
    e = np.where(M, np.exp(-A), 0.0)
    with np.errstate(invalid="ignore"):
        check(
            torch.masked.softmin(t(A), 1, dtype=torch.float64, mask=t(M)),
            e / e.sum(1, keepdims=True),
            torch.float64,
        )
    nrm = np.sqrt((A * A * M).sum(1, keepdims=True))
    check(
        torch.masked.normalize(t(A), 2.0, 1, mask=t(M)),
        A * M / np.maximum(nrm, 1e-12),
        torch.float32,
    )
    check(torch.masked.normalize(t(A), 1.0, 0, eps=100.0), A / 100.0, torch.float32)


def test_errors():
    x = t(A)
    with pytest.raises(IndexError, match="mask dimensionality higher"):
        torch.masked.sum(x, mask=t(np.ones((2, 3, 4), bool)))
    with pytest.raises(RuntimeError, match="expanded size"):
        torch.masked.sum(x, mask=t(np.ones(3, bool)))
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.masked.sum(x, 2)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        torch.masked.amax(x, (1, 1))
    with pytest.raises(ValueError, match="Could not infer output dtype"):
        torch.masked.mean(t(I))
    with pytest.raises(NotImplementedError, match="identity of amax on torch.bool"):
        torch.masked.amax(t(M), mask=t(M))
    with pytest.raises(ValueError, match="no fully masked out rows"):
        torch.masked.median(t(I), 1, mask=t(M))
    with pytest.raises(AssertionError, match="Only one of unbiased and correction"):
        torch.masked.var(x, 1, True, correction=1)
    with pytest.raises(NotImplementedError, match="logaddexp_cpu"):
        torch.masked.logaddexp(t(I), t(I))
    np.testing.assert_array_equal(x.numpy(), A)  # inputs are never modified


def test_zero_dim():
    s = t(2.5)
    check(torch.masked.amax(s, 0, keepdim=True, mask=t(False)), -inf, torch.float32)
    check(torch.masked.sum(s, mask=t(True)), 2.5, torch.float32)
    check(torch.masked.mean(s, mask=t(False)), np.nan, torch.float32)
