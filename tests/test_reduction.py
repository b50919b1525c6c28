"""Reductions, scans and statistics: values from numpy/mathematics, torch's dtypes and errors."""

import math

import numpy as np
import pytest

import jtorch as torch
from tests.helpers import close

nan, inf = math.nan, math.inf
A = np.array([[3.0, -1.0, 2.0, 5.0], [0.5, 4.0, -2.0, 1.0], [2.0, 2.0, 7.0, -3.0]], np.float32)
I = np.array([[3, 1, 2, 1], [0, 4, 4, 1], [2, 2, 7, 3]], np.int64)


def t(a, dtype=None):
    return torch.tensor(a, dtype=dtype)


def check(result, expected, dtype, rtol=1e-6, atol=1e-6):
    assert result.dtype is dtype, (result.dtype, dtype)
    exp = np.asarray(expected)
    got = np.asarray(result.numpy())
    assert got.shape == exp.shape, (got.shape, exp.shape)
    np.testing.assert_allclose(
        got.astype(exp.dtype if exp.dtype.kind == "c" else np.float64), exp, rtol=rtol, atol=atol
    )


# ---------------------------------------------------------------------------
# Sums, means, products


def test_sum_dims_keepdim_and_dtypes():
    check(torch.sum(t(A)), A.sum(), torch.float32, rtol=1e-5)
    check(t(A).sum(1), A.sum(1), torch.float32, rtol=1e-5)
    check(torch.sum(t(A), (0, 1), keepdim=True), A.sum(keepdims=True), torch.float32, rtol=1e-5)
    check(torch.sum(t(A), dim=-1, keepdim=True), A.sum(-1, keepdims=True), torch.float32)
    check(torch.sum(t(I)), I.sum(), torch.int64)
    check(torch.sum(t([True, True, False])), 2, torch.int64)  # bool sums to int64
    check(torch.sum(t(I, torch.uint8)), I.sum(), torch.int64)
    check(torch.sum(t(A), dtype=torch.float64), A.astype(np.float64).sum(), torch.float64)
    check(torch.sum(t(3.0), 0), 3.0, torch.float32)  # 0-d accepts dim 0
    check(torch.sum(torch.zeros(0, 3), 0), np.zeros(3), torch.float32)


def test_sum_out_and_errors():
    out = torch.empty(4)
    r = torch.sum(t(A), 0, out=out)
    assert r is out
    check(out, A.sum(0), torch.float32, rtol=1e-5)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.sum(t(A), 2)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        torch.sum(t(A), (0, 0))


def test_mean_nanmean_nansum():
    check(torch.mean(t(A), 0), A.mean(0), torch.float32)
    check(t(A).mean(), A.mean(), torch.float32)
    check(torch.mean(t(I), dtype=torch.float64), I.mean(), torch.float64)
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        torch.mean(t(I))
    x = np.array([1.0, nan, 3.0, nan], np.float32)
    check(torch.nanmean(t(x)), 2.0, torch.float32)
    check(torch.nansum(t(x)), 4.0, torch.float32)
    check(torch.nansum(t(I)), I.sum(), torch.int64)
    with pytest.raises(RuntimeError, match="nanmean"):
        torch.nanmean(t(I))


def test_prod_logical_count():
    check(torch.prod(t(A), 1), A.prod(1), torch.float32, rtol=1e-5)
    check(torch.prod(t(I)), I.prod(), torch.int64)
    check(torch.prod(t([True, True])), 1, torch.int64)
    b = np.array([[1, 0, 2], [3, 4, 5]])
    assert torch.all(t(b)).item() is False
    check(torch.all(t(b), 1), [False, True], torch.bool)
    check(torch.any(t(b), 0), [True, True, True], torch.bool)
    check(torch.all(t(b, torch.uint8)), 0, torch.uint8)  # uint8 stays uint8
    check(torch.count_nonzero(t(b)), 5, torch.int64)
    check(torch.count_nonzero(t(b), (0, 1)), 5, torch.int64)
    check(torch.count_nonzero(t(b), dim=0), [2, 1, 2], torch.int64)


# ---------------------------------------------------------------------------
# Extrema


