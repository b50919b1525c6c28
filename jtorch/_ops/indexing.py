"""`Tensor.__getitem__`/`__setitem__`, `index`, `index_put`, `copy_`.

An index splits into a basic part (ints, slices, None, Ellipsis) that becomes
one `Index` view step, and an advanced part (integer/bool tensors, lists)
applied to that view with numpy's placement rules, which PyTorch follows.
Reading with only basic indices returns a view; writing through any index
writes into the tensor's storage.
"""

import builtins
import functools
import operator

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _meta, _views
from .._dtype import c10_name
from .._tensor import Tensor, wrap
from . import _dispatch, _index_forms
from ._registry import NONE, TI, TL, T, broadcast_error, composite, op, write_inplace


def _is_tracer(a) -> bool:
    return _meta.no_values(a)


def _as_index_tensor(v):
    """Lists, numpy arrays and 0-d integer tensors as an index entry."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, (list, np.ndarray)):
        arr = np.asarray(v)
        if arr.dtype == object:
            arr = np.asarray([int(x) if not isinstance(x, Tensor) else x.item() for x in v])
        if arr.size == 0:
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return wrap(jnp.asarray(arr if arr.dtype == np.bool_ else arr.astype(np.int64)))
    return v


def _consumed(entry) -> int:
    if entry is None or entry is Ellipsis:
        return 0
    if _index_forms.is_mask(entry):
        return entry.ndim
    return 1


def _normalize(index, ndim):
    """The index as a list of entries (see `_index_forms`) with Ellipsis expanded."""
    entries = _index_forms.entries(index)
    used = builtins.sum(_consumed(e) for e in entries)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    ells = [k for k, e in enumerate(entries) if e is Ellipsis]  # `index` would call ==
    if not ells:
        return entries + [slice(None)] * (ndim - used)
    # PyTorch lets every Ellipsis skip the unspecified dims: the first covers them, a later
    # one skips past the last dim, harmless unless an index that takes a dim follows it
    if len(ells) > 1 and ndim > used and builtins.any(_consumed(e) for e in entries[ells[1] :]):
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out = [e for e in entries[ells[0] + 1 :] if e is not Ellipsis]
    return entries[: ells[0]] + [slice(None)] * (ndim - used) + out


def _slice_bound(v):
    """A slice bound as CPython reads it (`__index__`: ints, numpy ints, 0-d int tensors)."""
    if v is None:
        return None
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(
            "slice indices must be integers or None or have an __index__ method"
        ) from None


def _as_bool(mask: Tensor) -> Tensor:
    """A uint8 mask (deprecated in PyTorch, still accepted) as the bool mask it means."""
    return mask if mask.dtype.np == np.bool_ else wrap(mask._array != 0)


def _split(entries, shape):
    """(basic Index step entries, advanced entries over the basic view's dims, has_advanced)."""
    basic, advanced, d = [], [], 0
    has_adv = False
    for e in entries:
        if e is None:
            basic.append(None)
            advanced.append(slice(None))
            continue
        if _index_forms.is_mask(e) and e.ndim == 0:
            # x[True] adds a dim of size 1, x[False] one of size 0.
            basic.append(None)
            advanced.append(_as_bool(e))
            has_adv = True
            continue
        if isinstance(e, int):
            n = shape[d]
            if not -n <= e < n:
                raise IndexError(f"index {e} is out of bounds for dimension {d} with size {n}")
            basic.append(e + n if e < 0 else e)
            d += 1
            continue
        if isinstance(e, slice):
            if e.step is not None and _slice_bound(e.step) <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, step = slice(
                _slice_bound(e.start), _slice_bound(e.stop), _slice_bound(e.step)
            ).indices(shape[d])
            stop = builtins.max(stop, start)
            basic.append(slice(start, stop, step))
            advanced.append(slice(None))
            d += 1
            continue
        # an index tensor
        k = _consumed(e)
        for j in builtins.range(k):
            basic.append(slice(0, shape[d + j], 1))
        if _index_forms.is_mask(e):
            for j in builtins.range(k):
                if e.shape[j] != shape[d + j]:
                    raise IndexError(
                        f"The shape of the mask {list(e.shape)} at index {j} does "
                        f"not match the shape of the indexed tensor {list(shape)} at "
                        f"index {d + j}"
                    )
            e = _as_bool(e)
        advanced.append(e)
        has_adv = True
        d += k
    return basic, advanced, has_adv


def _basic_view(self, basic):
    trivial = (
        all(
            isinstance(b, slice) and b.start == 0 and b.step == 1 and b.stop == n
            for b, n in zip(basic, self.shape)
        )
        and len(basic) == self.ndim
    )
    return self if trivial else _basic_index(self, tuple(basic))


@op(promote=NONE, view=True, method=False, out=False)
def _basic_index(input: T, basic):
    """The view of ints and slices (`x[0]`, `x[1:, ::2]`); a recorded view op."""
    return _views.Index(basic, tuple(input.shape))


def _adv_arrays(advanced, view_shape):
    """Advanced entries as jax index arrays (bool masks become integer arrays)."""
    out = []
    d = 0
    for e in advanced:
        if isinstance(e, slice):
            out.append(e)
            d += 1
            continue
        arr = e._array
        if arr.dtype == jnp.bool_:
            if arr.ndim == 0:
                out.append(None if bool(arr) else np.zeros((0,), np.int64))
                d += 1
                continue
            if _is_tracer(arr):
                raise RuntimeError(
                    "boolean mask indexing has a data-dependent shape and cannot be "
                    "traced; use torch.where instead"
                )
            out.extend(np.nonzero(np.asarray(arr)))
            d += arr.ndim
            continue
        if not _is_tracer(arr) and arr.size:
            a = np.asarray(arr)
            n = view_shape[d]
            lo, hi = a.min(), a.max()
            if lo < -n or hi >= n:
                bad = hi if hi >= n else lo
                raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
        out.append(arr)
        d += 1
    shapes = [tuple(a.shape) for a in out if a is not None and not isinstance(a, slice)]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with "
            f"shapes {', '.join(str(list(s)) for s in shapes)}"
        ) from None
    return tuple(out)


