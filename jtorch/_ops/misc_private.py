"""Assorted ops that PyTorch's OpInfo database tests under private or aten-level names.

`empty_permuted`, `histogramdd` (with its `_histogramdd_*` kernels), `_chunk_cat`,
`_segment_reduce` (public alias `segment_reduce`), `_softmax_backward_data`,
`_unsafe_masked_index`, `_unsafe_masked_index_put_accumulate` and
`native_dropout_backward` (an aten op PyTorch does not publish as `torch.*`; jtorch does).
"""

from __future__ import annotations

import builtins
import collections
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _meta
from .._tensor import Tensor, wrap_dim
from .._dtype import c10_name
from ._registry import DEFAULT, NONE, TI, TL, T, _return_types_repr, composite, op
from .creation import empty

from .statistics import linspace_like_torch
from .views import permute, shape_arg


def _concrete(*arrays) -> bool:
    """True when no array is a jax tracer, so value checks can run (eager calls)."""
    return not any(_meta.no_values(a) for a in arrays if a is not None)


# ---------------------------------------------------------------------------
# empty_permuted


@composite(method=False)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """Matches `torch.empty_permuted`: dims laid out in memory in `physical_layout` order.

    The result is a permuted view of a contiguous tensor of the physical shape, so `stride()`
    reports what PyTorch reports; unlike PyTorch's, its `_base` is that tensor.
    """
    size = shape_arg((size,))
    physical_layout = tuple(physical_layout)
    n = len(size)
    if len(physical_layout) != n:
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {n} is not equal to "
                           f"len(physical_layout) = {len(physical_layout)}")
    seen = set()
    for i, d in enumerate(physical_layout):
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, "
                               f"but got {d} at index {i}).  NB: negative dims not currently "
                               f"supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    inverse = [0] * n
    for i, d in enumerate(physical_layout):
        inverse[d] = i
    base = empty(*[size[d] for d in physical_layout], dtype=dtype, device=device)
    t = permute(base, *inverse) if n else base
    t.requires_grad = requires_grad
    return t


# ---------------------------------------------------------------------------
# histogramdd


def _check_float_input(input, name="histogramdd"):
    if input.dtype not in (jnp.float32, jnp.float64):
        raise NotImplementedError(f'"{name}" not implemented for \'{c10_name(input.dtype)}\'')


def _check_weight(input, weight):
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the "
                           f"same shape as the input tensor excluding its innermost dimension, "
                           f"but got input with shape {list(input.shape)} and weight with shape "
                           f"{list(weight.shape)}")


@op(name="_histogramdd_bin_edges", publish=True, promote=NONE, method=False, out=False,
    differentiable=False)
def _histogramdd_bin_edges(input: TI, bins, *, range=None, weight: TI = None, density=False):
    """Matches `torch._histogramdd_bin_edges`: `bins[d] + 1` equal-width edges per dim."""
    _check_float_input(input)
    _check_weight(input, weight)
    n_dims = input.shape[-1] if input.ndim else 1
    if len(bins) != n_dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None and len(range) != 2 * n_dims:
        raise RuntimeError(f"torch.histogramdd: for a {n_dims}-dimensional histogram range "
                           f"should have {2 * n_dims} elements, but got {len(range)}")
    for d, b in enumerate(bins):
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for "
                               f"dimension {d}")
        if range is not None and range[2 * d] > range[2 * d + 1]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{range[2 * d]} max {range[2 * d + 1]} for dimension {d}")
    points = input.reshape(-1, n_dims)
    edges = []
    for d, b in enumerate(bins):
        if range is not None:
            lo, hi = (jnp.asarray(v, input.dtype) for v in range[2 * d:2 * d + 2])
        elif points.shape[0]:
            lo, hi = jnp.min(points[:, d]), jnp.max(points[:, d])
        else:  # no data: PyTorch's default range is [0, 1]
            lo, hi = jnp.zeros((), input.dtype), jnp.ones((), input.dtype)
        same = lo == hi  # a degenerate range widens by half a unit each way
        lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
        edges.append(linspace_like_torch(lo, hi, b + 1, input.dtype))
    return tuple(edges)


@op(name="_histogramdd_from_bin_tensors", publish=True, promote=NONE, method=False, out=False,
    differentiable=False)