def test_max_min_overloads():
    check(torch.max(t(A)), 7.0, torch.float32)
    r = torch.max(t(A), 1)
    assert type(r).__name__ == "max" and r._fields == ("values", "indices")
    check(r.values, A.max(1), torch.float32)
    check(r.indices, A.argmax(1), torch.int64)
    assert repr(r).startswith("torch.return_types.max(")
    v, i = t(A).min(dim=0, keepdim=True)
    check(v, A.min(0, keepdims=True), torch.float32)
    check(i, A.argmin(0)[None], torch.int64)
    check(torch.max(t(A), t(A[::-1].copy())), np.maximum(A, A[::-1]), torch.float32)
    check(torch.min(t([1, 5]), other=t([3, 2])), [1, 2], torch.int64)
    # all-equal: the first index
    check(torch.argmax(t([2.0, 2.0, 2.0])), 0, torch.int64)
    check(torch.argmax(t(A), 1, keepdim=True), A.argmax(1)[:, None], torch.int64)
    check(torch.argmin(t(A)), A.argmin(), torch.int64)
    check(torch.argmax(t(A), keepdim=True), [[A.argmax()]], torch.int64)


def test_max_with_nan_and_out():
    x = t([1.0, nan, 3.0])
    assert math.isnan(torch.max(x).item())
    assert torch.argmax(x).item() == 1
    vals, idx = torch.empty(0), torch.empty(0, dtype=torch.int64)
    torch.max(t(A), 0, out=(vals, idx))
    check(vals, A.max(0), torch.float32)
    check(idx, A.argmax(0), torch.int64)


def test_max_empty_errors():
    e = torch.empty(0, 3)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        torch.max(e)
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        torch.max(e, 0)
    assert torch.max(e, 1).values.shape == (0,)
    with pytest.raises(IndexError, match="argmax"):
        torch.argmax(e)
    with pytest.raises(RuntimeError, match="amax"):
        torch.amax(e)


def test_amax_amin_aminmax():
    check(torch.amax(t(A), (0, 1)), A.max(), torch.float32)
    check(torch.amin(t(A), 1, keepdim=True), A.min(1, keepdims=True), torch.float32)
    check(torch.amax(t([True, False])), True, torch.bool)
    r = torch.aminmax(t(I), dim=1)
    assert type(r).__name__ == "aminmax" and r._fields == ("min", "max")
    check(r.min, I.min(1), torch.int64)
    check(r.max, I.max(1), torch.int64)
    check(torch.aminmax(t(A)).max, A.max(), torch.float32)


# ---------------------------------------------------------------------------
# logsumexp and norms


def test_logsumexp():
    ref = np.log(np.exp(A.astype(np.float64)).sum(1))
    check(torch.logsumexp(t(A), 1), ref, torch.float32, rtol=1e-5)
    check(torch.logsumexp(t(I), (0, 1)), np.log(np.exp(I).sum()), torch.float32, rtol=1e-5)
    check(torch.logsumexp(t([-inf, -inf]), 0), -inf, torch.float32)
    check(torch.logsumexp(t([inf, 1.0]), 0), inf, torch.float32)
    check(torch.logsumexp(t([1000.0, 1000.0]), 0), 1000 + math.log(2), torch.float32)


def test_norm_and_dist():
    check(torch.norm(t(A)), np.linalg.norm(A), torch.float32, rtol=1e-5)
    check(torch.norm(t(A), 1, 1), np.abs(A).sum(1), torch.float32)
    check(torch.norm(t(A), inf, 0, keepdim=True), np.abs(A).max(0, keepdims=True), torch.float32)
    check(torch.norm(t(A), 3), (np.abs(A) ** 3).sum() ** (1 / 3), torch.float32, rtol=1e-5)
    check(torch.norm(t(A), 0), 12.0, torch.float32)
    check(torch.norm(t(A), "nuc"), np.linalg.norm(A, "nuc"), torch.float32, rtol=1e-5)
    check(torch.norm(t([3 + 4j], torch.complex64)), 5.0, torch.float32)
    with pytest.raises(RuntimeError, match="floating point or complex"):
        torch.norm(t(I))
    check(torch.dist(t(A[0]), t(A[1])), np.linalg.norm(A[0] - A[1]), torch.float32, rtol=1e-5)
    check(torch.dist(t(A[0]), t(A[1]), 1), np.abs(A[0] - A[1]).sum(), torch.float32)