@op(promote=NONE, out=False, method=False, name="_index", node="IndexBackward0")
def _index(input: T, indices: TI, *, slices=()):
    """Advanced indexing: `indices` fill the "adv" positions of `slices`."""
    return input[_index_key(indices, slices)]


def _index_key(indices, spec):
    """A jax index from a spec ("adv": the next index array, "new": None, "all": `:`)."""
    it = iter(indices)
    return tuple(next(it) if s == "adv" else (None if s == "new" else slice(None)) for s in spec)


def _adv_call(arrays, like):
    """The advanced index arrays as (spec, index tensors) for `_index`/`_index_put`, on the
    device of `like` (the indexed tensor): PyTorch takes CPU index tensors and Python lists
    for a tensor on an accelerator."""
    spec = tuple(
        "adv" if not isinstance(a, slice) and a is not None else ("new" if a is None else "all")
        for a in arrays
    )
    tensors = tuple(
        wrap(_device.place_like(a, like._array))
        for a in arrays
        if not isinstance(a, slice) and a is not None
    )
    return spec, tensors


@composite(name="__getitem__", method="__getitem__", function=False)
def getitem(self, index):
    """Matches `torch.Tensor.__getitem__`."""
    if isinstance(index, int) and self.ndim:  # the common x[i]
        n = self.shape[0]
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {n}")
        return self.select(0, index)
    entries = _normalize(index, self.ndim)
    basic, advanced, has_adv = _split(entries, tuple(self.shape))
    view = _basic_view(self, basic)
    if not has_adv:
        return view
    _index_forms.warn_byte_masks(entries)
    arrays = _adv_arrays(advanced, tuple(view.shape))
    spec, tensors = _adv_call(arrays, view)
    return _index(view, tensors, slices=spec)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _put(input, indices, values, spec):
    """`input.at[key].set(values)` with PyTorch's gradients: every value written (duplicate
    positions included) gets the gradient of its position, as index_put's backward gathers
    it; jax would give it only to the duplicate that won the write."""
    return input.at[_index_key(indices, spec)].set(values)


def _put_fwd(input, indices, values, spec):
    return _put(input, indices, values, spec), indices


def _put_bwd(spec, indices, g):
    key = _index_key(indices, spec)
    zeros = tuple(np.zeros(np.shape(i), jax.dtypes.float0) for i in indices)
    return g.at[key].set(0), zeros, g[key]


_put.defvjp(_put_fwd, _put_bwd)


@op(promote=NONE, out=False, method=False, name="_index_put")
def _index_put_impl(input: T, indices: TI, values: T, *, slices=(), accumulate=False):
    key = _index_key(indices, slices)
    values = values.astype(input.dtype)
    target_shape = input[key].shape
    try:
        values = jnp.broadcast_to(values, target_shape)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
            f"broadcast to indexing result of shape {list(target_shape)}"
        ) from None
    if not accumulate:
        return _put(input, tuple(indices), values, slices)
    # accumulating into bools is a logical or, which jax spells as max
    return input.at[key].max(values) if input.dtype == jnp.bool_ else input.at[key].add(values)


