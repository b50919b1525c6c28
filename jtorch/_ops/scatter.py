"""Index-driven reads and writes: gather, scatter*, index_*, take/put, take_along_dim.

PyTorch checks index values (out-of-range indices raise). Those checks need
concrete values, so each public op is a composite that checks eagerly (and skips
the value checks when the index is a jax tracer), then calls a private jitted
kernel. In-place variants run the same checks before the kernel writes, so a
failing call leaves the tensor unchanged.
"""

import builtins
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._dtype import c10_name
from .._tensor import Tensor, wrap, wrap_dim
from . import _registry
from ._kernel_helpers import extreme_identity, index_values
from ._registry import NONE, TI, KernelCall, T, composite, op

kernel = op(promote=NONE, method=False, out=False)


def _finish(result, out):
    return result if out is None else _registry.write_out(result, out)


def _as_tensor(v, like):
    return v if isinstance(v, Tensor) else wrap(jnp.asarray(v, like.dtype.np))


def _along(index, dim):
    """The full index tuple of gather/scatter: `index` at `dim`, positions elsewhere."""
    return tuple(
        index if k == dim else jax.lax.broadcasted_iota(jnp.int64, index.shape, k)
        for k in range(index.ndim)
    )


def _head(src, shape):
    """The leading `shape` block of `src` (scatter reads only that much of src)."""
    return src[tuple(slice(0, n) for n in shape)]


def _first_bad(values, lo, hi):
    bad = values[(values < lo) | (values >= hi)]
    return None if bad.size == 0 else int(bad.reshape(-1)[0])


# ---------------------------------------------------------------------------
# gather / scatter


def _check_index_dtype(name, index):
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _check_range(values, d, n, exc=RuntimeError):
    if values is not None:
        bad = _first_bad(values, 0, n)
        if bad is not None:
            raise exc(f"index {bad} is out of bounds for dimension {d} with size {n}")


def _gather_checks(input, dim, index):
    d = wrap_dim(dim, input.ndim)
    if index.numel() == 0:  # PyTorch checks nothing more for an empty index
        return d
    _check_index_dtype("gather", index)
    if builtins.max(index.ndim, 1) != builtins.max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if index.numel():
        for k in range(index.ndim):
            if k != d and index.shape[k] > input.shape[k]:
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index "
                    f"{list(index.shape)} to be no larger than self "
                    f"{list(input.shape)} apart from dimension {d}"
                )
    _check_range(index_values(index), d, input.shape[d] if input.ndim else 1)
    return d


@kernel(name="_gather")
def _gather(input: T, dim, index: TI):
    if index.size == 0:
        return jnp.zeros(index.shape, input.dtype)
    if input.ndim == 0 or index.ndim == 0:
        return input.reshape(-1)[index.reshape(-1)].reshape(index.shape)
    return input[_along(index, dim)]


@composite(method=True)
def gather(input, dim, index, *, sparse_grad=False, out=None):
    """Matches `torch.gather`."""
    d = _gather_checks(input, dim, index)
    return _finish(_gather(input, d, index), out)


_SCATTER_REDUCE = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return jnp.zeros((), dtype)
    if reduce == "prod":
        return jnp.ones((), dtype)
    return jnp.asarray(extreme_identity(reduce, dtype), dtype)


def _scatter_into(input, idx, src, reduce, include_self=True):
    """`input` with `src` scattered at index tuple `idx`, combined by `reduce` (None: set)."""
    if reduce is None:
        return input.at[idx].set(src)
    dt = input.dtype
    boolean = dt == jnp.bool_
    if boolean:  # bool sum is `or`, prod is `and`: compute in int8 and renormalise
        if reduce == "mean":
            raise NotImplementedError(
                "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"
            )
        input, src = input.astype(jnp.int8), src.astype(jnp.int8)
    base = input
    if not include_self:
        hit = jnp.zeros(input.shape, bool).at[idx].set(True)
        base = jnp.where(hit, _identity(reduce, input.dtype), input)
    if reduce in ("sum", "mean"):
        out = base.at[idx].add(src)
    elif reduce == "prod":
        out = _scatter_prod(base, idx, src)
    elif reduce == "amax":
        out = base.at[idx].max(src)
        if jnp.issubdtype(dt, jnp.floating):  # PyTorch propagates NaN from src
            out = jnp.where(jnp.zeros(input.shape, bool).at[idx].max(jnp.isnan(src)), jnp.nan, out)
    else:
        out = base.at[idx].min(src)
        if jnp.issubdtype(dt, jnp.floating):
            out = jnp.where(jnp.zeros(input.shape, bool).at[idx].max(jnp.isnan(src)), jnp.nan, out)
    if reduce == "mean":
        count = jnp.zeros(input.shape, out.dtype).at[idx].add(jnp.ones((), out.dtype))
        count = count + 1 if include_self else count
        safe = jnp.maximum(count, 1)
        # PyTorch floors the integer mean.
        mean = out // safe if jnp.issubdtype(dt, jnp.integer) else out / safe
        out = jnp.where(count > 0, mean, input)
    return out != 0 if boolean else out