def test_renorm_inplace():
    x = t(A)
    norms = np.linalg.norm(A, axis=1, keepdims=True)
    expected = np.where(norms > 5, A * 5 / (norms + 1e-7), A)
    check(torch.renorm(x, 2, 0, 5), expected, torch.float32, rtol=1e-5)
    r = x.renorm_(2, 0, 5)
    assert r is x
    check(x, expected, torch.float32, rtol=1e-5)
    with pytest.raises(RuntimeError, match="maxnorm"):
        x.renorm_(2, 0, -1)
    check(x, expected, torch.float32, rtol=1e-5)  # unchanged after error


# ---------------------------------------------------------------------------
# Scans


def test_cumsum_cumprod():
    check(torch.cumsum(t(A), 1), A.cumsum(1), torch.float32, rtol=1e-5)
    check(torch.cumsum(t([True, True, False]), 0), [1, 2, 2], torch.int64)
    check(torch.cumprod(t(I, torch.int8), 0), I.cumprod(0), torch.int64)
    check(torch.cumsum(t(I), 1, dtype=torch.float64), I.cumsum(1), torch.float64)
    x = t(A)
    x.cumsum_(0)
    check(x, A.cumsum(0), torch.float32, rtol=1e-5)
    check(torch.cumsum(t(2.0), 0), 2.0, torch.float32)


def test_cummax_cummin_ties_and_nan():
    r = torch.cummax(t([1.0, 3.0, 3.0, 2.0, nan, 5.0, nan]), 0)
    assert type(r).__name__ == "cummax"
    np.testing.assert_array_equal(r.values.numpy(), [1, 3, 3, 3, nan, nan, nan])
    np.testing.assert_array_equal(r.indices.numpy(), [0, 1, 2, 2, 4, 4, 6])  # ties: last index
    r = torch.cummin(t([[3, 1, 1, 2]]), 1)
    np.testing.assert_array_equal(r.values.numpy(), [[3, 1, 1, 1]])
    np.testing.assert_array_equal(r.indices.numpy(), [[0, 1, 2, 2]])


def test_logcumsumexp():
    ref = np.logaddexp.accumulate(A.astype(np.float64), axis=1)
    check(torch.logcumsumexp(t(A), 1), ref, torch.float32, rtol=1e-5)
    with pytest.raises(NotImplementedError):
        torch.logcumsumexp(t(I), 0)


# ---------------------------------------------------------------------------
# Statistics


def test_var_std_forms():
    check(torch.var(t(A)), A.var(ddof=1), torch.float32, rtol=1e-5)
    check(torch.var(t(A), 1), A.var(1, ddof=1), torch.float32, rtol=1e-5)
    check(torch.var(t(A), 1, unbiased=False), A.var(1), torch.float32, rtol=1e-5)
    check(torch.var(t(A), False), A.var(), torch.float32, rtol=1e-5)  # var(input, unbiased)
    check(torch.std(t(A), 0, True, True), A.std(0, ddof=1, keepdims=True), torch.float32, rtol=1e-5)
    check(
        t(A).std(dim=(0, 1), correction=2),
        np.sqrt(((A - A.mean()) ** 2).sum() / 10),
        torch.float32,
        rtol=1e-5,
    )
    assert math.isnan(torch.var(t([1.0])).item())  # N - correction == 0
    v, m = torch.var_mean(t(A), 1)
    check(v, A.var(1, ddof=1), torch.float32, rtol=1e-5)
    check(m, A.mean(1), torch.float32, rtol=1e-5)
    r = torch.std_mean(t(A), correction=0)
    assert type(r) is tuple
    check(r[0], A.std(), torch.float32, rtol=1e-5)
    check(torch.var(t([1 + 1j, 2], torch.complex64)), 1.0, torch.float32)
    with pytest.raises(RuntimeError, match="floating point and complex"):
        torch.var(t(I))


