"""Tensor methods around storage and layout: `set_`, `storage`, `new`, `fill_diagonal_`,
Python-callback `apply_`/`map_`/`map2_`, and small predicates (`is_nonzero`, `is_pinned`,
`dim_order`, ...). Methods only: PyTorch has no `torch.xxx` functions for most of them.
"""

from __future__ import annotations

import numbers

import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _storage, _tensor, _views
from .._tensor import Size, Tensor, wrap
from . import _dispatch
from ._registry import composite
from .views import _check_not_leaf, alias, as_strided


def _legacy_name(t: Tensor) -> str:
    """The CPU legacy type name (`torch.FloatTensor`) PyTorch's callback and set_() messages
    use."""
    return _dtype.legacy_type_name(t.dtype)


# ---------------------------------------------------------------------------
# Predicates and trivial conversions


@composite(method=True, function=False)
def is_nonzero(self) -> bool:
    """Matches `torch.Tensor.is_nonzero`."""
    return self.__bool__()


@composite(method=True, function=False)
def is_same_size(self, other) -> bool:
    """Matches `torch.Tensor.is_same_size`."""
    if not isinstance(other, Tensor):
        raise TypeError(
            f"is_same_size(): argument 'other' (position 1) must be Tensor, not "
            f"{type(other).__name__}"
        )
    return tuple(self.shape) == tuple(other.shape)


@composite(method=True, function=False)
def is_inference(self) -> bool:
    """Matches `torch.Tensor.is_inference`: made under `inference_mode()` (or a view of such)."""
    return self._inf


def _accelerator_available() -> bool:
    return bool(_device.accelerators("cuda"))


@composite(method=True, function=False)
def is_pinned(self, device=None) -> bool:
    """Matches `torch.Tensor.is_pinned`: jax manages host memory, so only `pin_memory()`'s
    results report True."""
    return bool(self.__dict__.get("_pinned", False))


@composite(method=True, function=False)
def pin_memory(self, device=None):
    """Matches `torch.Tensor.pin_memory`: a copy (PyTorch's CPU-only build raises, as here
    when jax sees no accelerator)."""
    if not _accelerator_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu":
        raise RuntimeError(
            f"cannot pin '{_legacy_name(self).replace('torch.', 'torch.cuda.')}'"
            " only dense CPU tensors can be pinned"
        )
    if is_pinned(self):
        return self
    out = self.clone()
    out._pinned = True
    return out


@composite(method=True, function=False)
def share_memory_(self):
    """Matches `torch.Tensor.share_memory_`: marks the storage shared (jax arrays are
    immutable, so processes that receive them get copies)."""
    self._storage.shared = True
    return self


@composite(method=True, function=False)
def is_shared(self) -> bool:
    """Matches `torch.Tensor.is_shared`."""
    return self._storage.shared


@composite(method=True, function=False)
def record_stream(self, stream) -> None:
    """Matches `torch.Tensor.record_stream`: XLA orders work itself, so nothing to record."""
    if stream is None or isinstance(stream, (int, float, str, Tensor)):
        raise RuntimeError("unknown parameter type")


@composite(method=True, function=False)
def to_dense(self, dtype=None, *, masked_grad=None):
    """Matches `torch.Tensor.to_dense`: a dense tensor is returned as it is."""
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


