"""`torch.masked`: reductions, scans and normalizations that take a `mask=`.

PyTorch's rule (torch/masked/_ops.py), reproduced here for strided tensors:
the mask is broadcast to the input's shape and cast to bool, masked-out
elements are replaced by the identity of the reduction (0 for sums, 1 for
products, -inf/+inf or the integer extremes for max/min, NaN for median),
and the plain reduction runs on the result. `mean`, `var` and `std` divide
by the number of masked-in elements, so fully masked-out slices give NaN.
`mask=None` means every element is in.

Most ops end with PyTorch's `.to(dtype=input.dtype)` when no `dtype=` is
given, so e.g. `masked.argmax` of a float tensor returns float indices and
`masked.cumsum` of int32 stays int32; that is reproduced on purpose.
"""

import builtins

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._dtype import c10_name
from ._kernel_helpers import by_dim, is_complex, is_float, sum_dtype
from ._registry import NONE, OPS, TI, T, op


def _masked(name, **kw):
    return op(name="masked." + name, promote=NONE, method=False, out=False, **kw)


def _impl(name):
    """The jax implementation of another jtorch op (arrays and statics in, arrays out)."""
    return OPS[name].impl


def _jt_dtype(a):
    return _dtype.from_np(a.dtype)


# ---------------------------------------------------------------------------
# Shared helpers: dims, the canonical mask, identities


def _canonical_dim(dim, ndim):
    """torch.masked's sorted dim tuple: None or () is every dim; a 0-d tensor accepts 0 and -1."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    n = builtins.max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        d = int(d)
        # PyTorch compares the raw dim against the already-normalized ones.
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= n or d < -n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
            )
        dims.append(d % n)
    if len(set(dims)) != len(dims):
        dup = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return tuple(sorted(dims))


def _axes(dims, ndim):
    """A canonical dim tuple as a jnp `axis=`: () on a 0-d tensor reduces nothing."""
    if ndim == 0:
        return ()
    return dims if dims else None


def _input_mask(input, mask):
    """The mask broadcast to `input`'s shape, as bool."""
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError(
                "_input_mask expected broadcastable mask (got mask dimensionality "
                "higher than of the input)"
            )
        n = input.ndim
        for i in range(1, mask.ndim + 1):
            if mask.shape[-i] not in (1, input.shape[-i]):
                raise RuntimeError(
                    f"The expanded size of the tensor ({input.shape[-i]}) must match the "
                    f"existing size ({mask.shape[-i]}) at non-singleton dimension {n - i}.  "
                    f"Target sizes: {list(input.shape)}.  Tensor sizes: {list(mask.shape)}"
                )
        mask = jnp.broadcast_to(mask, input.shape)
    return mask.astype(jnp.bool_)


def _extreme(name, a, largest):
    """-inf/+inf for floats, the integer range's end for ints; PyTorch has none for bool."""
    if is_float(a):
        return -np.inf if not largest else np.inf
    if a.dtype != jnp.bool_ and jnp.issubdtype(a.dtype, jnp.integer):
        info = jnp.iinfo(a.dtype)
        return int(info.max if largest else info.min)
    if name == "logsumexp" and is_complex(a):
        return complex(-np.inf, 0)
    raise NotImplementedError(f"identity of {name} on torch.{_jt_dtype(a)._name} input")


def _identity(name, a, ord=None):
    """PyTorch's `_reduction_identity`: the value that leaves the reduction unchanged."""
    if name in ("sum", "cumsum"):
        return 0
    if name in ("prod", "cumprod"):
        return 1
    if name in ("amax", "argmax", "logaddexp", "logsumexp"):
        return _extreme(name, a, False)
    if name in ("amin", "argmin"):
        return _extreme(name, a, True)
    if name == "norm":
        if ord == -np.inf:
            if not is_float(a):
                raise AssertionError(
                    f"input must be floating point, got torch.{_jt_dtype(a)._name}"
                )
            return np.inf
        return 0
    if name == "median":
        return np.nan
    raise NotImplementedError(f"identity of {name} on torch.{_jt_dtype(a)._name} input")


def _fill(name, input, mask, ord=None):
    """`input` with masked-out elements replaced by the identity of `name`."""
    if mask is None:
        return input
    m = _input_mask(input, mask)
    return jnp.where(m, input, jnp.asarray(_identity(name, input, ord), input.dtype))


def _count(input, mask, dims, keepdim):
    """The number of masked-in elements per slice, int64."""
    ones = jnp.ones(input.shape, jnp.bool_) if mask is None else _input_mask(input, mask)
    return jnp.sum(ones, axis=_axes(dims, input.ndim), keepdims=keepdim, dtype=jnp.int64)


def _cast(r, dtype, like):
    """PyTorch's closing `.to(dtype=dtype or input.dtype)`."""
    return r.astype(dtype.np if dtype is not None else like.dtype)


