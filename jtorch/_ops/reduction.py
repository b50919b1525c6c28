"""Reductions: sum, mean, prod, max/min, arg-reductions, norms, logsumexp.

Every reduction takes torch's `dim` (None, an int, or a sequence of ints),
`keepdim` and, where torch has it, `dtype`; result dtypes are torch's (sums
of integers and bools are int64, indices are int64). Statistics (var, median,
quantile, ...), scans (cumsum, cummax, ...) and differences (diff, gradient,
trapezoid) live in sibling modules; the helpers they share are in `_kernel_helpers`.
"""

import builtins
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _meta
from .._dtype import c10_name
from .._tensor import Tensor, wrap_dim
from . import _derivatives
from ._kernel_helpers import (
    accumulate,
    by_dim,
    dims_arg,
    extreme_identity,
    is_complex,
    is_float,  # noqa: F401
    is_integral,
    sum_dtype,
)
from ._registry import (
    COMPLEX_TO_FLOAT,
    DEFAULT,
    NAMESPACES,
    NONE,
    TI,
    T,
    composite,
    name_return_type,
    op,
)
from ._rows import ReductionRows

reduction = functools.partial(op, promote=NONE)

_HALF = (jnp.float16, jnp.bfloat16)


def check_nonempty(name, a, axes, sep="():"):
    """PyTorch's errors for max-like reductions (no identity) over empty tensors or dims."""
    if a.size:
        return
    if axes is None:
        raise RuntimeError(
            f"{name}{sep} Expected reduction dim to be specified for "
            "input.numel() == 0. Specify the reduction dim with the 'dim' "
            "argument."
        )
    for d in axes:
        if a.shape[d] == 0:
            raise IndexError(f"{name}{sep} Expected reduction dim {d} to have non-zero size.")


def keep_all(r, ndim, keepdim):
    """A full reduction's result with every dim kept as size 1 when `keepdim`."""
    return r.reshape((1,) * ndim) if keepdim else r


# ---------------------------------------------------------------------------
# Sums and products


@reduction(node=by_dim("Sum"))
def sum(input: T, dim=None, keepdim=False, *, dtype=None):
    """Matches `torch.sum`."""
    out_dt = sum_dtype(input, dtype)
    x = accumulate(input.astype(out_dt))
    r = jnp.sum(x, axis=dims_arg(dim, input.ndim), keepdims=keepdim)
    return r.astype(out_dt)


@reduction
def nansum(input: T, dim=None, keepdim=False, *, dtype=None):
    """Matches `torch.nansum`."""
    if is_complex(input):
        raise RuntimeError("nansum does not support complex inputs")
    out_dt = sum_dtype(input, dtype)
    x = accumulate(input.astype(out_dt))
    if is_float(x):
        x = jnp.where(jnp.isnan(x), jnp.zeros((), x.dtype), x)
    return jnp.sum(x, axis=dims_arg(dim, input.ndim), keepdims=keepdim).astype(out_dt)