@composite(method=True, function=False)
def as_subclass(self, cls):
    """Matches `torch.Tensor.as_subclass`: the same data (shared) as an instance of `cls`."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(
            "Creating a Tensor subclass from a class that does not inherit from "
            "Tensor is not possible. Make sure your class inherits from Tensor."
        )
    if not self.requires_grad:
        return Tensor._make_subclass(cls, self, False)
    # As in PyTorch, an alias: gradients flow through it to `self` (AliasBackward0).
    out = alias(self)
    if _tensor.subclass_hook is not None:
        _tensor.subclass_hook(cls)
    out.__class__ = cls
    return out


@composite(method="__reversed__", function=False, name="__reversed__")
def _reversed(self):
    """Matches `torch.Tensor.__reversed__`: flipped along dim 0 (a 0-d tensor as it is)."""
    return self if self.ndim == 0 else self.flip(0)


@composite(method=True, function=False)
def dim_order(self, *, ambiguity_check=False) -> tuple:
    """Matches `torch.Tensor.dim_order`: dims from outermost to innermost in memory."""
    if not isinstance(ambiguity_check, bool):
        if isinstance(ambiguity_check, list):
            raise NotImplementedError(
                "dim_order(ambiguity_check=[memory formats]) is not supported by jtorch"
            )
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, stride = tuple(self.shape), self.stride()
    if ambiguity_check and (
        any(n == 1 for n in shape) or any(a == b for a, b in zip(stride, stride[1:]))
    ):
        raise RuntimeError(
            "The tensor does not have unique dim order, or cannot map to exact "
            "one of the given memory formats."
        )
    n = len(shape)
    if n < 2 or self.is_contiguous():
        return tuple(range(n))
    # PyTorch's stable insertion sort (innermost first), by stride, then by size on ties.
    perm = list(reversed(range(n)))
    for i in range(1, n):
        d1 = i
        for d0 in reversed(range(i)):
            c = _stride_order(shape, stride, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return tuple(reversed(perm))


def _stride_order(shape, stride, a: int, b: int) -> int:
    """1 when dim `a` should sit outside dim `b` in memory, -1 inside, 0 undecided."""
    sa, sb = stride[a], stride[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if shape[b] >= shape[a] else 1
    return -1 if sb >= sa else 1


# ---------------------------------------------------------------------------
# Legacy constructor


@composite(method=True, function=False)
def new(self, *args, device=None):
    """Matches `torch.Tensor.new`: `new(*sizes)`, `new(size)`, `new(data)`, `new(tensor)`
    (an alias, which must have this dtype), `new(storage)`; this tensor's dtype and device."""
    dt = self.dtype
    dev = self.device if device is None else device
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype != dt:
            raise TypeError(f"expected {_legacy_name(self)} (got {_legacy_name(other)})")
        return alias(other)
    if len(args) == 1 and isinstance(args[0], (_storage.TypedStorage, _storage.UntypedStorage)):
        return set_(wrap(jnp.zeros((0,), dt.np)), args[0])
    if len(args) == 1 and not isinstance(args[0], (int, np.integer, Size)):
        data = args[0]
        if not isinstance(data, (list, tuple, np.ndarray)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        from .creation import tensor

        return tensor(data, dtype=dt, device=dev)
    shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
    shape = tuple(int(n) for n in shape) if args else (0,)
    if any(n < 0 for n in shape):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}"
        )
    from .creation import zeros

    return zeros(shape, dtype=dt, device=dev)


# ---------------------------------------------------------------------------
# Storage


@composite(method=True, function=False)
def storage(self):
    """Matches `torch.Tensor.storage` (a deprecated TypedStorage, as PyTorch warns)."""
    _storage.warn_typed_storage_removal()
    return _storage.TypedStorage(self._storage, self.dtype)


@composite(method=True, function=False)
def _typed_storage(self):
    return _storage.TypedStorage(self._storage, self.dtype)


@composite(method=True, function=False)
def storage_type(self):
    """Matches `torch.Tensor.storage_type`: the legacy storage class (`FloatStorage`, ...)."""
    _storage.warn_typed_storage_removal()
    return _storage.LEGACY_STORAGES[self.dtype]


@composite(method=True, function=False)
def set_(self, source=None, storage_offset=None, size=None, stride=None):
    """Matches `torch.Tensor.set_`: this tensor takes `source`'s storage (shared) and the
    given layout over it, or `source`'s own layout when `source` is a tensor alone.

    jtorch storages cannot grow: a layout beyond the storage raises (PyTorch would resize
    the storage).
    """
    if source is None:
        if storage_offset is not None or size is not None:
            raise TypeError("set_() received an invalid combination of arguments")
        return _set(self, wrap(jnp.zeros((0,), self.dtype.np))._storage, (), (0,), (1,), 0)
    tensor_src = isinstance(source, Tensor)
    if not tensor_src and not isinstance(source, (_storage.TypedStorage, _storage.UntypedStorage)):
        raise TypeError(
            f"set_() received an invalid combination of arguments - got "
            f"({type(source).__name__}), but expected one of: (), (torch.Storage "
            "source), (torch.Storage source, int storage_offset, tuple of ints "
            "size, tuple of ints stride = None), (Tensor source), (Tensor source, "
            "int storage_offset, tuple of ints size, tuple of ints stride = None)"
        )
    if (storage_offset is None) != (size is None):
        raise TypeError(
            "set_() received an invalid combination of arguments: storage_offset "
            "and size must be given together"
        )
    src_dtype = (
        source.dtype
        if tensor_src or isinstance(source, _storage.TypedStorage)
        else _dtype.from_np(source._storage.value.dtype)
    )
    if src_dtype != self.dtype:
        raise RuntimeError(
            f"Could not set tensor of type {_dtype.cpp_name(src_dtype)} to a tensor "
            f"of type {_dtype.cpp_name(self.dtype)}"
        )
    if tensor_src and size is None:
        if source._rg and not self._rg and _grad_recording(source):
            self._rg = True  # PyTorch: self now requires grad, with a NotImplemented history
            self.grad_fn = source.grad_fn or _grad_recording
        return _set(
            self,
            source._storage,
            source._chain,
            tuple(source.shape),
            source.stride(),
            source.storage_offset(),
        )
    st = source._storage
    if st.value.dtype != self.dtype.np:
        raise NotImplementedError("set_() onto a storage of another dtype is not supported")
    base = wrap(st.value)
    base._storage = st
    if size is None:
        size, storage_offset = (int(st.value.size),), 0
    size = tuple(int(n) for n in size)
    stride = _views.contiguous_strides(size) if stride is None else tuple(stride)
    step = as_strided._op.impl(base, size, stride, storage_offset)
    return _set(self, st, (step,), step.size, step.stride, step.offset)