@jax.custom_vjp
def _scatter_prod(base, idx, src):
    return base.at[idx].multiply(src)


def _scatter_prod_fwd(base, idx, src):
    return _scatter_prod(base, idx, src), (base, idx, src)


def _scatter_prod_bwd(res, g):
    # PyTorch's scatter_reduce(prod) backward (jax has none for repeated indices): an input's
    # gradient is the product of the others at its position, that is result / input where
    # no factor is zero; with exactly one zero factor only that factor gets a gradient (the
    # product of the nonzero ones); with more zeros none does.
    base, idx, src = res
    one = jnp.ones((), base.dtype)
    zeros = (base == 0).astype(jnp.int32).at[idx].add((src == 0).astype(jnp.int32))
    nonzero = jnp.where(base == 0, one, base).at[idx].multiply(jnp.where(src == 0, one, src))
    g_base = g * jnp.where(
        zeros == 0,
        nonzero / jnp.where(base == 0, one, base),
        jnp.where((zeros == 1) & (base == 0), nonzero, 0),
    )
    zeros_at, nonzero_at, g_at = zeros[idx], nonzero[idx], g[idx]
    g_src = g_at * jnp.where(
        zeros_at == 0,
        nonzero_at / jnp.where(src == 0, one, src),
        jnp.where((zeros_at == 1) & (src == 0), nonzero_at, 0),
    )
    return g_base, None, g_src


_scatter_prod.defvjp(_scatter_prod_fwd, _scatter_prod_bwd)


def _scatter_checks(name, input, dim, index, src):
    d = wrap_dim(dim, input.ndim)
    if index.numel() == 0:  # PyTorch checks nothing more for an empty index
        return d
    _check_index_dtype("scatter", index)
    if isinstance(src, Tensor) and src.dtype != input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if builtins.max(index.ndim, 1) != builtins.max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    is_src = isinstance(src, Tensor)
    if is_src and builtins.max(index.ndim, 1) != builtins.max(src.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if index.numel() and index.ndim:
        too_big = builtins.any(
            k != d and index.shape[k] > input.shape[k] for k in range(index.ndim)
        )
        if is_src and src.ndim:
            too_big = too_big or builtins.any(i > s for i, s in zip(index.shape, src.shape))
        if too_big:
            msg = (
                f"Expected index {list(index.shape)} to be no larger than self "
                f"{list(input.shape)} apart from dimension {d}"
            )
            if is_src:
                msg += f" and to be no larger size than src {list(src.shape)}"
            raise RuntimeError(msg)
    _check_range(index_values(index), d, input.shape[d] if input.ndim else 1)
    return d


def _scatter_node(reduce, src) -> str:
    # scatter_add is reduce "sum" (as is scatter_reduce(..., "sum"), which PyTorch names
    # ScatterReduceBackward0: jtorch cannot tell them apart)
    if reduce is None:
        return "ScatterBackward0" if isinstance(src, Tensor) else "ScatterBackward1"
    return "ScatterAddBackward0" if reduce == "sum" else "ScatterReduceBackward0"


@kernel(name="_scatter", node=_scatter_node)
def _scatter(input: T, dim, index: TI, src: T, *, reduce=None, include_self=True):
    if index.size == 0:
        return input
    shape = input.shape
    if input.ndim == 0:
        input, index = input.reshape(1), index.reshape(-1)
    elif index.ndim == 0:
        index = index.reshape((1,) * input.ndim)
    src = jnp.asarray(src).astype(input.dtype)
    if src.ndim == 0:
        src = jnp.broadcast_to(src, index.shape)
    elif src.ndim != index.ndim:  # a one-element src beside a 0-d index or input
        src = src.reshape(-1)[: index.size].reshape(index.shape)
    else:
        src = _head(src, index.shape)
    out = _scatter_into(input, _along(index, dim), src, reduce, include_self)
    return out.reshape(shape)


_LEGACY_REDUCE = {None: None, "add": "sum", "multiply": "prod"}


def _legacy_reduce(reduce, tensor_src):
    if reduce not in _LEGACY_REDUCE:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if reduce is not None and tensor_src:
        warnings.warn(
            "The reduce argument of torch.scatter with Tensor src is deprecated and "
            "will be removed in a future PyTorch release. Use torch.scatter_reduce "
            "instead for more reduction options.",
            UserWarning,
            stacklevel=3,
        )
    return _LEGACY_REDUCE[reduce]


def _scatter_src(src, value):
    src = value if src is None else src
    if src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    return src


# The functional / in-place pairs: one body each, its checks shared (`composite(inplace=True)`).


@composite(inplace=True, out=True)
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """Matches `torch.scatter` (tensor `src` or scalar `value`, optional `reduce`)."""
    src = _scatter_src(src, value)
    d = _scatter_checks("scatter", input, dim, index, src)
    r = _legacy_reduce(reduce, isinstance(src, Tensor))
    return KernelCall(_scatter, input, d, index, src, r, True)


@composite(inplace=True, out=True)
def scatter_add(input, dim, index, src):
    """Matches `torch.scatter_add`."""
    d = _scatter_checks("scatter_add", input, dim, index, src)
    return KernelCall(_scatter, input, d, index, src, "sum", True)


def _check_reduce(reduce):
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )


