"""Histograms and counts: `histc`, `histogram`, `histogramdd` (with its `_histogramdd_*`
kernels) and `bincount`."""

import builtins
import collections
import math

import jax.numpy as jnp
import numpy as np

from .. import _meta
from .._dtype import c10_name
from .._tensor import Tensor
from ._kernel_helpers import is_float, is_integral
from ._registry import NONE, TI, TL, T, _return_types_repr, composite, name_return_type, op


def _concrete(*arrays) -> bool:
    """True when no array is a jax tracer, so value checks can run (eager calls)."""
    return not any(_meta.no_values(a) for a in arrays if a is not None)


def linspace_like_torch(start, end, steps, dtype):
    """PyTorch's CPU linspace: the first half steps up from `start`, the second down from
    `end`, so both ends are exact."""
    i = jnp.arange(steps, dtype=dtype)
    step = (end - start) / (steps - 1)
    half = steps // 2
    return jnp.where(i < half, start + i * step, end - (steps - 1 - i) * step).astype(dtype)


@op(promote=NONE)
def histc(input: T, bins=100, min=0, max=0):
    """Matches `torch.histc`: equal-width bins over [min, max] (the data's range if equal)."""
    if not is_float(input):
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{c10_name(input.dtype)}'"
        )
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    # Binning runs in the input dtype, rounding after each step as PyTorch's Half math does.
    x = input.reshape(-1)
    lo = jnp.asarray(min, x.dtype)
    hi = jnp.asarray(max, x.dtype)
    if min == max and x.size:
        lo, hi = jnp.min(x), jnp.max(x)
    same = lo == hi
    lo, hi = jnp.where(same, lo - 1, lo), jnp.where(same, hi + 1, hi)
    edges = linspace_like_torch(lo, hi, bins + 1, input.dtype)
    lo, hi = edges[0], edges[-1]
    inside = (x >= lo) & (x <= hi)
    pos = jnp.floor(((x - lo) * jnp.asarray(bins, x.dtype)) / (hi - lo)).astype(jnp.int64)
    pos = jnp.clip(jnp.where(pos == bins, bins - 1, pos), 0, bins - 1)
    hist = jnp.zeros((bins,), x.dtype).at[pos].add(inside.astype(x.dtype))
    return hist.astype(input.dtype)


@op(promote=NONE, method=False, name="_histogram", returns=("hist", "bin_edges"))
def _histogram(
    input: T, edges: TI = None, *, bins=None, range=None, weight: TI = None, density=False
):
    x = input.reshape(-1)
    if edges is None:
        if range is not None:
            lo, hi = (jnp.asarray(v, x.dtype) for v in range)
        elif x.size:
            lo, hi = jnp.min(x), jnp.max(x)
        else:
            lo, hi = jnp.zeros((), x.dtype), jnp.ones((), x.dtype)
        same = lo == hi  # an empty range widens to one unit, as numpy does
        lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
        edges = linspace_like_torch(lo, hi, bins + 1, x.dtype)
    nb = edges.shape[0] - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    pos = jnp.searchsorted(edges, x, side="right") - 1
    pos = jnp.clip(pos, 0, nb - 1)  # the last bin includes its right edge
    w = jnp.ones_like(x) if weight is None else weight.reshape(-1).astype(x.dtype)
    hist = jnp.zeros((nb,), x.dtype).at[pos].add(jnp.where(inside, w, jnp.zeros((), x.dtype)))
    if density:
        hist = hist / jnp.sum(hist) / jnp.diff(edges)
    return hist, edges


name_return_type(_histogram, "histogram")


@composite
def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """Matches `torch.histogram`: returns (hist, bin_edges)."""
    if input.dtype.np not in (jnp.float32, jnp.float64):
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{c10_name(input.dtype.np)}'"
        )
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the "
            "same shape as the input tensor excluding its innermost dimension"
        )
    kwargs = {} if out is None else {"out": out}
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension")
        if bins.dtype != input.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype"
            )
        return _histogram(input, bins, weight=weight, density=density, **kwargs)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
        if lo > hi:
            raise RuntimeError(
                f"torch.histogramdd: min should not exceed max, but got min "
                f"{range[0]} max {range[1]} for dimension 0"
            )
        range = (lo, hi)
    return _histogram(
        input, None, bins=int(bins), range=range, weight=weight, density=density, **kwargs
    )


