"""The legacy tensor types: `torch.FloatTensor`, `torch.cuda.LongTensor`, ... and
`torch.set_default_tensor_type`.

As in PyTorch, a legacy type is not a subclass of `Tensor`: it is a class whose
metaclass makes `FloatTensor(2, 3)` build a float32 CPU tensor and makes
`isinstance(t, torch.FloatTensor)` true exactly for float32 tensors on the CPU.
Attribute lookups fall through to `Tensor` (`torch.FloatTensor.add` is `Tensor.add`).
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _device, _dtype
from ._tensor import Size, Tensor, legacy_cuda

__all__ = ["set_default_tensor_type"]

# (class name, dtype) of the dtypes that have a legacy type class, in PyTorch's order; the
# names are `_dtype.legacy_type_name`'s ("torch.FloatTensor" -> FloatTensor).
_TYPES = tuple(
    (_dtype.legacy_type_name(d).rpartition(".")[2], d)
    for d in (
        _dtype.float32,
        _dtype.float64,
        _dtype.float16,
        _dtype.bfloat16,
        _dtype.int64,
        _dtype.int32,
        _dtype.int16,
        _dtype.int8,
        _dtype.uint8,
        _dtype.bool,
    )
)


class tensortype(type):
    """The metaclass of the legacy tensor types (PyTorch's `torch.tensortype`)."""

    dtype: _dtype.dtype
    is_cuda: bool
    is_sparse = False

    def __instancecheck__(cls, obj) -> bool:
        return (
            isinstance(obj, Tensor)
            and obj.dtype is cls.dtype
            and obj.device.type == ("cuda" if cls.is_cuda else "cpu")
        )

    def __getattr__(cls, name):
        # PyTorch's type objects carry Tensor's methods: `torch.FloatTensor.add(x, y)`.
        return getattr(Tensor, name)

    def __call__(cls, *args, **kwargs) -> Tensor:
        return _new(cls, args, kwargs)


def _make(name: str, dt: _dtype.dtype, cuda: bool) -> tensortype:
    doc = f"Matches `torch.{'cuda.' if cuda else ''}{name}`: the legacy {dt} tensor type."
    return tensortype(
        name,
        (),
        {
            "__module__": "torch.cuda" if cuda else "torch",
            "__doc__": doc,
            "dtype": dt,
            "is_cuda": cuda,
        },
    )


CPU_TYPES = {name: _make(name, dt, False) for name, dt in _TYPES}
CUDA_TYPES = {name: _make(name, dt, True) for name, dt in _TYPES}


def _arg_names(args, kwargs) -> str:
    parts = [type(a).__name__ for a in args]
    parts += [
        f"{k}=torch.{type(v).__name__}"
        if isinstance(v, (_dtype.dtype, _device.device))
        else f"{k}={type(v).__name__}"
        for k, v in kwargs.items()
    ]
    return ", ".join(parts)


def _invalid(args, kwargs) -> TypeError:
    return TypeError(
        f"new() received an invalid combination of arguments - got ({_arg_names(args, kwargs)}), "
        "but expected one of:\n * (*, torch.device device = None)\n * (torch.Storage storage)\n"
        " * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n"
        " * (object data, *, torch.device device = None)\n"
    )


def _options(dt: _dtype.dtype, kind: str) -> str:
    name = _dtype.cpp_name(dt)
    return (
        f"TensorOptions(dtype={name}, device={kind}, layout=Strided, requires_grad=false "
        "(default), pinned_memory=false (default), memory_format=(nullopt))"
    )


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _new(cls: tensortype, args: tuple, kwargs: dict) -> Tensor:
    """PyTorch's legacy constructor `new()`: a size, data, or a tensor to alias."""
    # The ops, from the assembled namespace (they are a layer above this one).
    import jtorch

    if set(kwargs) - {"device", "size"} or ("size" in kwargs and args):
        raise _invalid(args, kwargs)
    if "size" in kwargs:
        args = (Size(kwargs["size"]),)
    device = kwargs.get("device")
    kind = "cuda" if cls.is_cuda else "cpu"
    if device is not None:
        device = _device.device(device)
        if device.type != kind:
            raise RuntimeError(
                f"legacy constructor expects device type: {kind} but device "
                f"type: {device.type} was passed"
            )
    if cls.is_cuda:
        if not _device.accelerators("cuda"):
            raise TypeError(
                f"type torch.cuda.{cls.__name__} not available. Torch not compiled "
                "with CUDA enabled."
            )
        device = device or _device.device("cuda")
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not cls.dtype or other.device.type != kind:
            raise TypeError(
                f"expected {_options(cls.dtype, kind)} (got "
                f"{_options(other.dtype, other.device.type)})"
            )
        return jtorch.alias(other)
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if not args or _is_int(args[0]):
        for pos, n in enumerate(args):
            if not _is_int(n):
                raise TypeError(
                    f"new(): argument 'size' failed to unpack the object at pos "
                    f'{pos + 1} with error "type must be tuple of ints,but got '
                    f'{type(n).__name__}"'
                )
        shape = tuple(int(n) for n in args) if args else (0,)
        if any(n < 0 for n in shape):
            bad = next(n for n in shape if n < 0)
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {bad}: {list(shape)}"
            )
        # PyTorch leaves this memory uninitialised; jtorch gives zeros.
        return jtorch.zeros(shape, dtype=cls.dtype, device=device)
    if len(args) > 1:
        raise _invalid(args, kwargs)
    data = args[0]
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (int, float, complex, bool, np.generic)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return jtorch.tensor(data, dtype=cls.dtype, device=device)


def set_default_tensor_type(t, /) -> None:
    """Matches `torch.set_default_tensor_type` (deprecated there): sets the default dtype,
    and for a `torch.cuda` type also the default device."""
    import importlib

    import jtorch

    if isinstance(t, str):
        first, *rest = t.split(".")
        obj = jtorch if first == "torch" else importlib.import_module(first)
        for part in rest:
            if not hasattr(obj, part):
                raise AttributeError(
                    f"module '{'.'.join([first] + rest[: rest.index(part)])}' "
                    f"has no attribute '{part}'"
                )
            obj = getattr(obj, part)
        t = obj
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    if not isinstance(t, tensortype):
        raise TypeError(
            "invalid type object: only floating-point types are supported as the default type"
        )
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if t.is_cuda and not _device.accelerators("cuda"):
        raise TypeError(
            f"type torch.cuda.{t.__name__} not available. Torch not compiled with CUDA enabled."
        )
    _dtype.set_default_dtype(t.dtype)
    if t.is_cuda:
        jtorch.set_default_device("cuda")
        legacy_cuda[0] = True
    elif legacy_cuda[0]:
        jtorch.set_default_device("cpu")
        legacy_cuda[0] = False