@composite(inplace=True, out=True)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Matches `torch.scatter_reduce`."""
    _check_reduce(reduce)
    d = _scatter_checks("scatter_reduce", input, dim, index, src)
    return KernelCall(_scatter, input, d, index, src, reduce, include_self)


# ---------------------------------------------------------------------------
# index_select and the index_* family (one index vector along `dim`)


@kernel(name="_index_select")
def _index_select(input: T, dim, index: TI):
    if input.ndim == 0:
        return input
    return jnp.take(input, index.reshape(-1), axis=dim)


@composite(method=True)
def index_select(input, dim, index, *, out=None):
    """Matches `torch.index_select`."""
    d = wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    values = index_values(index)
    n = input.shape[d] if input.ndim else 1
    if values is not None:
        bad = _first_bad(values, 0, n)
        if bad is not None:
            if d == 0:
                raise IndexError("index out of range in self")
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
    return _finish(_index_select(input, d, index), out)


def _index_reduce_node(reduce, input, source) -> str:
    if reduce == "sum":
        return "IndexAddBackward0"
    if reduce is not None:
        return "IndexReduceBackward0"
    # index_copy's source has the input's rank; index_fill's value is a number or 0-d tensor
    if not isinstance(source, Tensor):
        return "IndexFillBackward0"
    return "IndexFillBackward1" if source.ndim == 0 < input.ndim else "IndexCopyBackward0"


@kernel(name="_index_reduce", node=_index_reduce_node)
def _index_reduce(input: T, dim, index: TI, source: T, *, reduce=None, include_self=True, alpha=1):
    """Writes `source` slices at positions `index` along `dim`, combined by `reduce`."""
    shape = input.shape
    if input.ndim == 0:
        input = input.reshape(1)
    index = index.reshape(-1)
    n = input.shape[dim]
    index = jnp.where(index < 0, index + n, index)
    source = jnp.asarray(source).astype(input.dtype)
    if alpha != 1:
        # cast like PyTorch: -1 wraps to 255 for uint8, 2.5 truncates to 2 for integers
        source = source * jnp.asarray(alpha).astype(input.dtype)
    if source.ndim == 0 or source.ndim < input.ndim:
        # a scalar fill value, or a 0-d source into a 0-d input
        slab = list(input.shape)
        slab[dim] = index.shape[0]
        source = jnp.broadcast_to(source.reshape(-1) if source.ndim else source, slab)
    full = jnp.moveaxis(
        jnp.broadcast_to(index, source.shape[:dim] + source.shape[dim + 1 :] + index.shape), -1, dim
    )
    out = _scatter_into(input, _along(full, dim), source, reduce, include_self)
    return out.reshape(shape)


def _index_vector(name, index, dtypes=(_dtype.int64, _dtype.int32)):
    if index.dtype not in dtypes:
        raise RuntimeError(
            f"{name}(): Expected dtype int32/int64 for index but got: {c10_name(index.dtype)}"
        )
    if index.ndim > 1:
        raise IndexError(
            f"{name}(): Index is supposed to be a vector, but got dim: "
            f"{index.ndim} with type: {c10_name(index.dtype)} and size: "
            f"{list(index.shape)}"
        )


def _source_shape(name, input, d, index, source):
    n_idx = index.numel()
    src_n = source.shape[d] if source.ndim else 1
    if n_idx != src_n:
        raise RuntimeError(
            f"{name}(): Number of indices ({n_idx}) should be equal to "
            f"source.size(dim): ({src_n}), for dim: {d}"
        )
    if input.ndim and (
        source.ndim != input.ndim
        or builtins.any(k != d and source.shape[k] != input.shape[k] for k in range(input.ndim))
    ):
        raise RuntimeError(
            f"source tensor shape must match self tensor shape, excluding the "
            f"specified dimension. Got self.shape = {list(input.shape)} "
            f"source.shape = {list(source.shape)}"
        )


def _index_add_checks(input, dim, index, source, name="index_add_"):
    d = wrap_dim(dim, input.ndim)
    _index_vector(name, index)
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"{name}(): self ({c10_name(input.dtype)}) and source "
            f"({c10_name(source.dtype)}) must have the same scalar type"
        )
    _source_shape(name, input, d, index, source)
    return d


def _index_add_range(input, d, index):
    values = index_values(index)
    if input.ndim == 1 and values is not None and _first_bad(values, 0, input.shape[0]) is not None:
        # PyTorch's kernel for a 1-d self reports it this way
        raise IndexError("index out of range in self")
    _check_range(values, d, input.shape[d] if input.ndim else 1)


@composite(inplace=True, out=True)
def index_add(input, dim, index, source, *, alpha=1):
    """Matches `torch.index_add`."""
    d = _index_add_checks(input, dim, index, source)
    _index_add_range(input, d, index)
    return KernelCall(_index_reduce, input, d, index, source, "sum", True, alpha)


def _index_copy_checks(input, dim, index, source):
    d = wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.dtype is not _dtype.int64:
        raise RuntimeError(
            f"index_copy_(): Expected a long tensor for index, but got {c10_name(index.dtype)}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"index_copy_(): self and source expected to have the same dtype, "
            f"but got (self) {c10_name(input.dtype)} and (source) "
            f"{c10_name(source.dtype)}"
        )
    if source.ndim and input.ndim and source.ndim != input.ndim:
        raise IndexError(
            f"index_copy_(): When source and destination are not scalars, their "
            f"dimensionality must match. Source dimensionality ({source.ndim}), "
            f"destination dimensionality ({input.ndim})"
        )
    src_n = source.shape[d] if source.ndim else 1
    if index.numel() != src_n:
        raise IndexError(
            f"index_copy_(): Number of indices ({index.numel()}) should be equal "
            f"to source.size(dim) ({src_n})"
        )
    # PyTorch numbers the dims of the slices, i.e. with `dim` left out.
    slices = [k for k in range(source.ndim) if k != d]
    for j, k in enumerate(slices):
        if source.shape[k] != input.shape[k]:
            raise RuntimeError(
                f"index_copy_(): Source/destination tensor must have same slice "
                f"shapes. Destination slice shape: {input.shape[k]} at dimension "
                f"{j} and source slice shape: {source.shape[k]} at dimension "
                f"{j}."
            )
    _check_range(index_values(index), d, input.shape[d] if input.ndim else 1, IndexError)
    return d


def _prefixed(name, fn):
    """Runs `fn`, prefixing `name` to an out-of-bounds IndexError as PyTorch does."""
    try:
        return fn()
    except IndexError as e:
        if str(e).startswith("index "):
            raise IndexError(f"{name}: {e}") from None
        raise


@composite(inplace=True, out=True)
def index_copy(input, dim, index, source):
    """Matches `torch.index_copy`."""
    d = _prefixed("index_copy_()", lambda: _index_copy_checks(input, dim, index, source))
    return KernelCall(_index_reduce, input, d, index, source, None, True, 1)


def _index_fill_checks(input, dim, index, value):
    d = wrap_dim(dim, input.ndim)
    if index.dtype is not _dtype.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(
            f"index_fill_ only supports a 0-dimensional value tensor, but got "
            f"tensor with {value.ndim} dimension(s)."
        )
    if isinstance(value, complex) and not input.dtype.is_complex:
        raise RuntimeError(
            "index_fill_(): Converting complex Scalar to non-complex type is not supported"
        )
    values = index_values(index)
    n = input.shape[d] if input.ndim else 1
    if values is not None:
        bad = _first_bad(values, -n, n)
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    return d


@composite(inplace=True)
def index_fill(input, dim, index, value):
    """Matches `torch.index_fill` (negative indices count from the end)."""
    d = _index_fill_checks(input, dim, index, value)
    return KernelCall(_index_reduce, input, d, index, value, None, True, 1)


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


def _index_reduce_checks(input, dim, index, source, reduce):
    d = wrap_dim(dim, input.ndim)
    if reduce not in _INDEX_REDUCE:
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
            f"amin but got {reduce}."
        )
    _index_vector("index_reduce_", index)
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({c10_name(input.dtype)}) and source "
            f"({c10_name(source.dtype)}) must have the same scalar type"
        )
    _source_shape("index_reduce_", input, d, index, source)
    values = index_values(index)
    if (
        values is not None
        and _first_bad(values, 0, input.shape[d] if input.ndim else 1) is not None
    ):
        raise IndexError("index out of range in self")
    return d


@composite(inplace=True, out=True)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Matches `torch.index_reduce`."""
    d = _index_reduce_checks(input, dim, index, source, reduce)
    return KernelCall(_index_reduce, input, d, index, source, reduce, include_self, 1)