@op(promote=NONE, jit=False, differentiable=False, out=False)
def bincount(input: TI, weights: TI = None, minlength=0):
    """Matches `torch.bincount`: the output length depends on the data, so this runs eagerly."""
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim != 1 or not jnp.issubdtype(input.dtype, jnp.integer):
        if input.ndim == 1 and not is_integral(input):
            raise NotImplementedError(
                f"\"bincount_cpu\" not implemented for '{c10_name(input.dtype)}'"
            )
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if input.size and int(jnp.min(input)) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    length = max(int(jnp.max(input)) + 1 if input.size else 0, minlength)
    idx = input.astype(jnp.int64)
    if weights is None:
        return jnp.zeros((length,), jnp.int64).at[idx].add(1)
    # float and double weights keep their dtype; every other dtype counts in double.
    wdt = weights.dtype if weights.dtype in (jnp.float32, jnp.float64) else jnp.float64
    return jnp.zeros((length,), wdt).at[idx].add(weights.astype(wdt))


# ---------------------------------------------------------------------------
# histogramdd


def _check_float_input(input, name="histogramdd"):
    if input.dtype not in (jnp.float32, jnp.float64):
        raise NotImplementedError(f"\"{name}\" not implemented for '{c10_name(input.dtype)}'")


def _check_weight(input, weight):
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(
            f"torch.histogramdd: if weight tensor is provided it should have the "
            f"same shape as the input tensor excluding its innermost dimension, "
            f"but got input with shape {list(input.shape)} and weight with shape "
            f"{list(weight.shape)}"
        )


@op(
    name="_histogramdd_bin_edges",
    publish=True,
    promote=NONE,
    method=False,
    out=False,
    differentiable=False,
)
def _histogramdd_bin_edges(input: TI, bins, *, range=None, weight: TI = None, density=False):
    """Matches `torch._histogramdd_bin_edges`: `bins[d] + 1` equal-width edges per dim."""
    _check_float_input(input)
    _check_weight(input, weight)
    n_dims = input.shape[-1] if input.ndim else 1
    if len(bins) != n_dims:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    if range is not None and len(range) != 2 * n_dims:
        raise RuntimeError(
            f"torch.histogramdd: for a {n_dims}-dimensional histogram range "
            f"should have {2 * n_dims} elements, but got {len(range)}"
        )
    for d, b in enumerate(bins):
        if b <= 0:
            raise RuntimeError(
                f"torch.histogram(): bins must be > 0, but got {b} for dimension {d}"
            )
        if range is not None and range[2 * d] > range[2 * d + 1]:
            raise RuntimeError(
                f"torch.histogramdd: min should not exceed max, but got min "
                f"{range[2 * d]} max {range[2 * d + 1]} for dimension {d}"
            )
    points = input.reshape(-1, n_dims)
    edges = []
    for d, b in enumerate(bins):
        if range is not None:
            lo, hi = (jnp.asarray(v, input.dtype) for v in range[2 * d : 2 * d + 2])
        elif points.shape[0]:
            lo, hi = jnp.min(points[:, d]), jnp.max(points[:, d])
        else:  # no data: PyTorch's default range is [0, 1]
            lo, hi = jnp.zeros((), input.dtype), jnp.ones((), input.dtype)
        same = lo == hi  # a degenerate range widens by half a unit each way
        lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
        edges.append(linspace_like_torch(lo, hi, b + 1, input.dtype))
    return tuple(edges)