def _histogramdd_from_bin_tensors(input: TI, bins: TL, *, weight: TI = None, density=False):
    """Matches `torch._histogramdd_from_bin_tensors`: counts per cell of the given edges."""
    _check_float_input(input)
    _check_weight(input, weight)
    n_dims = input.shape[-1] if input.ndim else 1
    if len(bins) != n_dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    for d, e in enumerate(bins):
        if e.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {e.ndim} dimensions in the bins tensor for dimension {d}")
        if e.dtype != input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                               f"the same dtype, but got input with dtype "
                               f"{_torch_scalar_name(input.dtype)} and bins "
                               f"for dimension {d} with dtype "
                               f"{_torch_scalar_name(e.dtype)}")
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
    w = (jnp.ones((points.shape[0],), input.dtype) if weight is None
         else weight.reshape(-1).astype(input.dtype))
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
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16"}.get(jnp.dtype(np_dtype).name, jnp.dtype(np_dtype).name)


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
        edges = _histogramdd_bin_edges(input, bins, range=range, weight=weight,
                                       density=density)
        if range is None and _concrete(input._array):
            pts = np.asarray(input._array).reshape(-1, n_dims) if n_dims else None
            for d in builtins.range(n_dims if pts.shape[0] else 0):
                lo, hi = pts[:, d].min(), pts[:, d].max()
                if not (np.isfinite(lo) and np.isfinite(hi)):
                    raise RuntimeError(f"torch.histogramdd: dimension {d}'s range "
                                       f"[{lo:g}, {hi:g}] is not finite")
    hist = _histogramdd_from_bin_tensors(input, edges, weight=weight, density=density)
    if out is not None:
        out_hist, out_edges = out
        out_hist.resize_(hist.shape).copy_(hist)
        for o, e in zip(out_edges, edges):
            o.resize_(e.shape).copy_(e)
        return _HistogramddResult(out_hist, tuple(out_edges))
    return _HistogramddResult(hist, tuple(edges))


# ---------------------------------------------------------------------------
# _chunk_cat


