"""What `x[index]` and `x[index] = value` accept: PyTorch's reading of a Python index.

PyTorch (`python_variable_indexing.cpp`) reads an index in two steps, reproduced here:

1. *wrapTuple*: a tuple is a multi-dimensional index; any other sequence shorter than 32
   that holds a tensor, a sequence, a slice, None or Ellipsis is read as a tuple too
   (NumPy's old heuristic, deprecated in PyTorch with a warning); anything else is one entry.
2. *applySlicing*, per entry: Python and numpy integers select, slices/None/Ellipsis/bools
   are themselves, tensors index, any other sequence (list, range, numpy array, deque, ...)
   becomes an index tensor as `torch.tensor` would build it, but int64 unless all its
   elements are bool or uint8; an object with `__index__` selects; the rest is an IndexError.

The value of an assignment is a tensor or a Python/numpy scalar (PyTorch's valueToTensor);
a scalar is converted with c10's overflow check (`creation.fill_scalar`).
"""

from __future__ import annotations

import builtins
import collections.abc
import math
import operator
import os
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype
from .._tensor import Tensor, wrap
from .creation import fill_scalar

_NON_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will "
    "be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 "
    "this will be interpreted as tensor index, x[torch.tensor(seq)], which will result "
    "either in an error or a different result"
)
_BYTE_MASK = (
    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."
)
INDEX_DTYPE_ERROR = "tensors used as indices must be long, int, byte or bool tensors"
# int64 and int32 index; uint8 and bool are masks (uint8 deprecated); nothing else indexes.
_INDEX_DTYPES = (_dtype.int64, _dtype.int32, _dtype.uint8, _dtype.bool)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tp_name(obj) -> str:
    """CPython's `Py_TYPE(obj)->tp_name`, as PyTorch's messages print it: `float`, `I`,
    `numpy.float64` (C types outside builtins carry their module)."""
    t = type(obj)
    if t.__module__ == "builtins" or t.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def warn_at_caller(message: str) -> None:
    """A UserWarning attributed to the first caller outside jtorch (PyTorch warns from C++,
    so its warning points at the user's indexing line)."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, UserWarning, stacklevel=level)


def _is_sequence(obj) -> bool:
    """CPython's `PySequence_Check` for the objects an index meets: a sequence type, a numpy
    array, or a Python class with `__getitem__` (not a mapping, not a numpy scalar)."""
    if isinstance(obj, (collections.abc.Sequence, np.ndarray)):
        return True
    if isinstance(obj, (collections.abc.Mapping, np.generic, Tensor)):
        return False
    t = type(obj)
    return builtins.bool(t.__flags__ & (1 << 9)) and hasattr(t, "__getitem__")


def _treat_as_tuple(index) -> builtins.bool:
    """PyTorch's `treatSequenceAsTuple` for a non-tuple index."""
    if isinstance(index, (Tensor, np.ndarray, jax.Array)) or not _is_sequence(index):
        return False
    if type(index) is list and all(type(e) is builtins.int for e in index):
        return False  # the common `x[[0, 2]]`
    try:
        n = len(index)
    except TypeError:
        return False
    if n >= 32:
        return False
    for i in builtins.range(n):
        try:
            e = index[i]
        except Exception:  # noqa: BLE001 - PyTorch clears any error here and says "no"
            return False
        if isinstance(e, (Tensor, slice)) or e is None or e is Ellipsis or _is_sequence(e):
            return True
    return False


def entries(index) -> list:
    """The index as a list of entries: int, slice, None, Ellipsis, or a Tensor (bool Python
    scalars become 0-d bool tensors; sequences become index tensors)."""
    if isinstance(index, tuple):
        items = index
    elif index is None or index is Ellipsis or isinstance(index, (slice, builtins.int, Tensor)):
        items = (index,)
    elif _treat_as_tuple(index):
        warn_at_caller(_NON_TUPLE)
        items = tuple(index)
    else:
        items = (index,)
    return [_entry(e) for e in items]


