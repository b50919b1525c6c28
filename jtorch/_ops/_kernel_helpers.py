"""Helpers the op families share: dtype tests on jax arrays, reduction dims, index checks.

They live below the families so that a family split in two (`pointwise` and
`pointwise_math`, `reduction` and `scans`/`statistics`/`differences`, `scatter` and
`masked`) imports them
from here instead of from its sibling.
"""

import functools

import jax.numpy as jnp
import numpy as np

from .. import _dtype, _meta
from .._dtype import c10_name
from .._tensor import wrap_dim
from . import _registry

_HALF = (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16))


def is_bool(a) -> bool:
    return jnp.result_type(a) == jnp.bool_


def is_integral(a) -> bool:
    """Integer or bool, as c10's `isIntegralType(t, includeBool=True)`."""
    return jnp.issubdtype(jnp.result_type(a), jnp.integer) or is_bool(a)


def is_float(a) -> bool:
    return jnp.issubdtype(jnp.result_type(a), jnp.floating)


def is_complex(a) -> bool:
    return jnp.issubdtype(jnp.result_type(a), jnp.complexfloating)


def default_float():
    """The default float dtype (`torch.get_default_dtype()`) as a numpy dtype."""
    return _dtype.get_default_dtype().np


def need_float(kernel: str, a, complex_ok: bool = False) -> None:
    """Raises PyTorch's error for a float-only CPU kernel given another dtype."""
    dt = jnp.result_type(a)
    if jnp.issubdtype(dt, jnp.floating) or (complex_ok and jnp.issubdtype(dt, jnp.complexfloating)):
        return
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{c10_name(dt)}'")


def by_dim(name: str):
    """The node-name rule of a reduction PyTorch overloads by `dim`: `<name>Backward0` over
    all elements, `<name>Backward1` along dims (`node=by_dim("Sum")`)."""
    return lambda dim: f"{name}Backward1" if dim is not None else f"{name}Backward0"


def private_op(impl, promote=_registry.DEFAULT, jit=True, **record):
    """A kernel not published under any torch name: `(call, call_inplace)` of its arguments.
    `record`: its autograd facts, as for `_registry.op` (`node=`)."""
    k = _registry.kernel(impl, promote=promote, jit=jit, **record)
    return k, k.inplace


def not_implemented(kernel: str, a) -> NotImplementedError:
    """PyTorch's dispatch error for a dtype a CPU kernel does not support."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{c10_name(a)}'")


def dims_arg(dim, ndim):
    """`dim` as a tuple of non-negative ints (None: all dims; () for a 0-d tensor).

    A 0-d tensor accepts dim 0 or -1, as PyTorch does, and reducing it over
    that dim leaves it unchanged.
    """
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return None
        dims = tuple(wrap_dim(int(d), ndim) for d in dim)
        if len(set(dims)) != len(dims):
            dup = next(d for d in dims if dims.count(d) > 1)
            raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    else:
        dims = (wrap_dim(int(dim), ndim),)
    return () if ndim == 0 else dims


def extreme_identity(reduce: str, dtype):
    """The identity of `reduce` ("amax" or "amin") in `dtype`, a Python or numpy scalar:
    -inf/inf, the integers' lowest/highest, False/True. Raises ValueError for complex."""
    if jnp.issubdtype(dtype, jnp.floating):
        return -np.inf if reduce == "amax" else np.inf
    if dtype == np.bool_:
        return reduce == "amin"
    info = jnp.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def sum_dtype(a, dtype):
    """sum/prod accumulate integers and bools in int64, as PyTorch does."""
    if dtype is not None:
        return dtype.np
    if is_integral(a):
        return jnp.int64
    return a.dtype


def accumulate(a):
    """The array in its accumulation dtype: float32 for half types, as PyTorch's CPU kernels
    compute them (their "opmath" type)."""
    return a.astype(jnp.float32) if a.dtype in _HALF else a


def run_in_opmath(fn):
    """Runs `fn` in float32 on float16/bfloat16 arrays and rounds once at the end.

    PyTorch's CPU kernels compute half types in float32 ("opmath"); computing in the half
    type itself rounds every intermediate and drifts past half tolerances. (`accumulate`
    is the same rule for one array.)
    """

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        half = next((a.dtype for a in args if getattr(a, "dtype", None) in _HALF), None)
        if half is None:
            return fn(*args, **kwargs)
        args = [a.astype(jnp.float32) if getattr(a, "dtype", None) == half else a for a in args]
        out = fn(*args, **kwargs)
        if isinstance(out, tuple):
            return tuple(o.astype(half) if o.dtype == jnp.float32 else o for o in out)
        return out.astype(half) if out.dtype == jnp.float32 else out

    return wrapped


def index_values(t):
    """An index tensor's values as numpy, or None when traced (value checks are then skipped)."""
    a = t._array
    return None if _meta.no_values(a) or a.size == 0 else np.asarray(a)