def _check_broadcast(src_shape, dst_shape):
    """copy_'s shape rule: `src` must broadcast to exactly `dst`'s shape."""
    err = broadcast_error(dst_shape, src_shape)
    if err is not None:
        raise err
    if len(src_shape) > len(dst_shape):
        full = np.broadcast_shapes(tuple(src_shape), tuple(dst_shape))
        if full != tuple(dst_shape):
            raise RuntimeError(
                f"output with shape {list(dst_shape)} doesn't match the broadcast "
                f"shape {list(full)}"
            )


@composite(name="__setitem__", method="__setitem__", function=False)
def setitem(self, index, value):
    """Matches `torch.Tensor.__setitem__`: writes into this tensor's storage."""
    value = _index_forms.value_tensor(value, self)  # PyTorch converts the value first
    if index is False:  # PyTorch writes nothing and checks nothing for x[False] = v
        return
    entries = _normalize(index, self.ndim)
    basic, advanced, has_adv = _split(entries, tuple(self.shape))
    view = _basic_view(self, basic)
    value = _strip_leading_ones(value)
    if not has_adv:
        if value.ndim and tuple(value.shape) != tuple(view.shape):
            value = value.expand(view.shape)  # expand's errors are setitem's
        view.copy_(value)
        return
    index_tensors = [e for e in entries if isinstance(e, Tensor)]
    if (
        len(index_tensors) == 1
        and _index_forms.is_mask(index_tensors[0])
        and index_tensors[0].ndim
        and value.numel() == 1
    ):
        # PyTorch's index_put_ fills through masked_fill_ here (casting the value), and
        # masked_fill_ refuses the deprecated uint8 masks
        if index_tensors[0].dtype.np != np.bool_:
            raise RuntimeError(
                "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
            )
        value = value.to(self.dtype)
    else:
        _index_forms.warn_byte_masks(entries)
    if value.dtype is not self.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got "
            f"{c10_name(self.dtype)} for the destination and "
            f"{c10_name(value.dtype)} for the source."
        )
    arrays = _adv_arrays(advanced, tuple(view.shape))
    spec, tensors = _adv_call(arrays, view)
    result = _index_put_impl(view, tensors, value, slices=spec)
    write_inplace(view, result)


def _strip_leading_ones(value: Tensor) -> Tensor:
    """The value without its leading size-1 dims (PyTorch's slicePrefix1sSize), so a value
    with more leading ones than the target still assigns."""
    shape = tuple(value.shape)
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return value.view(shape[k:]) if k else value


@op(promote=NONE, out=False, method=False, name="_copy_from", node="CopyBackwards")
def _copy_from(self: T, src: T):
    return jnp.broadcast_to(src.astype(self.dtype), self.shape)


@composite(function=False)
def copy_(self, src, non_blocking=False):
    """Matches `torch.Tensor.copy_`: broadcasts and casts `src` into this tensor."""
    if not isinstance(src, Tensor):
        src = wrap(jnp.asarray(src))
    _check_broadcast(tuple(src.shape), tuple(self.shape))
    if src.device != self.device:
        if self.is_meta:  # copying into a meta tensor checks shapes and moves nothing
            src = wrap(_meta.like(src._array))
        elif src.is_meta:
            raise NotImplementedError(_meta.NO_DATA)
        elif not isinstance(self._array, jax.core.Tracer):
            # (a traced tensor has no device of its own: jax places the traced program's data)
            src = wrap(jax.device_put(src._array, next(iter(self._array.devices()))))
    if (
        not self._rg
        and not src._rg
        and _dispatch.forward_ad is None
        and src._array.shape == self._shape()
        and src._array.dtype == self.dtype.np
        and type(src._array) is not _meta.MetaArray
    ):
        # Nothing to broadcast, cast or differentiate: `src`'s array is the new value (no
        # kernel, so no compile for a new shape: initialising parameters writes many).
        write_inplace(self, src)
        return self
    write_inplace(self, _copy_from(self, src))
    return self