def test_median_nanmedian_mode():
    check(torch.median(t([3.0, 1.0, 1.0, 2.0, 2.0, 3.0, 0.0, 4.0])), 2.0, torch.float32)  # lower
    r = torch.median(t(A), 1)
    assert type(r).__name__ == "median"
    srt = np.sort(A, 1)[:, 1]
    check(r.values, srt, torch.float32)
    np.testing.assert_array_equal(A[np.arange(3), r.indices.numpy()], srt)
    r = torch.median(t([3.0, 1.0, nan, 2.0]), 0)
    assert math.isnan(r.values.item()) and r.indices.item() == 2
    r = torch.nanmedian(t([3.0, 1.0, nan, 2.0]), 0)
    assert r.values.item() == 2.0 and r.indices.item() == 3
    assert math.isnan(torch.median(torch.empty(0)).item())
    r = torch.mode(t([3, 1, 1, 2, 2, 3, 0]))
    assert (r.values.item(), r.indices.item()) == (1, 2)  # smallest, last index
    r = torch.mode(t([[3, 1, 1, 2, 2, 3, 0], [1, 1, 1, 1, 2, 2, 2]]), 1, keepdim=True)
    np.testing.assert_array_equal(r.values.numpy(), [[1], [1]])
    np.testing.assert_array_equal(r.indices.numpy(), [[2], [3]])
    with pytest.raises(IndexError, match="non-zero size"):
        torch.median(torch.empty(0, 3), 0)


def test_quantile():
    x = np.array([[1.0, 7.0, 3.0, 4.0], [2.0, 0.0, 5.0, 9.0]], np.float32)
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        check(
            torch.quantile(t(x), 0.4, dim=1, interpolation=interp),
            np.quantile(x, 0.4, axis=1, method=interp),
            torch.float32,
            rtol=1e-6,
        )
    q = np.array([0.25, 0.5], np.float32)
    check(
        torch.quantile(t(x), t(q), dim=0, keepdim=True),
        np.quantile(x, q, axis=0, keepdims=True),
        torch.float32,
        rtol=1e-6,
    )
    check(torch.quantile(t(x), 0.5), np.quantile(x, 0.5), torch.float32)
    y = np.array([1.0, nan, 3.0], np.float32)
    assert math.isnan(torch.quantile(t(y), 0.5).item())
    check(torch.nanquantile(t(y), 0.5), 2.0, torch.float32)
    with pytest.raises(RuntimeError, match="q must be in the range"):
        torch.quantile(t(x), 1.5)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.quantile(t(x), t([0.5], torch.float64))
    with pytest.raises(RuntimeError, match="float or double"):
        torch.quantile(t(I), 0.5)


def test_cov_corrcoef():
    x = np.array([[1.0, 2.0, 4.0, 7.0], [0.5, 0.0, 3.0, 1.0]], np.float32)
    check(torch.cov(t(x)), np.cov(x), torch.float32, rtol=1e-5)
    check(torch.cov(t(x), correction=0), np.cov(x, bias=True), torch.float32, rtol=1e-5)
    fw, aw = np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 1.0], np.float32)
    check(
        torch.cov(t(x), fweights=t(fw), aweights=t(aw)),
        np.cov(x, fweights=fw, aweights=aw),
        torch.float32,
        rtol=1e-5,
    )
    check(torch.cov(t([1, 2, 4])), np.cov([1, 2, 4]), torch.float32, rtol=1e-5)  # ints: float
    check(torch.corrcoef(t(x)), np.corrcoef(x), torch.float32, rtol=1e-5)


def test_histc_histogram_bincount():
    x = np.array([1.0, 2.0, 3.5, 5.0, 7.0], np.float32)
    check(torch.histc(t(x), 4, min=2, max=5), [1, 0, 1, 1], torch.float32)
    check(torch.histc(t(x), 4), [2, 1, 1, 1], torch.float32)
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(t(x), 3, min=3, max=1)
    hist, edges = np.histogram(x, 3)
    r = torch.histogram(t(x), 3)
    assert type(r).__name__ == "histogram" and r._fields == ("hist", "bin_edges")
    check(r.hist, hist, torch.float32)
    check(r.bin_edges, edges, torch.float32, rtol=1e-6)
    w = np.array([1.0, 2.0, 3.0, 1.0, 1.0], np.float32)
    hist, _ = np.histogram(x, [0.0, 2.0, 6.0], weights=w, density=True)
    check(
        torch.histogram(t(x), t([0.0, 2.0, 6.0]), weight=t(w), density=True).hist,
        hist,
        torch.float32,
        rtol=1e-6,
    )
    check(torch.bincount(t([0, 1, 1, 4])), [1, 2, 0, 0, 1], torch.int64)
    check(torch.bincount(t([0, 1, 1]), minlength=4), [1, 2, 0, 0], torch.int64)
    check(torch.bincount(t([0, 1, 1]), t([1.0, 2.0, 3.0])), [1, 5], torch.float32)
    check(torch.bincount(t([0, 1]), t([1, 2])), [1, 2], torch.float64)
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.bincount(t([-1]))