@reduction(differentiable=False)
def hash_tensor(input: T, dim=None, *, keepdim=False, mode=0):
    """Matches `torch.hash_tensor`: the xor of the elements' 64-bit patterns (floats as
    float64, integers and bools as int64), as uint64."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if is_complex(input):
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for '{c10_name(input.dtype)}'")
    axes = dims_arg(dim, input.ndim)
    check_nonempty("hash_tensor", input, axes, sep=":")
    wide = jnp.float64 if is_float(input) else jnp.int64
    if input.dtype == jnp.uint64:
        bits = input
    else:
        bits = jax.lax.bitcast_convert_type(input.astype(wide), jnp.uint64)
    axes = tuple(range(input.ndim)) if axes is None else axes
    out = jax.lax.reduce(bits, np.uint64(0), jax.lax.bitwise_xor, axes)
    if keepdim:
        out = jnp.expand_dims(out, axes)
    return out


def _mean_dtype(input, dtype, name="mean"):
    dt = dtype.np if dtype is not None else input.dtype
    if not (jnp.issubdtype(dt, jnp.floating) or jnp.issubdtype(dt, jnp.complexfloating)):
        which = "Optional dtype" if dtype is not None else "Input dtype"
        raise RuntimeError(
            f"{name}(): could not infer output dtype. {which} must be either a "
            f"floating point or complex dtype. Got: {c10_name(dt)}"
        )
    return dt


@reduction(node=by_dim("Mean"))
def mean(input: T, dim=None, keepdim=False, *, dtype=None):
    """Matches `torch.mean`."""
    dt = _mean_dtype(input, dtype)
    x = accumulate(input.astype(dt))
    return jnp.mean(x, axis=dims_arg(dim, input.ndim), keepdims=keepdim).astype(dt)


@reduction
def nanmean(input: T, dim=None, keepdim=False, *, dtype=None):
    """Matches `torch.nanmean`: the mean of the non-NaN elements."""
    if not (is_float(input) or is_complex(input)):
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype "
            f"but got {c10_name(input.dtype)}"
        )
    dt = _mean_dtype(input, dtype, "nanmean")
    x = accumulate(input.astype(dt))
    axes = dims_arg(dim, input.ndim)
    ok = ~jnp.isnan(x)
    total = jnp.sum(jnp.where(ok, x, jnp.zeros((), x.dtype)), axis=axes, keepdims=keepdim)
    return (total / jnp.sum(ok, axis=axes, keepdims=keepdim).astype(total.dtype)).astype(dt)


@reduction(node=by_dim("Prod"))
def prod(input: T, dim=None, keepdim=False, *, dtype=None):
    """Matches `torch.prod`."""
    out_dt = sum_dtype(input, dtype)
    x = accumulate(input.astype(out_dt))
    if isinstance(dim, (tuple, list)):
        raise TypeError("prod(): argument 'dim' must be int, not tuple")
    axes = None if dim is None else dims_arg(dim, input.ndim)
    return jnp.prod(x, axis=axes, keepdims=keepdim).astype(out_dt)


# ---------------------------------------------------------------------------
# Logical reductions


def _logical_result(x, r):
    # PyTorch keeps uint8 for all/any of uint8 (a legacy of byte masks); every other dtype
    # gives bool.
    return r.astype(jnp.uint8) if x.dtype == jnp.uint8 else r


@reduction
def all(input: T, dim=None, keepdim=False):
    """Matches `torch.all`."""
    r = jnp.all(input != 0, axis=dims_arg(dim, input.ndim), keepdims=keepdim)
    return _logical_result(input, r)


@reduction
def any(input: T, dim=None, keepdim=False):
    """Matches `torch.any`."""
    r = jnp.any(input != 0, axis=dims_arg(dim, input.ndim), keepdims=keepdim)
    return _logical_result(input, r)


@reduction(differentiable=False)
def count_nonzero(input: T, dim=None):
    """Matches `torch.count_nonzero`."""
    return jnp.sum(input != 0, axis=dims_arg(dim, input.ndim), dtype=jnp.int64)


# ---------------------------------------------------------------------------
# Extrema


def _check_not_complex(name, a):
    if is_complex(a):
        raise RuntimeError(f"{name}(): does not support complex input")


def _amax_like(name, fn):
    def impl(input: T, dim=(), keepdim=False):
        _check_not_complex(name, input)
        axes = dims_arg(dim, input.ndim)
        check_nonempty(name, input, axes)
        return fn(input, axis=axes, keepdims=keepdim)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return reduction(impl)


amax = _amax_like("amax", jnp.max)
amin = _amax_like("amin", jnp.min)


@reduction(returns=("min", "max"))
def aminmax(input: T, *, dim=None, keepdim=False):
    """Matches `torch.aminmax`."""
    _check_not_complex("aminmax", input)
    if dim is None:
        if input.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the "
                "operation has no identity."
            )
        return (
            keep_all(jnp.min(input), input.ndim, keepdim),
            keep_all(jnp.max(input), input.ndim, keepdim),
        )
    axes = dims_arg(dim, input.ndim)
    check_nonempty("aminmax", input, axes, sep=":")
    return jnp.min(input, axis=axes, keepdims=keepdim), jnp.max(input, axis=axes, keepdims=keepdim)


def _arg_extreme(x, axis, largest):
    """First index of the max (min) along `axis`; NaN counts as the extreme, as in PyTorch."""
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.int8)
    return (jnp.argmax if largest else jnp.argmin)(x, axis=axis).astype(jnp.int64)


def _argmax_like(name, largest):
    def impl(input: T, dim=None, keepdim=False):
        _check_not_complex(name, input)
        if dim is None:
            if input.size == 0:
                raise IndexError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            return keep_all(_arg_extreme(input.reshape(-1), 0, largest), input.ndim, keepdim)
        axes = dims_arg(dim, input.ndim)
        check_nonempty(name, input, axes)
        if input.ndim == 0:
            return jnp.zeros((), jnp.int64)
        r = _arg_extreme(input, axes[0], largest)
        return jnp.expand_dims(r, axes[0]) if keepdim else r

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return reduction(impl, differentiable=False)


argmax = _argmax_like("argmax", True)
argmin = _argmax_like("argmin", False)


def values_and_indices(x, dim, keepdim, largest):
    """(max, argmax) or (min, argmin) of `x` along one dim; a 0-d `x` is its own extreme."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    idx = _arg_extreme(x, dim, largest)
    vals = jnp.take_along_axis(x, jnp.expand_dims(idx, dim), axis=dim)
    return (
        vals if keepdim else jnp.squeeze(vals, dim),
        jnp.expand_dims(idx, dim) if keepdim else idx,
    )