@op(name="_chunk_cat", publish=True, promote=NONE, method=False, differentiable=False)
def _chunk_cat(tensors: TL, dim, num_chunks):
    """Matches `torch._chunk_cat`: each tensor, zero-padded along `dim` to a multiple of
    `num_chunks`, is split into `num_chunks` chunks (flattened past `dim`), and chunk i of
    every tensor is concatenated into row i of the result."""
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    if builtins.any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
    ndims = {t.ndim for t in tensors}
    if len(ndims) > 1:
        if dim < 0:
            raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have "
                               "different ndims")
        if builtins.any(dim >= t.ndim for t in tensors):
            raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    else:
        dim = wrap_dim(dim, tensors[0].ndim)
    lead = tuple(tensors[0].shape[:dim])
    if builtins.any(tuple(t.shape[:dim]) != lead for t in tensors):
        raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all "
                           "tensors")
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    if builtins.any(t.size == 0 for t in tensors):
        raise RuntimeError("_chunk_cat expects non-empty tensor")
    parts = []
    for t in tensors:
        per_chunk = -(-t.shape[dim] // num_chunks)
        pad = [(0, 0)] * t.ndim
        pad[dim] = (0, per_chunk * num_chunks - t.shape[dim])
        t = jnp.pad(t, pad)
        parts.append(t.reshape(lead + (num_chunks, -1)))
    return jnp.concatenate(parts, axis=dim + 1)


# ---------------------------------------------------------------------------
# _segment_reduce


_SEGMENT_REDUCTIONS = ("sum", "prod", "mean", "max", "min")


@op(name="_segment_reduce_kernel", promote=NONE, method=False, out=False)
def _segment_reduce_kernel(data: TI, bounds: TI, reduce, axis, initial, from_lengths):
    # Traceable: each segment is a mask over the reduced axis (segments x axis length),
    # so data-dependent lengths never decide a shape.
    if from_lengths:
        ends = jnp.cumsum(bounds, axis=-1)
        starts = ends - bounds
    else:
        starts, ends = bounds[..., :-1], bounds[..., 1:]
    n = data.shape[axis]
    j = jnp.arange(n)
    mask = (j >= starts[..., None]) & (j < ends[..., None])          # (B..., S, L)
    mask = mask.reshape(mask.shape + (1,) * (data.ndim - axis - 1))  # (B..., S, L, R...)
    x = jnp.expand_dims(data, axis)                                   # (B..., 1, L, R...)
    red = axis + 1
    dt = data.dtype
    count = jnp.sum(mask, axis=red)
    has_init = initial is not None
    init = jnp.asarray(initial if has_init else 0, dt)
    if reduce in ("sum", "mean", "prod") and dt in (jnp.float16, jnp.bfloat16):
        # PyTorch's CPU kernel accumulates one element at a time in the data's dtype, from the
        # initial value; in 16-bit floats that rounding shows, so it is reproduced by a scan.
        combine = jnp.multiply if reduce == "prod" else jnp.add
        start = init if has_init else jnp.asarray(1 if reduce == "prod" else 0, dt)
        out_shape = jnp.broadcast_shapes(mask.shape, x.shape)
        out_shape = out_shape[:red] + out_shape[red + 1:]

        def step(acc, xm):
            xj, mj = xm
            return jnp.where(mj, combine(acc, xj), acc), None

        acc, _ = jax.lax.scan(step, jnp.full(out_shape, start, dt),
                              (jnp.moveaxis(x, red, 0), jnp.moveaxis(mask, red, 0)))
        if reduce != "mean":
            return acc
        empty_value = init if has_init else jnp.asarray(jnp.nan, dt)
        return jnp.where(count == 0, empty_value, acc / jnp.maximum(count, 1).astype(dt))
    if reduce in ("sum", "mean"):
        total = jnp.sum(jnp.where(mask, x, jnp.zeros((), dt)), axis=red) + init
        if reduce == "sum":
            return total
        # An empty segment's mean is the initial value, or nan (0 / 0) without one.
        empty_value = init if has_init else jnp.asarray(jnp.nan, dt)
        return jnp.where(count == 0, empty_value, total / jnp.maximum(count, 1).astype(dt))
    if reduce == "prod":
        prod = jnp.prod(jnp.where(mask, x, jnp.ones((), dt)), axis=red)
        return prod * init if has_init else prod
    fill = jnp.asarray(-jnp.inf if reduce == "max" else jnp.inf, dt)
    fn, pair = (jnp.max, jnp.maximum) if reduce == "max" else (jnp.min, jnp.minimum)
    out = fn(jnp.where(mask, x, fill), axis=red)
    return pair(out, init) if has_init else out


@composite(name="_segment_reduce", method=False, aliases=("segment_reduce",), publish=True)
def _segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                    unsafe=False, initial=None):
    """Matches `torch._segment_reduce` / `torch.segment_reduce` (lengths or offsets form).

    Offsets win when both are given, as in PyTorch. Value checks (negative lengths, rows not
    summing to the axis size) run on eager calls unless `unsafe`; a traced call skips them.
    """
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{c10_name(data.dtype)}'")
    axis = wrap_dim(axis, data.ndim)
    from_lengths = offsets is None
    bounds = lengths if from_lengths else offsets
    kind = "lengths" if from_lengths else "offsets"
    if bounds.dtype not in (_dtype.int64, _dtype.int32):
        raise NotImplementedError(f"\"_segment_reduce_{kind}_cpu_kernel1\" not implemented for "
                                  f"'{c10_name(bounds.dtype)}'")
    if bounds.ndim - 1 != axis:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"{kind} but got {axis}.")
    if tuple(bounds.shape[:axis]) != tuple(data.shape[:axis]):
        raise RuntimeError(f"segment_reduce(): Expected all dimensions before axis of {kind} "
                           f"to match data, but got {kind} of shape {list(bounds.shape)} and "
                           f"data of shape {list(data.shape)}")
    if not unsafe and _concrete(bounds._array):
        b = np.asarray(bounds._array)
        if from_lengths:
            if (b < 0).any():
                raise RuntimeError("lengths contains negative value!")
            if b.size and (b.sum(-1) != data.shape[axis]).any():
                raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to "
                                   "sum to data.size(lengths.dim()-1) when !unsafe.")
        elif b.size and (np.diff(b, axis=-1) < 0).any():
            raise RuntimeError("offsets contains negative value!")
    if initial is not None and isinstance(initial, Tensor):
        initial = initial.item()
    return _segment_reduce_kernel(data, bounds.to(_dtype.int64), reduce, axis, initial,
                                  from_lengths)


# ---------------------------------------------------------------------------
# Backward kernels and unsafe masked indexing