# ---------------------------------------------------------------------------
# Differences and integrals


def test_diff():
    x = np.array([1, 4, 9, 16, 25])
    check(torch.diff(t(x)), np.diff(x), torch.int64)
    check(torch.diff(t(x), n=2), np.diff(x, 2), torch.int64)
    check(torch.diff(t(A), dim=0), np.diff(A, axis=0), torch.float32)
    check(torch.diff(t(x), prepend=t([0.5])), np.diff(np.r_[0.5, x]), torch.float32)
    check(torch.diff(t([True, False, False])), [True, False], torch.bool)
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        torch.diff(t(1))


def test_gradient():
    y = np.array([1.0, 4.0, 9.0, 16.0, 25.0], np.float32)
    (g,) = torch.gradient(t(y))
    check(g, np.gradient(y), torch.float32)
    (g,) = torch.gradient(t(y), spacing=2.0, edge_order=2)
    check(g, np.gradient(y, 2.0, edge_order=2), torch.float32, rtol=1e-5)
    xs = np.array([0.0, 1.0, 1.5, 3.5, 4.0], np.float32)
    (g,) = torch.gradient(t(y), spacing=(t(xs),))
    check(g, np.gradient(y, xs), torch.float32, rtol=1e-5)
    gs = torch.gradient(t(A))
    for g, ref in zip(gs, np.gradient(A)):
        check(g, ref, torch.float32, rtol=1e-5)
    (g,) = torch.gradient(t([1, 4, 9, 16]))
    check(g, [3, 4, 6, 7], torch.float32)  # ints give floats


def test_trapezoid_family():
    y = np.array([1, 4, 9, 16])
    check(torch.trapezoid(t(y)), 21.5, torch.float32)
    check(torch.trapezoid(t(y), dx=2), 43.0, torch.float32)
    check(torch.trapezoid(t(y), t([1, 2, 4, 5])), 28.0, torch.float32)
    check(torch.trapz(t(A)), np.trapezoid(A, axis=-1), torch.float32, rtol=1e-5)
    check(torch.cumulative_trapezoid(t(y)), [2.5, 9.0, 21.5], torch.float32)
    check(
        torch.cumulative_trapezoid(t(A), t([0.0, 1.0, 3.0]), dim=0),
        np.cumsum((A[1:] + A[:-1]) * np.array([1.0, 2.0])[:, None] / 2, 0),
        torch.float32,
        rtol=1e-5,
    )


# ---------------------------------------------------------------------------
# _segment_reduce

X6 = torch.arange(1.0, 7.0)


@pytest.mark.parametrize(
    "reduce, plain, with_initial",
    [
        ("sum", [3, 0, 12, 6], [13, 10, 22, 16]),
        ("prod", [2, 1, 60, 6], [20, 10, 600, 60]),
        ("max", [2, -math.inf, 5, 6], [10, 10, 10, 10]),
        ("min", [1, math.inf, 3, 6], [1, 10, 3, 6]),
        ("mean", [1.5, math.nan, 4, 6], [6.5, 10, 22 / 3, 16]),
    ],
)
def test_segment_reduce_lengths(reduce, plain, with_initial):
    lengths = torch.tensor([2, 0, 3, 1])
    close(torch._segment_reduce(X6, reduce, lengths=lengths), plain)
    close(torch.segment_reduce(X6, reduce, lengths=lengths, initial=10), with_initial)


def test_segment_reduce_offsets_axis_and_errors():
    close(torch._segment_reduce(X6, "sum", offsets=torch.tensor([1, 2, 5]), unsafe=True), [2, 12])
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