def _max_kernels(name, largest):
    def all_impl(input: T):
        _check_not_complex(name, input)
        check_nonempty(name, input, None)
        # PyTorch shares the gradient among the elements equal to the result (NaN included)
        reduce = jnp.max if largest else jnp.min
        return _derivatives.evenly_distributed(input, lambda x: reduce(x))

    def dim_impl(input: T, dim, keepdim=False):
        _check_not_complex(name, input)
        axes = dims_arg(dim, input.ndim)
        check_nonempty(name, input, axes)
        return values_and_indices(input, axes[0] if axes else 0, keepdim, largest)

    all_impl.__name__, dim_impl.__name__ = f"_{name}_all", f"_{name}_dim"
    # PyTorch numbers the overloads: max() is MaxBackward1, max(dim) MaxBackward0
    node = name.capitalize() + "Backward"
    rows = ReductionRows(functools.partial(_all_identity, "amax" if largest else "amin"))
    k_all = reduction(all_impl, method=False, name=f"_{name}_all", node=node + "1", rows=rows)
    k_dim = reduction(
        dim_impl, method=False, name=f"_{name}_dim", returns=("values", "indices"), node=node + "0"
    )
    return k_all, name_return_type(k_dim, name)


def _all_identity(reduce, dtype):
    """max()'s or min()'s padding (`_rows.ReductionRows`); None for complex, which they refuse
    (with their own error, raised where the call runs as it is)."""
    return None if jnp.issubdtype(dtype, jnp.complexfloating) else extreme_identity(reduce, dtype)


_max_all, _max_dim = _max_kernels("max", True)
_min_all, _min_dim = _max_kernels("min", False)


@op(promote=DEFAULT, method=False, name="_maximum_fallback")
def _maximum_fallback(input: T, other: T):
    return jnp.maximum(input, other)


@op(promote=DEFAULT, method=False, name="_minimum_fallback")
def _minimum_fallback(input: T, other: T):
    return jnp.minimum(input, other)


def _binary(name, fallback):
    # max(input, other) is torch.maximum; use the pointwise family's op when it exists.
    return NAMESPACES[""].get(name, fallback)


def _max_dispatch(name, k_all, k_dim, binary, fallback):
    def impl(input, dim=None, keepdim=False, *, other=None, out=None):
        if isinstance(dim, Tensor):
            dim, other = None, dim
        if other is not None:
            if not isinstance(other, Tensor):
                raise TypeError(
                    f"{name}() received an invalid combination of arguments - got "
                    f"(Tensor, {type(other).__name__})"
                )
            return _binary(binary, fallback)(input, other, out=out)
        if dim is None:
            if keepdim:
                raise TypeError(
                    f"{name}() received an invalid combination of arguments - got "
                    "(Tensor, keepdim=bool)"
                )
            return k_all(input, out=out)
        return k_dim(input, dim, keepdim, out=out)

    impl.__name__ = name
    impl.__doc__ = (
        f"Matches `torch.{name}`: the overall {name}, ({name}, arg{name}) along "
        f"`dim`, or the elementwise {binary} with `other`."
    )
    return composite(impl)


max = _max_dispatch("max", _max_all, _max_dim, "maximum", _maximum_fallback)
min = _max_dispatch("min", _min_all, _min_dim, "minimum", _minimum_fallback)


# ---------------------------------------------------------------------------
# logsumexp and norms