# ---------------------------------------------------------------------------
# take / put (flat indices)


def _flat_check(values, n):
    if values is not None:
        bad = _first_bad(values, -n, n)
        if bad is not None:
            raise IndexError(
                f"out of range: tried to access index {bad} on a tensor of {n} elements."
            )


@kernel(name="_take")
def _take(input: T, index: TI):
    n = input.size
    flat = input.reshape(-1)
    return flat[jnp.where(index < 0, index + n, index)]


@composite(method=True)
def take(input, index, *, out=None):
    """Matches `torch.take`."""
    if index.dtype is not _dtype.int64:
        raise RuntimeError(
            f"take(): Expected a long tensor for index, but got {c10_name(index.dtype)}"
        )
    if input.numel() == 0 and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    _flat_check(index_values(index), input.numel())
    return _finish(_take(input, index), out)


@kernel(name="_put")
def _put(input: T, index: TI, source: T, accumulate=False):
    n = input.size
    idx = index.reshape(-1)
    idx = jnp.where(idx < 0, idx + n, idx)
    src = source.reshape(-1).astype(input.dtype)
    flat = _scatter_into(input.reshape(-1), (idx,), src, "sum" if accumulate else None)
    return flat.reshape(input.shape)


def _put_checks(input, index, source):
    if index.dtype is not _dtype.int64:
        raise RuntimeError(
            f"put_(): Expected a long tensor for index, but got {c10_name(index.dtype)}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"put_(): self and source expected to have the same dtype, but got "
            f"self.dtype = {c10_name(input.dtype)} and source.dtype = "
            f"{c10_name(source.dtype)}"
        )
    if source.numel() != index.numel():
        raise IndexError(
            f"put_(): Expected source and index to have the same number of "
            f"elements, but got source.numel() = {source.numel()}, index.numel() "
            f"= {index.numel()}"
        )
    _flat_check(index_values(index), input.numel())


