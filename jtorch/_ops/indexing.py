"""`Tensor.__getitem__`/`__setitem__`, `index`, `index_put`, `copy_`.

An index splits into a basic part (ints, slices, None, Ellipsis) that becomes
one `Index` view step, and an advanced part (integer/bool tensors, lists)
applied to that view with numpy's placement rules, which PyTorch follows.
Reading with only basic indices returns a view; writing through any index
writes into the tensor's storage.
"""

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from .. import _meta, _views
from .._tensor import Tensor, wrap
from . import _registry
from ._registry import NONE, T, TI, broadcast_error, composite, op, write_inplace


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
    if isinstance(entry, Tensor) and entry.dtype.np == np.bool_:
        return builtins.max(entry.ndim, 1) if entry.ndim else 0
    return 1


def _normalize(index, ndim):
    """The index as a list with Ellipsis expanded; bool Python scalars become masks."""
    if not isinstance(index, tuple):
        index = (index,)
    entries = []
    for e in index:
        if isinstance(e, builtins.bool):
            e = wrap(jnp.asarray(e))
        elif isinstance(e, (list, np.ndarray)):
            e = _as_index_tensor(e)
        elif isinstance(e, Tensor) and e.ndim == 0 and e.dtype.np != np.bool_:
            if e.dtype.is_floating_point or e.dtype.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            e = int(e.item()) if not _is_tracer(e._array) else e
        elif isinstance(e, np.integer):
            e = int(e)
        elif not (e is None or e is Ellipsis or isinstance(e, (int, slice, Tensor))):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got "
                             f"{type(e).__name__})")
        entries.append(e)
    n_ell = builtins.sum(1 for e in entries if e is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(_consumed(e) for e in entries)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if n_ell:
        i = next(k for k, e in enumerate(entries) if e is Ellipsis)  # `index` would call ==
        entries[i:i + 1] = [slice(None)] * (ndim - used)
    else:
        entries += [slice(None)] * (ndim - used)
    return entries


def _split(entries, shape):
    """(basic Index step entries, advanced entries over the basic view's dims, has_advanced)."""
    basic, advanced, d = [], [], 0
    has_adv = False
    for e in entries:
        if e is None:
            basic.append(None)
            advanced.append(slice(None))
            continue
        if isinstance(e, Tensor) and e.dtype.np == np.bool_ and e.ndim == 0:
            # x[True] adds a dim of size 1, x[False] one of size 0.
            basic.append(None)
            advanced.append(e)
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
            if e.step is not None and int(e.step) <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, step = slice(e.start if e.start is None else int(e.start),
                                      e.stop if e.stop is None else int(e.stop),
                                      e.step if e.step is None else int(e.step)).indices(shape[d])
            stop = builtins.max(stop, start)
            basic.append(slice(start, stop, step))
            advanced.append(slice(None))
            d += 1
            continue
        # an index tensor
        k = _consumed(e)
        for j in builtins.range(k):
            basic.append(slice(0, shape[d + j], 1))
        if e.dtype.np == np.bool_:
            for j in builtins.range(k):
                if e.shape[j] != shape[d + j]:
                    raise IndexError(f"The shape of the mask {list(e.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor {list(shape)} at "
                                     f"index {d + j}")
        elif e.dtype.is_floating_point or e.dtype.is_complex:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        advanced.append(e)
        has_adv = True
        d += k
    return basic, advanced, has_adv


def _basic_view(self, basic):
    trivial = all(isinstance(b, slice) and b.start == 0 and b.step == 1 and b.stop == n
                  for b, n in zip(basic, self.shape)) and len(basic) == self.ndim
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
                raise RuntimeError("boolean mask indexing has a data-dependent shape and cannot be "
                                   "traced; use torch.where instead")
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
    return tuple(out)


@op(promote=NONE, out=False, method=False, name="_index")
def _index(input: T, indices: TI, *, slices=()):
    """Advanced indexing: `indices` fill the "adv" positions of `slices`."""
    return input[_index_key(indices, slices)]


def _index_key(indices, spec):
    """A jax index from a spec ("adv": the next index array, "new": None, "all": `:`)."""
    it = iter(indices)
    return tuple(next(it) if s == "adv" else (None if s == "new" else slice(None)) for s in spec)


def _adv_call(arrays):
    """The advanced index arrays as (spec, index tensors) for `_index`/`_index_put`."""
    spec = tuple("adv" if not isinstance(a, slice) and a is not None else
                 ("new" if a is None else "all") for a in arrays)
    tensors = tuple(wrap(jnp.asarray(a)) for a in arrays if not isinstance(a, slice)
                    and a is not None)
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
    arrays = _adv_arrays(advanced, tuple(view.shape))
    spec, tensors = _adv_call(arrays)
    return _index(view, tensors, slices=spec)


@op(promote=NONE, out=False, method=False, name="_index_put")
def _index_put_impl(input: T, indices: TI, values: T, *, slices=(), accumulate=False):
    key = _index_key(indices, slices)
    values = values.astype(input.dtype)
    target_shape = input[key].shape
    try:
        values = jnp.broadcast_to(values, target_shape)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(target_shape)}") from None
    if not accumulate:
        return input.at[key].set(values)
    # accumulating into bools is a logical or, which jax spells as max
    return input.at[key].max(values) if input.dtype == jnp.bool_ else input.at[key].add(values)