def logsumexp_array(x, axes, keepdim):
    """log(sum(exp(x))) computed stably, complex included; -inf for empty reductions."""
    re = jnp.real(x) if is_complex(x) else x
    if x.size == 0:
        m = jnp.zeros((), re.dtype)
    else:
        m = jax.lax.stop_gradient(jnp.max(re, axis=axes, keepdims=True))
        # An all -inf (or +inf) slice would give inf - inf; shift by 0 there instead.
        m = jnp.where(jnp.isfinite(m), m, jnp.zeros((), m.dtype))
    s = jnp.sum(jnp.exp(x - m), axis=axes, keepdims=True)
    r = jnp.log(s) + m
    if not keepdim:
        r = jnp.squeeze(r, axes) if axes is not None else r.reshape(())
    return r


@reduction
def logsumexp(input: T, dim, keepdim=False):
    """Matches `torch.logsumexp`: integer inputs give the default float dtype."""
    x = input
    if is_integral(x):
        x = x.astype(_dtype.get_default_dtype().np)
    out_dt = x.dtype
    axes = dims_arg(dim, x.ndim)
    return logsumexp_array(accumulate(x), axes, keepdim).astype(out_dt)


def vector_norm_array(x, p, axes, keepdim, name="linalg.vector_norm"):
    """`torch.linalg.vector_norm` on a float/complex array; the result is real. Its gradient
    is PyTorch's (`_derivatives.vector_norm`: 0 at a zero vector, ...)."""
    if p == float("inf") or p == -float("inf"):
        if x.size == 0 and (axes is None or builtins.any(x.shape[d] == 0 for d in axes)):
            raise RuntimeError(
                f"{name} cannot compute the {'' if p > 0 else '-'}inf norm on an "
                "empty tensor because the operation does not have an identity"
            )

    def forward(x):
        a = jnp.abs(accumulate(x))
        if p == float("inf") or p == -float("inf"):
            r = (jnp.max if p > 0 else jnp.min)(a, axis=axes, keepdims=keepdim)
        elif p == 0:
            r = jnp.sum(a != 0, axis=axes, keepdims=keepdim).astype(a.dtype)
        elif p == 1:
            r = jnp.sum(a, axis=axes, keepdims=keepdim)
        elif p == 2:
            r = jnp.sqrt(jnp.sum(a * a, axis=axes, keepdims=keepdim))
        else:
            r = jnp.sum(a**p, axis=axes, keepdims=keepdim) ** (1.0 / p)
        return r.astype(jnp.real(x).dtype)

    axes = None if axes is None or not x.ndim else tuple(sorted(a % x.ndim for a in axes))
    return _derivatives.vector_norm(x, float(p), axes, keepdim, forward)


def _nuclear_or_fro(x, p, axes, keepdim):
    if axes is None or len(axes) != 2:
        got = " ".join(str(d) for d in (axes or ()))
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
    a, b = axes
    y = jnp.moveaxis(accumulate(x), (a, b), (-2, -1))
    if p == "nuc":
        r = jnp.sum(jnp.linalg.svd(y, compute_uv=False), axis=-1)
    else:
        r = jnp.sqrt(jnp.sum(jnp.abs(y) ** 2, axis=(-2, -1)))
    if keepdim:
        for d in sorted(axes):
            r = jnp.expand_dims(r, d)
    return r.astype(jnp.real(x).dtype)


@reduction(node="LinalgVectorNormBackward0")  # (torch.norm is the linalg kernel)
def norm(input: T, p="fro", dim=None, keepdim=False, dtype=None):
    """Matches `torch.norm`: vector norms, or the Frobenius/nuclear matrix norm for 'fro'/'nuc'."""
    x = input if dtype is None else input.astype(dtype.np)
    if not (is_float(x) or is_complex(x)):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {c10_name(x.dtype)} instead."
        )
    if isinstance(dim, int):
        dim = (dim,)
    axes = dims_arg(dim, x.ndim)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm_array(x, 2, axes, keepdim)
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        return _nuclear_or_fro(x, p, axes if axes is not None else tuple(range(x.ndim)), keepdim)
    return vector_norm_array(x, 2.0 if p is None else p, axes, keepdim)