@composite(inplace=True)
def put(input, index, source, accumulate=False):
    """Matches `torch.put`."""
    _put_checks(input, index, source)
    return KernelCall(_put, input, index, source, accumulate)


@kernel(name="_take_along_dim", node="GatherBackward0")
def _take_along_dim(input: T, indices: TI, dim):
    if dim is None:
        return input.reshape(-1)[indices.reshape(-1)]
    n = input.shape[dim]
    self_sizes = list(input.shape)
    self_sizes[dim] = indices.shape[dim]
    shape = list(jnp.broadcast_shapes(tuple(self_sizes), indices.shape))
    indices = jnp.broadcast_to(indices, shape)
    shape[dim] = n
    input = jnp.broadcast_to(input, shape)
    indices = jnp.where(indices < 0, indices + n, indices)
    return input[_along(indices, dim)]


@composite(method=True)
def take_along_dim(input, indices, dim=None, *, out=None):
    """Matches `torch.take_along_dim`."""
    if indices.dtype is not _dtype.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got "
            f"{c10_name(indices.dtype)}"
        )
    values = index_values(indices)
    if dim is None:
        _check_range(values, 0, input.numel())
        return _finish(_take_along_dim(input, indices, None), out)
    d = wrap_dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same "
            f"number of dimensions, but got {input.ndim} dimensions for input, "
            f"and {indices.ndim} dimensions for indices"
        )
    n = input.shape[d]
    if values is not None:
        _check_range(np.where(values < 0, values + n, values), d, n)
    return _finish(_take_along_dim(input, indices, d), out)