def _entry(e):
    if e is None or e is Ellipsis or isinstance(e, slice):
        return e
    if isinstance(e, builtins.bool):
        return wrap(jnp.asarray(e))
    if isinstance(e, (builtins.int, np.integer)):
        return builtins.int(e)
    if isinstance(e, Tensor):
        return index_tensor(e)
    if isinstance(e, jax.Array):  # jtorch's own extension: a jax array indexes like a tensor
        return index_tensor(wrap(e))
    if _is_sequence(e):
        return index_tensor(sequence_to_index(e))
    try:
        return operator.index(e)
    except TypeError:
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
            f"Variables are valid indices (got {tp_name(e)})"
        ) from None


def index_tensor(t: Tensor):
    """A tensor entry checked: a 0-d integer tensor selects (an int); dtypes that cannot
    index raise PyTorch's IndexError."""
    dt = t.dtype
    if (
        t.ndim == 0
        and dt is not _dtype.bool
        and dt is not _dtype.uint8
        and not (dt.is_floating_point or dt.is_complex)
    ):
        from .. import _meta

        return t if _meta.no_values(t._array) else builtins.int(t.item())
    if dt not in _INDEX_DTYPES:
        raise IndexError(INDEX_DTYPE_ERROR)
    return t


def is_mask(t) -> builtins.bool:
    return isinstance(t, Tensor) and (t.dtype is _dtype.bool or t.dtype is _dtype.uint8)


def warn_byte_masks(entries) -> None:
    """PyTorch's deprecation warning, once per uint8 mask that reaches advanced indexing."""
    for e in entries:
        if isinstance(e, Tensor) and e.dtype is _dtype.uint8 and e.ndim:
            warn_at_caller(_BYTE_MASK)


# ---------------------------------------------------------------------------
# Sequences as index tensors (torch::utils::indexing_tensor_from_data)


def sequence_to_index(seq) -> Tensor:
    """A Python/numpy sequence as an index tensor: int64, or bool/uint8 when every element
    is (PyTorch infers the dtype as `torch.tensor` does, then builds a long tensor)."""
    if isinstance(seq, builtins.range):
        return wrap(jnp.asarray(np.arange(seq.start, seq.stop, seq.step, dtype=np.int64)))
    if isinstance(seq, (np.ndarray, jax.Array)):
        arr = np.asarray(seq)
        _dtype.from_np(arr.dtype)  # PyTorch's TypeError for the types it cannot convert
        keep = arr.dtype in (np.bool_, np.uint8)
        return wrap(jnp.asarray(arr if keep else arr.real.astype(np.int64)))
    if type(seq) is list and seq and all(type(e) is builtins.int for e in seq):
        try:  # the common flat list of Python ints
            return wrap(jnp.asarray(np.asarray(seq, dtype=np.int64)))
        except OverflowError:
            pass  # the element-wise path raises PyTorch's error
    kinds: set = set()
    shape = _shape_of(seq, kinds)
    flat: list = []
    _flatten(seq, shape, 0, flat)
    if kinds <= {"b"} and kinds:
        np_dtype = np.bool_
    elif kinds <= {"b", "u8"} and kinds:
        np_dtype = np.uint8
    else:
        np_dtype = np.int64
    values = [_as_int(v) for v in flat] if np_dtype is np.int64 else flat
    return wrap(jnp.asarray(np.asarray(values, dtype=np_dtype).reshape(shape)))


