"""Mask ops (`masked_fill`, `masked_scatter`, `masked_select`), `nonzero` and `isin`."""

import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _meta
from .._dtype import c10_name
from .._tensor import Tensor, wrap
from . import _registry
from ._kernel_helpers import index_values
from ._registry import (
    ALWAYS_BOOL,
    NONE,
    TI,
    KernelCall,
    T,
    broadcast_error,
    call_out,
    composite,
    op,
)

kernel = op(promote=NONE, method=False, out=False)


# ---------------------------------------------------------------------------
# Masks


def _mask_dtype_name(dt):
    return {
        "float32": "float",
        "float64": "double",
        "uint8": "unsigned char",
        "int64": "long",
        "int32": "int",
        "float16": "c10::Half",
        "int16": "short",
        "int8": "signed char",
        "bfloat16": "c10::BFloat16",
    }.get(dt._name, dt._name)


@op(
    promote=NONE,
    inplace=True,
    node=lambda value: (
        "MaskedFillBackward1" if isinstance(value, Tensor) else "MaskedFillBackward0"
    ),
)
def masked_fill(input: T, mask: TI, value: T):
    if mask.dtype != jnp.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{_mask_dtype_name(_dtype.from_np(mask.dtype))}"
        )
    value = jnp.asarray(value)
    if value.ndim:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got "
            f"tensor with {value.ndim} dimension(s)."
        )
    if jnp.iscomplexobj(value) and not jnp.iscomplexobj(input):
        raise RuntimeError(
            f"value cannot be converted to type "
            f"{_mask_dtype_name(_dtype.from_np(input.dtype))} without overflow"
        )
    return jnp.where(mask, value.astype(input.dtype), input)


def _masked_scatter_checks(input, mask, source):
    if mask.dtype is not _dtype.bool:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with "
            f"dtype {c10_name(mask.dtype)}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but "
            f"got{c10_name(input.dtype)} and {c10_name(source.dtype)}"
        )
    m = index_values(mask)
    if m is not None and int(m.sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")


@kernel(name="_masked_scatter")
def _masked_scatter(input: T, mask: TI, source: T):
    shape = jnp.broadcast_shapes(input.shape, mask.shape)
    input, mask = jnp.broadcast_to(input, shape), jnp.broadcast_to(mask, shape)
    flat = source.reshape(-1)
    if flat.size == 0:
        return input
    pos = jnp.clip(jnp.cumsum(mask.reshape(-1)) - 1, 0, flat.size - 1)
    return jnp.where(mask, flat[pos].reshape(shape), input)


@composite(inplace=True)
def masked_scatter(input, mask, source):
    """Matches `torch.masked_scatter`."""
    _masked_scatter_checks(input, mask, source)
    return KernelCall(_masked_scatter, input, mask, source)


# The gather behind masked_select, named as PyTorch names its node (MaskedSelectBackward0).
@_registry.kernel(name="masked_select", promote=NONE)
def _gather_selected(input: T, index: TI, shape):
    return jnp.broadcast_to(input, shape).reshape(-1)[index]


@composite(method=True)
def masked_select(input, mask, *, out=None):
    """Matches `torch.masked_select`.

    Which elements are selected (their number is the result's length) is read from the mask
    here, eagerly; a compiled kernel gathers them. Its backward, a scatter to those
    positions, reads no host values, so a training loop's graph through it can fuse.
    """
    if mask.dtype is not _dtype.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    err = broadcast_error(tuple(mask.shape), tuple(input.shape))  # (PyTorch's a and b)
    if err is not None:
        raise err
    shape = tuple(jnp.broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
    if _meta.is_meta(mask._array) or _meta.is_meta(input._array):
        raise NotImplementedError(_meta.VALUE_DEPENDENT)
    # (a traced mask raises jax's TracerArrayConversionError here: the shape depends on it)
    positions = np.flatnonzero(np.broadcast_to(np.asarray(mask._array), shape))
    index = wrap(_device.place_like(positions.astype(np.int64), input._array))
    return call_out(_gather_selected._op, (input, index, shape), out)


# ---------------------------------------------------------------------------
# nonzero


def _nonzero(array, as_tuple):
    # (worked out on the host; the result goes where the input is)
    a = np.asarray(array)
    if as_tuple:
        return tuple(
            _device.place_like(i.astype(np.int64), array)
            for i in np.nonzero(a.reshape(-1) if a.ndim == 0 else a)
        )
    if a.ndim == 0:
        return _device.place_like(np.zeros((int(a != 0), 0), np.int64), array)
    return _device.place_like(np.argwhere(a).astype(np.int64), array)


@op(promote=NONE, jit=False, differentiable=False)
def nonzero(input: T, *, as_tuple=False):
    return _nonzero(input, as_tuple)


@op(promote=NONE, jit=False, differentiable=False)
def argwhere(input: T):
    return _nonzero(input, False)


@op(promote=NONE, differentiable=False)
def nonzero_static(input: T, *, size, fill_value=-1):
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if input.ndim == 0:
        return jnp.zeros((size, 0), jnp.int64)
    if input.size == 0:
        return jnp.full((size, input.ndim), fill_value, jnp.int64)
    idx = jnp.nonzero(input, size=size, fill_value=fill_value)
    return jnp.stack([i.astype(jnp.int64) for i in idx], axis=1)


# ---------------------------------------------------------------------------
# isin


@op(promote=ALWAYS_BOOL, method=False, differentiable=False)
def isin(elements: T, test_elements: T, *, assume_unique=False, invert=False):
    elements, test = jnp.asarray(elements), jnp.asarray(test_elements).reshape(-1)
    if elements.dtype == jnp.bool_ or jnp.iscomplexobj(elements):
        raise RuntimeError(
            f"Unsupported input type encountered for isin(): "
            f"{c10_name(_dtype.from_np(elements.dtype))}"
        )
    if test.size <= 64:
        found = jnp.any(elements[..., None] == test, axis=-1)
    else:  # sort once, then one binary search per element
        test = jnp.sort(test)
        pos = jnp.clip(jnp.searchsorted(test, elements), 0, test.size - 1)
        found = test[pos] == elements
    return ~found if invert else found