@op(
    name="_histogramdd_from_bin_tensors",
    publish=True,
    promote=NONE,
    method=False,
    out=False,
    differentiable=False,
)
def _histogramdd_from_bin_tensors(input: TI, bins: TL, *, weight: TI = None, density=False):
    """Matches `torch._histogramdd_from_bin_tensors`: counts per cell of the given edges."""
    _check_float_input(input)
    _check_weight(input, weight)
    n_dims = input.shape[-1] if input.ndim else 1
    if len(bins) != n_dims:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    for d, e in enumerate(bins):
        if e.ndim != 1:
            raise RuntimeError(
                f"torch.histogramdd: bins tensor should have one dimension, but "
                f"got {e.ndim} dimensions in the bins tensor for dimension {d}"
            )
        if e.dtype != input.dtype:
            raise RuntimeError(
                f"torch.histogramdd: input tensor and bins tensors should have "
                f"the same dtype, but got input with dtype "
                f"{_torch_scalar_name(input.dtype)} and bins "
                f"for dimension {d} with dtype "
                f"{_torch_scalar_name(e.dtype)}"
            )
    counts = tuple(e.shape[0] - 1 for e in bins)
    if n_dims == 0:
        return jnp.zeros((), input.dtype)
    points = input.reshape(-1, n_dims)
    inside = jnp.ones((points.shape[0],), bool)
    flat = jnp.zeros((points.shape[0],), jnp.int64)
    for d, e in enumerate(bins):
        x = points[:, d]
        inside = inside & (x >= e[0]) & (x <= e[-1])
        # The last bin is closed on the right: a value equal to the last edge lands in it.
        pos = jnp.clip(jnp.searchsorted(e, x, side="right") - 1, 0, counts[d] - 1)
        flat = flat * counts[d] + pos
    w = (
        jnp.ones((points.shape[0],), input.dtype)
        if weight is None
        else weight.reshape(-1).astype(input.dtype)
    )
    w = jnp.where(inside, w, jnp.zeros((), input.dtype))
    hist = jnp.zeros((math.prod(counts),), input.dtype).at[flat].add(w).reshape(counts)
    if density:
        hist = hist / jnp.sum(hist)
        for d, e in enumerate(bins):
            shape = [1] * n_dims
            shape[d] = counts[d]
            hist = hist / jnp.diff(e).reshape(shape)
    return hist


def _torch_scalar_name(np_dtype):
    """The C++ scalar name PyTorch prints in histogramdd's dtype error ("float", "double")."""
    return {
        "float32": "float",
        "float64": "double",
        "float16": "c10::Half",
        "bfloat16": "c10::BFloat16",
    }.get(jnp.dtype(np_dtype).name, jnp.dtype(np_dtype).name)


@composite(name="_histogramdd_from_bin_cts", method=False, publish=True)
def _histogramdd_from_bin_cts(input, bins, *, range=None, weight=None, density=False):
    """Matches `torch._histogramdd_from_bin_cts`."""
    edges = _histogramdd_bin_edges(input, bins, range=range, weight=weight, density=density)
    return _histogramdd_from_bin_tensors(input, edges, weight=weight, density=density)


# torch.return_types.histogramdd: `returns=` names only an op's own result, and histogramdd
# is a composite of two kernels, so its named tuple is built here the same way.
_HistogramddResult = collections.namedtuple("histogramdd", ("hist", "bin_edges"))
_HistogramddResult.__module__ = "torch.return_types"
_HistogramddResult.__repr__ = _return_types_repr


@composite(method=False)
def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):
    """Matches `torch.histogramdd`: returns (hist, bin_edges) with one edge tensor per dim."""
    _check_float_input(input._array)
    n_dims = input.shape[-1] if input.ndim else 1
    if range is not None:
        range = tuple(float(v) for v in range)
    if isinstance(bins, int):
        bins = [bins] * n_dims
    if builtins.all(isinstance(b, Tensor) for b in bins) and len(bins):
        edges = tuple(bins)
    else:
        bins = tuple(int(b) for b in bins)
        edges = _histogramdd_bin_edges(input, bins, range=range, weight=weight, density=density)
        if range is None and _concrete(input._array):
            pts = np.asarray(input._array).reshape(-1, n_dims) if n_dims else None
            for d in builtins.range(n_dims if pts.shape[0] else 0):
                lo, hi = pts[:, d].min(), pts[:, d].max()
                if not (np.isfinite(lo) and np.isfinite(hi)):
                    raise RuntimeError(
                        f"torch.histogramdd: dimension {d}'s range [{lo:g}, {hi:g}] is not finite"
                    )
    hist = _histogramdd_from_bin_tensors(input, edges, weight=weight, density=density)
    if out is not None:
        out_hist, out_edges = out
        out_hist.resize_(hist.shape).copy_(hist)
        for o, e in zip(out_edges, edges):
            o.resize_(e.shape).copy_(e)
        return _HistogramddResult(out_hist, tuple(out_edges))
    return _HistogramddResult(hist, tuple(edges))