def _leaf_kind(x) -> str:
    """infer_scalar_type for one element, as a promotion category."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{tp_name(x)}'")
    if isinstance(x, (builtins.bool, np.bool_)):
        return "b"
    if isinstance(x, np.uint8):
        return "u8"
    if isinstance(x, (builtins.int, np.integer)):
        return "i"
    if isinstance(x, (builtins.float, np.floating)):
        return "f"
    if isinstance(x, (builtins.complex, np.complexfloating)):
        return "c"
    if isinstance(x, Tensor):
        dt = x.dtype
        return "b" if dt is _dtype.bool else "u8" if dt is _dtype.uint8 else dt._kind
    raise RuntimeError(f"Could not infer dtype of {tp_name(x)}")


def _is_nested(x) -> builtins.bool:
    """Whether `x` is a level of a nested index sequence rather than an element."""
    if isinstance(x, (str, bytes)):
        return False
    if isinstance(x, (Tensor, np.ndarray)):
        return x.ndim > 0
    return _is_sequence(x)


def _shape_of(seq, kinds: set) -> tuple:
    """The nested sequence's shape (from its first elements, as PyTorch's compute_sizes)
    while collecting the element kinds."""
    shape = []
    x = seq
    while _is_nested(x):
        n = len(x)
        shape.append(n)
        if n == 0:
            break
        x = x[0]
    _collect_kinds(seq, kinds)
    return tuple(shape)


def _collect_kinds(x, kinds: set) -> None:
    if isinstance(x, np.ndarray):
        kinds.add(
            "b"
            if x.dtype == np.bool_
            else "u8"
            if x.dtype == np.uint8
            else _dtype.from_np(x.dtype)._kind
        )
    elif isinstance(x, Tensor):
        kinds.add(_leaf_kind(x))
    elif _is_nested(x):
        for e in x:
            _collect_kinds(e, kinds)
    else:
        kinds.add(_leaf_kind(x))


def _flatten(x, shape, depth, out) -> None:
    if depth == len(shape):
        if _is_nested(x):
            raise ValueError(f"too many dimensions '{tp_name(x)}'")
        out.append(x.item() if isinstance(x, (Tensor, np.generic, np.ndarray)) else x)
        return
    if not _is_nested(x):
        raise TypeError(f"'{tp_name(x)}' object is not iterable")
    n = len(x)
    if n != shape[depth]:
        raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {n})")
    for e in x:
        _flatten(e, shape, depth + 1, out)


def _as_int(v) -> builtins.int:
    """An element stored into a long tensor: floats truncate toward zero, as C++ casts."""
    if isinstance(v, builtins.complex):
        v = v.real
    if isinstance(v, builtins.float):
        if not math.isfinite(v) or not -(2.0**63) <= v < 2.0**63:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return builtins.int(v)
    v = builtins.int(v)
    if not -(2**63) <= v < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return v


# ---------------------------------------------------------------------------
# Assigned values (valueToTensor)


def legacy_type_name(t: Tensor) -> str:
    """`torch.LongTensor`, `torch.cuda.FloatTensor`: the tensor's legacy type as messages say."""
    from .tensor_methods import _legacy_name

    name = _legacy_name(t)
    return name.replace("torch.", "torch.cuda.", 1) if t.device.type == "cuda" else name


def value_tensor(value, like: Tensor) -> Tensor:
    """An assigned value as a tensor: tensors as they are, scalars converted to `like`'s dtype
    with c10's overflow check; anything else (lists, arrays, strings) is a TypeError."""
    if isinstance(value, Tensor):
        if value.ndim == 0 and value.device != like.device and value.device.type == "cpu":
            return value.to(like.device)  # PyTorch takes a 0-dim CPU value, as its scalars
        return value
    if isinstance(value, jax.Array):  # jtorch's own extension, as for indices
        return wrap(value)
    # PyTorch's order: integers (numpy's too) and bools, then float and complex subclasses
    # (numpy's float64/complex128 are; float32 is not and is rejected as PyTorch rejects it).
    if (
        not isinstance(value, (builtins.int, np.integer, builtins.float, builtins.complex))
        or isinstance(value, np.generic)
        and not isinstance(value, (np.integer, np.float64, np.complex128))
    ):
        raise TypeError(f"can't assign a {tp_name(value)} to a {legacy_type_name(like)}")
    dt = like.dtype
    if (
        dt in (_dtype.float16, _dtype.bfloat16)
        and isinstance(value, builtins.complex)
        and value.imag != 0
    ):
        # PyTorch's assignment converts a scalar for these types through double
        raise RuntimeError("value cannot be converted to type double without overflow")
    # one element: float16/bfloat16 take out-of-range floats as inf, as PyTorch's fill does
    with np.errstate(over="ignore"):  # that inf comes from a numpy cast: no warning
        return wrap(_device.place_like(fill_scalar(value, dt, numel=1), like._array))