def _set(self, st, chain, shape, stride, offset):
    """Rebinds `self` to storage `st` through `chain`; it is a root, not a view, after."""
    if self._rg and self.grad_fn is None and _grad_recording(self):
        _check_not_leaf(self)
    self._storage = st
    self._base = None
    self._set_layout(tuple(chain), shape, stride, offset)
    self._vc[0] += 1
    if self._rg and self.grad_fn is not None and _dispatch.inplace_hook is not None:
        # PyTorch's set_ is not differentiable: the history becomes NotImplemented.
        _dispatch.inplace_hook(self, wrap(self._array))
    return self


def _grad_recording(t: Tensor) -> bool:
    """True when grad mode is on (asked of autograd through its view hook)."""
    if _dispatch.record_view is None:
        return False
    probe = t._make_view(_views.Alias())
    _dispatch.record_view(alias._op, _views.Alias(), t, probe)
    return probe.grad_fn is not None


# ---------------------------------------------------------------------------
# fill_diagonal_ and Python callbacks


@composite(method=True, function=False)
def fill_diagonal_(self, fill_value, wrap=False):
    """Matches `torch.Tensor.fill_diagonal_`, including PyTorch's wrap rule for tall
    matrices (the diagonal restarts one row below where it last ended)."""
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    stride, offset = sum(self.stride()), self.storage_offset()
    n = min(shape)
    as_strided(self, (n,), (stride,), offset).fill_(fill_value)
    height, width = shape[0], shape[1]
    if wrap and len(shape) == 2 and height > width + 1:
        step = width + 1
        count = (self.numel() + step - 1) // step - n
        start = offset + self.stride(0) * step
        as_strided(self, (count,), (stride,), start).fill_(fill_value)
    return self


def _no_grad_callback(name: str, *tensors) -> None:
    if any(t.requires_grad for t in tensors):
        raise RuntimeError(
            f"Can't call {name}() on Variable that requires grad. Use "
            f"var.detach().{name}() instead."
        )


def _python_values(t: Tensor) -> list:
    flat = np.asarray(t._array).reshape(-1)
    if flat.dtype == jnp.bfloat16:
        flat = flat.astype(np.float32)
    return flat.tolist()


def _store(self, values: list) -> None:
    """Writes callback results back, converting each as PyTorch converts a Python scalar."""
    dt = self.dtype
    for v in values:
        if not isinstance(v, (numbers.Number, np.number, np.bool_)) or (
            isinstance(v, complex) and not dt.is_complex
        ):
            raise TypeError(f"must be real number, not {type(v).__name__}")
    if dt.is_floating_point or dt.is_complex or dt is _dtype.bool:
        arr = np.asarray(values, dtype=np.complex128 if dt.is_complex else np.float64)
    else:
        arr = np.asarray([int(v) for v in values], dtype=np.int64)
    self._write(jnp.asarray(arr.reshape(tuple(self.shape))).astype(dt.np))


def _cpu_only(name: str, *tensors) -> None:
    if any(t.device.type != "cpu" for t in tensors):
        raise TypeError(f"{name} is only implemented on CPU tensors")


@composite(method=True, function=False)
def apply_(self, callable):
    """Matches `torch.Tensor.apply_`: `callable(x)` on each element (CPU only, slow)."""
    _no_grad_callback("apply_", self)
    _cpu_only("apply_", self)
    _store(self, [callable(v) for v in _python_values(self)])
    return self


@composite(method=True, function=False)
def map_(self, tensor, callable):
    """Matches `torch.Tensor.map_`: `callable(a, b)` over `self` and broadcast `tensor`."""
    _no_grad_callback("map_", self, tensor)
    if tensor.dtype != self.dtype:
        raise TypeError(
            f"map_: expected {_legacy_name(self)} for 'other' (got {_legacy_name(tensor)})"
        )
    _cpu_only("map_", self, tensor)
    other = tensor.expand(tuple(self.shape))
    _store(self, [callable(a, b) for a, b in zip(_python_values(self), _python_values(other))])
    return self


@composite(method=True, function=False)
def map2_(self, x, y, callable):
    """Matches `torch.Tensor.map2_`: `callable(a, b, c)` over `self`, `x` and `y`."""
    _no_grad_callback("map2_", self, x, y)
    for name, t in (("x", x), ("y", y)):
        if t.dtype != self.dtype:
            raise TypeError(
                f"map2_: expected {_legacy_name(self)} for argument '{name}' (got "
                f"{_legacy_name(t)})"
            )
    _cpu_only("map2_", self, x, y)
    shape = tuple(self.shape)
    xs, ys = _python_values(x.expand(shape)), _python_values(y.expand(shape))
    _store(self, [callable(a, b, c) for a, b, c in zip(_python_values(self), xs, ys)])
    return self