# ---------------------------------------------------------------------------
# Reductions


def _sum(input, dim, keepdim, dtype, mask):
    # Integers and bools sum in int64 when no dtype is given, as torch.sum does.
    out_dt = sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    x = _fill("sum", input, mask).astype(out_dt)
    return jnp.sum(x, axis=_axes(dims, input.ndim), keepdims=bool(keepdim)).astype(out_dt)


# PyTorch's torch.masked ops are composites: their nodes are named by their last step.
@_masked("sum", node="SumBackward1")
def sum(input: T, dim=None, *, keepdim=False, dtype=None, mask: TI = None):
    """Matches `torch.masked.sum`."""
    return _sum(input, dim, keepdim, dtype, mask)


@_masked("prod", node=by_dim("Prod"))
def prod(input: T, dim=None, *, keepdim=False, dtype=None, mask: TI = None):
    """Matches `torch.masked.prod`."""
    out_dt = sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    x = _fill("prod", input, mask).astype(out_dt)
    return jnp.prod(x, axis=_axes(dims, input.ndim), keepdims=bool(keepdim)).astype(out_dt)


def _extremum(name):
    def impl(input: T, dim=None, *, keepdim=False, dtype=None, mask: TI = None):
        x = _fill(name, input, mask)
        dims = _canonical_dim(dim, input.ndim)
        return _cast(_impl(name)(x, dims, bool(keepdim)), dtype, input)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.masked.{name}`."
    return _masked(name)(impl)


amax = _extremum("amax")
amin = _extremum("amin")


def _arg_extremum(name):
    def impl(input: T, dim=None, *, keepdim=False, dtype=None, mask: TI = None):
        # PyTorch casts the int64 indices to the input's dtype (or `dtype`).
        x = _fill(name, input, mask)
        return _cast(_impl(name)(x, dim, bool(keepdim)), dtype, input)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.masked.{name}`: indices in the input's dtype, as PyTorch."
    return _masked(name, differentiable=False)(impl)


argmax = _arg_extremum("argmax")
argmin = _arg_extremum("argmin")


@_masked("mean", node="DivBackward0")
def mean(input: T, dim=None, *, keepdim=False, dtype=None, mask: TI = None):
    """Matches `torch.masked.mean`: NaN where every element of a slice is masked out."""
    dt = dtype if dtype is not None else _jt_dtype(input)
    if not (dt.is_floating_point or dt.is_complex):
        source = "Optional" if dtype is not None else "Input"
        raise ValueError(
            f"mean(): Could not infer output dtype. {source} dtype must be either "
            f"a floating point or complex dtype. Got: torch.{dt._name}"
        )
    total = _sum(input, dim, keepdim, dt, mask)
    count = _count(input, mask, _canonical_dim(dim, input.ndim), bool(keepdim))
    return total / count.astype(total.dtype)


@_masked("median", jit=False, node="NanmedianBackward1")
def median(input: T, dim=-1, *, keepdim=False, dtype=None, mask: TI = None):
    """Matches `torch.masked.median`: the lower median of the masked-in elements."""
    d = _canonical_dim(dim, input.ndim)[0]
    was_float = is_float(input)
    x = input if was_float else input.astype(jnp.float32)
    # Masked-out elements become NaN and nanmedian skips them; a fully masked slice is NaN.
    v = _impl("nanmedian")(_fill("median", x, mask), d, keepdim)[0]
    if was_float:
        return v
    if bool(jnp.isnan(v).any()):
        raise ValueError(
            "masked median expects no fully masked out rows if dtype is not floating point"
        )
    return _cast(v, dtype, input)


@_masked("logsumexp")
def logsumexp(input: T, dim=None, *, keepdim=False, dtype=None, mask: TI = None):
    """Matches `torch.masked.logsumexp`: -inf where a slice is fully masked out."""
    dims = _canonical_dim(dim, input.ndim)
    r = _impl("logsumexp")(_fill("logsumexp", input, mask), dims, keepdim)
    return _cast(r, dtype, input)


@_masked("logaddexp")
def logaddexp(input: T, other: T, *, dtype=None, input_mask: TI = None, other_mask: TI = None):
    """Matches `torch.masked.logaddexp`: masked-out elements count as -inf."""
    ct = jnp.promote_types(input.dtype, other.dtype)
    if not (jnp.issubdtype(ct, jnp.floating) or jnp.issubdtype(ct, jnp.complexfloating)):
        raise NotImplementedError(f"\"logaddexp_cpu\" not implemented for '{c10_name(ct)}'")
    a = _fill("logaddexp", input, input_mask).astype(ct)
    b = _fill("logaddexp", other, other_mask).astype(ct)
    return _cast(_impl("logaddexp")(a, b), dtype, input)