def _value_tensor(value, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        return wrap(jnp.asarray(np.asarray(value), like.dtype.np))
    return wrap(jnp.asarray(value, like.dtype.np))


def _check_broadcast(src_shape, dst_shape):
    """copy_'s shape rule: `src` must broadcast to exactly `dst`'s shape."""
    err = broadcast_error(dst_shape, src_shape)
    if err is not None:
        raise err
    if len(src_shape) > len(dst_shape):
        full = np.broadcast_shapes(tuple(src_shape), tuple(dst_shape))
        if full != tuple(dst_shape):
            raise RuntimeError(f"output with shape {list(dst_shape)} doesn't match the broadcast "
                               f"shape {list(full)}")


@composite(name="__setitem__", method="__setitem__", function=False)
def setitem(self, index, value):
    """Matches `torch.Tensor.__setitem__`: writes into this tensor's storage."""
    entries = _normalize(index, self.ndim)
    basic, advanced, has_adv = _split(entries, tuple(self.shape))
    view = _basic_view(self, basic)
    value = _value_tensor(value, self)
    if not has_adv:
        view.copy_(value)
        return
    arrays = _adv_arrays(advanced, tuple(view.shape))
    spec, tensors = _adv_call(arrays)
    result = _index_put_impl(view, tensors, value, slices=spec)
    write_inplace(view, result)


@op(promote=NONE, out=False, method=False, name="_copy_from")
def _copy_from(self: T, src: T):
    return jnp.broadcast_to(src.astype(self.dtype), self.shape)


@composite(function=False)
def copy_(self, src, non_blocking=False):
    """Matches `torch.Tensor.copy_`: broadcasts and casts `src` into this tensor."""
    if not isinstance(src, Tensor):
        src = wrap(jnp.asarray(src))
    _check_broadcast(tuple(src.shape), tuple(self.shape))
    if src.device != self.device:
        if self.is_meta:        # copying into a meta tensor checks shapes and moves nothing
            src = wrap(_meta.like(src._array))
        elif src.is_meta:
            raise NotImplementedError(_meta.NO_DATA)
        else:
            src = wrap(jax.device_put(src._array, next(iter(self._array.devices()))))
    if (not self._rg and not src._rg and _registry.forward_ad is None
            and src._array.shape == self._shape() and src._array.dtype == self.dtype.np
            and type(src._array) is not _meta.MetaArray):
        # Nothing to broadcast, cast or differentiate: `src`'s array is the new value (no
        # kernel, so no compile for a new shape: initialising parameters writes many).
        write_inplace(self, src)
        return self
    write_inplace(self, _copy_from(self, src))
    return self


def _tensor_indices(indices, shape):
    """index_put's indices as (spec, index tensors); bool masks become their nonzero indices.

    Like `x[idx] = v`, the indices are checked against `shape` on the host when their values
    are known (jax would clip or drop an index out of range silently).
    """
    if len(indices) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got "
                         f"{len(indices)})")
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
                raise RuntimeError("index_put with a boolean mask has a data-dependent shape "
                                   "and cannot be traced")
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
                    raise IndexError(f"The shape of the mask {list(i.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor {list(shape)} "
                                     f"at index {d + j}")
        spec.extend(["adv"] * builtins.max(k, 1) if i.dtype.np == np.bool_ and i.ndim
                    else ["adv"])
        entries.append(i)
        d += k
    arrays = _adv_arrays(entries, tuple(shape))   # bounds checks, masks -> positions
    tensors = tuple(wrap(jnp.asarray(a)) for a in arrays if not isinstance(a, slice))
    return tuple(spec), tensors


@composite(method=True)
def index_put(input, indices, values, accumulate=False):
    """Matches `torch.index_put`: `indices` is a tuple of index tensors (None for `:`)."""
    spec, tensors = _tensor_indices(tuple(indices), tuple(input.shape))
    return _index_put_impl(input, tensors, values, slices=spec, accumulate=accumulate)


@composite(function=False)
def index_put_(self, indices, values, accumulate=False):
    write_inplace(self, index_put(self, indices, values, accumulate))
    return self