def _tensor_indices(indices, shape, like):
    """index_put's indices as (spec, index tensors); bool masks become their nonzero indices.

    Like `x[idx] = v`, the indices are checked against `shape` on the host when their values
    are known (jax would clip or drop an index out of range silently).
    """
    if len(indices) > len(shape):
        raise IndexError(
            f"too many indices for tensor of dimension {len(shape)} (got {len(indices)})"
        )
    spec, entries, d = [], [], 0
    for i in indices:
        if i is None:
            spec.append("all")
            entries.append(slice(None))
            d += 1
            continue
        i = _as_index_tensor(i)
        if i.dtype.is_floating_point or i.dtype.is_complex:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if i.dtype.np == np.bool_ and i.ndim == 0:
            # x[True] is a new axis of size 1, x[False] one of size 0 (as in `_split`)
            if _is_tracer(i._array):
                raise RuntimeError(
                    "index_put with a boolean mask has a data-dependent shape and cannot be traced"
                )
            spec.append("new")
            if not bool(i._array):
                spec.append("adv")
                entries.append(wrap(jnp.zeros((0,), jnp.int64)))
                shape = shape[:d] + (1,) + shape[d:]
                d += 1
            continue
        k = _consumed(i) if i.dtype.np == np.bool_ else 1
        if i.dtype.np == np.bool_:
            for j in builtins.range(k):
                if d + j >= len(shape) or i.shape[j] != shape[d + j]:
                    raise IndexError(
                        f"The shape of the mask {list(i.shape)} at index {j} does "
                        f"not match the shape of the indexed tensor {list(shape)} "
                        f"at index {d + j}"
                    )
        spec.extend(["adv"] * builtins.max(k, 1) if i.dtype.np == np.bool_ and i.ndim else ["adv"])
        entries.append(i)
        d += k
    arrays = _adv_arrays(entries, tuple(shape))  # bounds checks, masks -> positions
    tensors = tuple(
        wrap(_device.place_like(a, like._array)) for a in arrays if not isinstance(a, slice)
    )
    return tuple(spec), tensors


@composite(method=True)
def index_put(input, indices, values, accumulate=False):
    """Matches `torch.index_put`: `indices` is a tuple of index tensors (None for `:`)."""
    spec, tensors = _tensor_indices(tuple(indices), tuple(input.shape), input)
    if isinstance(values, Tensor) and values.ndim == 0 and values.device != input.device:
        values = values.to(input.device)  # (PyTorch takes a 0-dim value from another device)
    return _index_put_impl(input, tensors, values, slices=spec, accumulate=accumulate)


@composite
def index_put_(input, indices, values, accumulate=False):
    """Matches `torch.index_put_` / `Tensor.index_put_`: `index_put` written into `input`."""
    write_inplace(input, index_put(input, indices, values, accumulate))
    return input


# ---------------------------------------------------------------------------
# Unsafe masked indexing (indices clamped into range)


def _clamped_indices(x, indices):
    """Index tensors clamped into range, as PyTorch's unsafe masked ops do before gathering."""
    if len(indices) > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {len(indices)})")
    out = []
    for i, idx in enumerate(indices):
        if idx.dtype not in (jnp.int64, jnp.int32):
            raise RuntimeError(
                f"_unsafe_masked_index found unexpected index type {c10_name(idx.dtype)}"
            )
        out.append(jnp.clip(idx, 0, builtins.max(x.shape[i] - 1, 0)))
    return tuple(out)


def _check_mask(mask):
    if mask.dtype != jnp.bool_:
        raise RuntimeError(
            f"_unsafe_masked_index found mask dtype {c10_name(mask.dtype)}; expected Bool"
        )


@op(name="_unsafe_masked_index", publish=True, promote=NONE, method=False, out=False)
def _unsafe_masked_index(input: TI, mask: TI, indices: TL, fill):
    """Matches `torch._unsafe_masked_index`: input[indices] where mask is true, else fill.

    Indices are clamped into range first, so masked-off positions may hold any index.
    """
    _check_mask(mask)
    idx = _clamped_indices(input, indices)
    fill_value = jnp.asarray(fill).astype(input.dtype)
    if input.size == 0:
        shape = jnp.broadcast_shapes(*(i.shape for i in idx)) + input.shape[len(idx) :]
        return jnp.full(shape, fill_value, input.dtype)
    return jnp.where(mask, input[idx], fill_value)


@op(name="_unsafe_masked_index_put_accumulate", publish=True, promote=NONE, method=False, out=False)
def _unsafe_masked_index_put_accumulate(input: TI, mask: TI, indices: TL, values: TI):
    """Matches `torch._unsafe_masked_index_put_accumulate`: input.index_put(indices,
    values * mask, accumulate=True) with indices clamped into range."""
    _check_mask(mask)
    if values.dtype != input.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got "
            f"{c10_name(input.dtype)} for the destination and "
            f"{c10_name(values.dtype)} for the source."
        )
    idx = _clamped_indices(input, indices)
    target = jnp.broadcast_shapes(*(i.shape for i in idx)) + input.shape[len(idx) :]
    values = jnp.where(mask, values, jnp.zeros((), values.dtype))
    values = jnp.broadcast_to(values, target)
    if input.dtype == jnp.bool_:  # accumulating booleans is a logical or
        return input.astype(jnp.int32).at[idx].add(values.astype(jnp.int32)) > 0
    return input.at[idx].add(values)