@op(promote=COMPLEX_TO_FLOAT)
def dist(input: T, other: T, p=2):
    """Matches `torch.dist`: the p-norm of `input - other`."""
    if not (is_float(input) or is_complex(input)):
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {c10_name(input.dtype)}"
        )
    return vector_norm_array(input - other, p, None, False)


@op(promote=DEFAULT, inplace=True)
def renorm(input: T, p, dim, maxnorm):
    """Matches `torch.renorm`: rescales each slice along `dim` whose p-norm exceeds `maxnorm`."""
    if is_integral(input):
        raise RuntimeError(f"\"renorm_out\" not implemented for '{c10_name(input.dtype)}'")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions"
        )
    d = wrap_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    nrm = vector_norm_array(input, p, others, True)
    acc = jnp.float32 if input.dtype in _HALF else nrm.dtype
    nrm = nrm.astype(acc)
    # PyTorch's factor: maxnorm / (norm + 1e-7), applied only where norm > maxnorm.
    factor = jnp.where(nrm > maxnorm, maxnorm / (nrm + 1e-7), jnp.ones((), acc))
    return (accumulate(input) * factor).astype(input.dtype)


# ---------------------------------------------------------------------------
# Segment reductions


def _concrete(*arrays) -> bool:
    """True when no array is a jax tracer, so value checks can run (eager calls)."""
    return not builtins.any(_meta.no_values(a) for a in arrays if a is not None)


_SEGMENT_REDUCTIONS = ("sum", "prod", "mean", "max", "min")


@op(
    name="_segment_reduce_kernel",
    promote=NONE,
    method=False,
    out=False,
    node="SegmentReduceBackward0",
)
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
    mask = (j >= starts[..., None]) & (j < ends[..., None])  # (B..., S, L)
    mask = mask.reshape(mask.shape + (1,) * (data.ndim - axis - 1))  # (B..., S, L, R...)
    x = jnp.expand_dims(data, axis)  # (B..., 1, L, R...)
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
        out_shape = out_shape[:red] + out_shape[red + 1 :]

        def step(acc, xm):
            xj, mj = xm
            return jnp.where(mj, combine(acc, xj), acc), None

        acc, _ = jax.lax.scan(
            step,
            jnp.full(out_shape, start, dt),
            (jnp.moveaxis(x, red, 0), jnp.moveaxis(mask, red, 0)),
        )
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
def _segment_reduce(
    data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None
):
    """Matches `torch._segment_reduce` / `torch.segment_reduce` (lengths or offsets form).

    Offsets win when both are given, as in PyTorch. Value checks (negative lengths, rows not
    summing to the axis size) run on eager calls unless `unsafe`; a traced call skips them.
    """
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"_segment_reduce_cpu\" not implemented for '{c10_name(data.dtype)}'"
        )
    axis = wrap_dim(axis, data.ndim)
    from_lengths = offsets is None
    bounds = lengths if from_lengths else offsets
    kind = "lengths" if from_lengths else "offsets"
    if bounds.dtype not in (_dtype.int64, _dtype.int32):
        raise NotImplementedError(
            f"\"_segment_reduce_{kind}_cpu_kernel1\" not implemented for '{c10_name(bounds.dtype)}'"
        )
    if bounds.ndim - 1 != axis:
        raise RuntimeError(
            f"segment_reduce(): Expected axis to be the last dimension of {kind} but got {axis}."
        )
    if tuple(bounds.shape[:axis]) != tuple(data.shape[:axis]):
        raise RuntimeError(
            f"segment_reduce(): Expected all dimensions before axis of {kind} "
            f"to match data, but got {kind} of shape {list(bounds.shape)} and "
            f"data of shape {list(data.shape)}"
        )
    if not unsafe and _concrete(bounds._array):
        b = np.asarray(bounds._array)
        if from_lengths:
            if (b < 0).any():
                raise RuntimeError("lengths contains negative value!")
            if b.size and (b.sum(-1) != data.shape[axis]).any():
                raise RuntimeError(
                    "segment_reduce(): Expected all rows of lengths along axis to "
                    "sum to data.size(lengths.dim()-1) when !unsafe."
                )
        elif b.size and (np.diff(b, axis=-1) < 0).any():
            raise RuntimeError("offsets contains negative value!")
    if initial is not None and isinstance(initial, Tensor):
        initial = initial.item()
    return _segment_reduce_kernel(
        data, bounds.to(_dtype.int64), reduce, axis, initial, from_lengths
    )