def _norm(input, ord, dim, keepdim, dtype, mask):
    x = _fill("norm", input, mask, ord)
    dims = _canonical_dim(dim, input.ndim)
    return _impl("linalg.vector_norm")(
        x, ord, dims, bool(keepdim), dtype=dtype if dtype is not None else _jt_dtype(input)
    )


@_masked("norm", node="LinalgVectorNormBackward0")
def norm(input: T, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask: TI = None):
    """Matches `torch.masked.norm`: the vector norm of the masked-in elements."""
    return _norm(input, ord, dim, keepdim, dtype, mask)


def _var_std(name, take_sqrt):
    def impl(
        input: T,
        dim=None,
        unbiased=None,
        *,
        correction=None,
        keepdim=False,
        dtype=None,
        mask: TI = None,
    ):
        if unbiased is not None and correction is not None:
            raise AssertionError("Only one of unbiased and correction may be given")
        if input.dtype == jnp.bool_:
            # PyTorch subtracts the mean from the input itself, which bool refuses.
            raise RuntimeError(
                "Subtraction, the `-` operator, with a bool tensor is not "
                "supported. If you are trying to invert a mask, use the `~` or "
                "`logical_not()` operator instead."
            )
        corr = 1.0
        if unbiased is not None:
            corr = 1.0 if unbiased else 0.0
        if correction is not None:
            corr = float(correction)
        # Integer inputs compute (and return) float32, not the default dtype.
        dt = dtype.np if dtype is not None else input.dtype
        if not (jnp.issubdtype(dt, jnp.floating) or jnp.issubdtype(dt, jnp.complexfloating)):
            dt = jnp.dtype(jnp.float32)
        dims = _canonical_dim(dim, input.ndim)
        axes = _axes(dims, input.ndim)
        count = _count(input, mask, dims, True)
        xd = input.astype(dt)
        mean = jnp.sum(_fill("sum", xd, mask), axis=axes, keepdims=True) / count.astype(dt)
        dev = xd - mean
        sq = dev * jnp.conj(dev) if jnp.issubdtype(dt, jnp.complexfloating) else dev * dev
        total = jnp.sum(_fill("sum", sq, mask), axis=axes, keepdims=bool(keepdim))
        count = count.reshape(total.shape)
        real = jnp.real(total).dtype
        n = jnp.maximum(count.astype(real) - corr, 0) if corr != 0 else count.astype(real)
        out = (total / n).astype(dt)
        return jnp.sqrt(out) if take_sqrt else out

    impl.__name__ = name
    impl.__doc__ = (
        f"Matches `torch.masked.{name}`: over the masked-in elements; NaN where "
        "a slice is fully masked out."
    )
    return _masked(name, node="SqrtBackward0" if take_sqrt else "DivBackward0")(impl)


var = _var_std("var", False)
std = _var_std("std", True)


# ---------------------------------------------------------------------------
# Scans and normalizations (the result keeps the input's shape)


def _scan(name, identity):
    def impl(input: T, dim, *, dtype=None, mask: TI = None):
        d = _canonical_dim(dim, input.ndim)[0]
        dt = dtype if dtype is not None else _jt_dtype(input)
        return _cast(_impl(name)(_fill(identity, input, mask), d, dtype=dt), dtype, input)

    impl.__name__ = name
    impl.__doc__ = (
        f"Matches `torch.masked.{name}`: masked-out elements count as {identity}'s identity."
    )
    return _masked(name)(impl)


cumsum = _scan("cumsum", "sum")
cumprod = _scan("cumprod", "prod")


def _softmax_like(name, identity, kernel, negate=False, **record):
    def impl(input: T, dim, *, dtype=None, mask: TI = None):
        d = _canonical_dim(dim, input.ndim)[0]
        x = _fill(identity, input, mask)
        return _impl(kernel)(-x if negate else x, d, dtype)

    impl.__name__ = name
    impl.__doc__ = (
        f"Matches `torch.masked.{name}`: masked-out elements get weight 0; a fully "
        "masked-out slice is NaN."
    )
    return _masked(name, **record)(impl)


softmax = _softmax_like("softmax", "amax", "softmax", saves_result=True)
log_softmax = _softmax_like("log_softmax", "amax", "log_softmax", saves_result=True)
# softmin(x) is softmax(-x); masked-out elements are +inf before the negation.
softmin = _softmax_like("softmin", "amin", "softmax", negate=True, node="SoftmaxBackward0")


@_masked("normalize", node="DivBackward0")
def normalize(input: T, ord, dim, *, eps=1e-12, dtype=None, mask: TI = None):
    """Matches `torch.masked.normalize`: masked-in elements over their `ord`-norm along `dim`."""
    nrm = _norm(input, ord, dim, True, dtype, mask)
    denom = jnp.maximum(nrm, jnp.asarray(eps, nrm.dtype))
    x = _fill("sum", input, mask)
    return x / denom.astype(jnp.promote_types(x.dtype, denom.dtype))
