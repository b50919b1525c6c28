"""Collation: merging a list of samples into a batch (`default_collate`, `default_convert`).

Matches `torch.utils.data._utils.collate`. Containers are walked exactly as
PyTorch walks them (dicts, namedtuples, tuples -> lists, sequences); the
leaves go through `collate_fn_map`.

Leaves that are numpy arrays or Python numbers are stacked with numpy and
become one jtorch tensor at the end: the same values and dtype as PyTorch's
per-sample `as_tensor` + `stack`, without a jax op per sample. Worker
processes use `host_collate`, which never touches jax (JAX is not fork-safe)
and returns `HostTensor` leaves that turn into jtorch tensors when unpickled
in the main process.
"""

from __future__ import annotations

import collections.abc
import copy
import functools
import re
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype
from .._tensor import Tensor, wrap

__all__ = [
    "default_collate",
    "default_convert",
    "collate",
    "default_collate_fn_map",
    "collate_tensor_fn",
    "collate_numpy_array_fn",
    "collate_numpy_scalar_fn",
    "collate_float_fn",
    "collate_int_fn",
    "collate_str_fn",
    "host_collate",
    "host_convert",
    "HostTensor",
]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


# -- transport -------------------------------------------------------------------------------


def _tensor_from_numpy(arr: np.ndarray) -> Tensor:
    """A batch built by collation (a fresh array nobody else holds) as a tensor, committed to
    its device as other tensors are (an uncommitted batch compiles each kernel it reaches a
    second time: `_device.commit`)."""
    return wrap(_device.commit(jnp.asarray(arr)))


class HostTensor:
    """A batch leaf built in a worker: a numpy array that unpickles as a jtorch `Tensor`."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    def __reduce__(self):
        return (_tensor_from_numpy, (self.array,))


# -- leaves as numpy ------------------------------------------------------------------------


def _size_list(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _stack(arrays: list[np.ndarray], dtypes) -> np.ndarray:
    """`torch.stack` on numpy arrays: equal shapes required, dtypes promoted as torch does."""
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise RuntimeError(
                "stack expects each tensor to be equal size, but got "
                f"{_size_list(shape)} at entry 0 and {_size_list(a.shape)} at "
                f"entry {i}"
            )
    result = functools.reduce(_dtype.promote_types, dtypes)
    return np.stack(arrays).astype(result.np, copy=False)


def _python_scalar_dtype(x) -> _dtype.dtype:
    """The dtype `torch.tensor` infers for one Python or numpy scalar."""
    if isinstance(x, np.generic):
        return _dtype.from_np(x.dtype)
    if isinstance(x, bool):
        return _dtype.bool
    if isinstance(x, int):
        return _dtype.int64
    if isinstance(x, float):
        return _dtype.get_default_dtype()
    if isinstance(x, complex):
        return _dtype.default_complex_dtype()
    raise TypeError(f"Could not infer dtype of {type(x).__name__}")


def _scalars(batch, dtype: _dtype.dtype | None = None) -> np.ndarray:
    if dtype is None:  # the dtype depends on the type only: look at one value per type
        samples = {type(x): x for x in batch}.values()
        dtype = functools.reduce(_dtype.promote_types, map(_python_scalar_dtype, samples))
    return np.asarray(batch, dtype=dtype.np)


def _check_numpy_dtype(elem: np.ndarray) -> None:
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))


def _numpy_leaf(batch) -> np.ndarray:
    _check_numpy_dtype(batch[0])
    return _stack(batch, [_dtype.from_np(d) for d in {b.dtype for b in batch}])


def _tensor_leaf_numpy(batch) -> np.ndarray:
    return _stack([np.asarray(t._array) for t in batch], {t.dtype for t in batch})


# -- the collate_fn_map entries (PyTorch's names) -------------------------------------------


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stacks tensors along a new first dimension (keeps autograd and device)."""
    import jtorch  # the op namespace, fully built by the time a batch is collated

    return jtorch.stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    return _tensor_from_numpy(_numpy_leaf(batch))


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _tensor_from_numpy(_scalars(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return _tensor_from_numpy(_scalars(batch, _dtype.float64))


def collate_int_fn(batch, *, collate_fn_map=None):
    return _tensor_from_numpy(_scalars(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


_NUMPY_SCALARS = (np.bool_, np.number, np.object_)

default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    _NUMPY_SCALARS: collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}

# The same leaves for worker processes: numpy only, wrapped as HostTensor.
_host_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: lambda b, **_: HostTensor(_tensor_leaf_numpy(b)),
    np.ndarray: lambda b, **_: HostTensor(_numpy_leaf(b)),
    _NUMPY_SCALARS: lambda b, **_: HostTensor(_scalars(b)),
    float: lambda b, **_: HostTensor(_scalars(b, _dtype.float64)),
    int: lambda b, **_: HostTensor(_scalars(b)),
    str: collate_str_fn,
    bytes: collate_str_fn,
}


# -- the walk over containers ---------------------------------------------------------------


def _rebuild_mapping(elem, items: dict):
    """A mapping like `elem` holding `items` (PyTorch's order of fallbacks)."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(items)
            return clone
        return type(elem)(items)
    except TypeError:  # the mapping type cannot be built from a dict
        return items


def _rebuild_sequence(elem, items: list):
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(items):
                clone[i] = v
            return clone
        return type(elem)(items)
    except TypeError:
        return items


def collate(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None = None):
    """Matches `torch.utils.data._utils.collate.collate`: `default_collate`'s container walk."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    def sub(samples):
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: sub([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(sub(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [sub(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed  # PyTorch returns a list here, for backward compatibility
        return _rebuild_sequence(elem, transposed)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def default_collate(batch):
    """Matches `torch.utils.data.default_collate`: stacks samples into batched tensors.

    Tensors are stacked, numpy arrays and numbers become tensors (float ->
    float64, int -> int64, bool -> bool), strings stay lists, and dicts, lists,
    tuples and namedtuples are collated field by field.
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def host_collate(batch):
    """`default_collate` for worker processes: numpy only; leaves are `HostTensor`s."""
    return collate(batch, collate_fn_map=_host_collate_fn_map)


# -- default_convert (batch_size=None) ------------------------------------------------------


def _convert(data, leaf):
    if isinstance(data, Tensor):
        return leaf(data, tensor=True)
    t = type(data)
    if t.__module__ == "numpy" and t.__name__ not in ("str_", "string_"):
        if t.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return leaf(data, tensor=False)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: _convert(data[k], leaf) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return t(*(_convert(d, leaf) for d in data))
    if isinstance(data, tuple):
        return [_convert(d, leaf) for d in data]  # a list, as in PyTorch
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [_convert(d, leaf) for d in data])
    return data


def _convert_leaf(x, tensor):
    return x if tensor else wrap(_device.from_host(x))  # the sample's own buffer: copied


def _host_convert_leaf(x, tensor):
    return x if tensor else HostTensor(np.asarray(x))


def default_convert(data):
    """Matches `torch.utils.data.default_convert`: numpy arrays and scalars become tensors."""
    return _convert(data, _convert_leaf)


def host_convert(data):
    """`default_convert` for worker processes (numpy only; leaves are `HostTensor`s)."""
    return _convert(data, _host_convert_leaf)