@op(name="_softmax_backward_data", publish=True, promote=NONE, method=False, out=False)
def _softmax_backward_data(grad_output: TI, output: TI, dim, input_dtype):
    """Matches `torch._softmax_backward_data`: output * (grad - sum(grad * output, dim))."""
    if grad_output.dtype != output.dtype:
        raise RuntimeError(f"expected scalar type {c10_name(grad_output.dtype)} but found "
                           f"{c10_name(output.dtype)}")
    if not jnp.issubdtype(grad_output.dtype, jnp.floating):
        raise NotImplementedError(f"\"softmax_backward_lastdim_kernel_impl\" not implemented "
                                  f"for '{c10_name(grad_output.dtype)}'")
    # On CPU a float32 gradient cannot produce a lower-precision input's gradient.
    if (grad_output.dtype == jnp.float32
            and input_dtype in (_dtype.float16, _dtype.bfloat16)):
        raise RuntimeError(f"expected scalar type Float but found {c10_name(input_dtype)}")
    d = wrap_dim(dim, grad_output.ndim)
    dt = grad_output.dtype
    # 16-bit floats are computed in float32 and rounded once, as PyTorch's CPU kernel does.
    g, y = (a.astype(jnp.float32) if dt in (jnp.float16, jnp.bfloat16) else a
            for a in (grad_output, output))
    if g.ndim == 0:
        return (y * (g - g * y)).astype(dt)
    return (y * (g - jnp.sum(g * y, axis=d, keepdims=True))).astype(dt)


@op(promote=DEFAULT, method=False, out=False)
def native_dropout_backward(grad_output: T, mask: TI, scale: T):
    """Matches aten `native_dropout_backward`: grad * mask * scale (ints and bools give the
    default float dtype, as the float `scale` promotes them)."""
    return grad_output * mask.astype(grad_output.dtype) * scale


def _clamped_indices(x, indices):
    """Index tensors clamped into range, as PyTorch's unsafe masked ops do before gathering."""
    if len(indices) > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got "
                         f"{len(indices)})")
    out = []
    for i, idx in enumerate(indices):
        if idx.dtype not in (jnp.int64, jnp.int32):
            raise RuntimeError("_unsafe_masked_index found unexpected index type "
                               f"{c10_name(idx.dtype)}")
        out.append(jnp.clip(idx, 0, builtins.max(x.shape[i] - 1, 0)))
    return tuple(out)


def _check_mask(mask):
    if mask.dtype != jnp.bool_:
        raise RuntimeError(f"_unsafe_masked_index found mask dtype {c10_name(mask.dtype)}; "
                           f"expected Bool")


@op(name="_unsafe_masked_index", publish=True, promote=NONE, method=False, out=False)
def _unsafe_masked_index(input: TI, mask: TI, indices: TL, fill):
    """Matches `torch._unsafe_masked_index`: input[indices] where mask is true, else fill.

    Indices are clamped into range first, so masked-off positions may hold any index.
    """
    _check_mask(mask)
    idx = _clamped_indices(input, indices)
    fill_value = jnp.asarray(fill).astype(input.dtype)
    if input.size == 0:
        shape = jnp.broadcast_shapes(*(i.shape for i in idx)) + input.shape[len(idx):]
        return jnp.full(shape, fill_value, input.dtype)
    return jnp.where(mask, input[idx], fill_value)


@op(name="_unsafe_masked_index_put_accumulate", publish=True, promote=NONE, method=False, out=False)
def _unsafe_masked_index_put_accumulate(input: TI, mask: TI, indices: TL, values: TI):
    """Matches `torch._unsafe_masked_index_put_accumulate`: input.index_put(indices,
    values * mask, accumulate=True) with indices clamped into range."""
    _check_mask(mask)
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{c10_name(input.dtype)} for the destination and "
                           f"{c10_name(values.dtype)} for the source.")
    idx = _clamped_indices(input, indices)
    target = jnp.broadcast_shapes(*(i.shape for i in idx)) + input.shape[len(idx):]
    values = jnp.where(mask, values, jnp.zeros((), values.dtype))
    values = jnp.broadcast_to(values, target)
    if input.dtype == jnp.bool_:  # accumulating booleans is a logical or
        return input.astype(jnp.int32).at[idx].add(values.astype(jnp.int32)) > 0
    return input.at[idx].add(values)
