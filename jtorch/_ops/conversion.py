"""Tensor conversions: `to`, `type`, the dtype casts (`float()`, ...), device moves, `fill_`.

A cast and a device move are registry ops (`_to_copy`, `_to_device`), so autograd
records them like any other op; the method forms are composites that parse
PyTorch's overloads and return `self` when nothing would change.
"""

import warnings

import jax
import jax.numpy as jnp

from .. import _device, _dtype, _meta
from .._dtype import c10_name
from .._tensor import Tensor
from ._registry import NONE, TI, T, composite, op

# ---------------------------------------------------------------------------
# The kernels


def cast_array(x, dt: _dtype.dtype):
    """`x` cast to `dt` the way PyTorch casts (complex->real keeps the real part, ...)."""
    target = dt.np
    if x.dtype == target:
        return x
    if dt is _dtype.bool:
        return x != 0
    if jnp.issubdtype(x.dtype, jnp.complexfloating) and not dt.is_complex:
        x = jnp.real(x)
    if jnp.issubdtype(x.dtype, jnp.floating) and dt._kind in "iu" and dt.itemsize < 8:
        # PyTorch converts through int64, so out-of-range values wrap (300. -> uint8 44).
        x = x.astype(jnp.int64)
    if dt is _dtype.float8_e4m3fn:
        # PyTorch saturates out-of-range values (inf too) to +-448; ml_dtypes makes them nan.
        x = jnp.clip(
            x.astype(jnp.float32)
            if x.dtype.itemsize < 4 or not jnp.issubdtype(x.dtype, jnp.floating)
            else x,
            -448,
            448,
        )
    elif dt is _dtype.float8_e8m0fnu:
        # A power of two with no sign and no zero: PyTorch drops the sign and sends what is
        # below the smallest normal float32 to 2^-127, the code 0 (XLA flushes float32
        # subnormals to zero, and a zero would become nan).
        a = jnp.abs(x.astype(jnp.float32))
        smallest = jax.lax.bitcast_convert_type(jnp.uint8(0), target)
        return jnp.where(a < 2.0**-126, smallest, a.astype(target))
    return x.astype(target)


@op(promote=NONE, method=False, out=False, node="ToCopyBackward0")
def _to_copy(input: T, *, dtype=None):
    """Matches `torch._to_copy` for dtype changes (device moves are `_to_device`)."""
    return input if dtype is None else cast_array(input, dtype)


@op(promote=NONE, method=False, out=False, jit=False)
def _to_device(input: T, device):
    if device.type == "meta":
        return _meta.like(input)
    return jax.device_put(input, _device.to_jax(device))


def _cast(self: Tensor, dt: _dtype.dtype) -> Tensor:
    if self.dtype.is_complex and not dt.is_complex and dt is not _dtype.bool:
        warnings.warn(
            "Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4
        )
    return _to_copy(self, dtype=dt)


# ---------------------------------------------------------------------------
# to()


def _parse_to(args, kwargs):
    """PyTorch's `to` overloads -> (device, dtype, non_blocking, copy)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(
            f"to() received an invalid combination of arguments - got unexpected "
            f"keyword argument '{next(iter(kwargs))}'"
        )
    dtype = _dtype.from_python_type(dtype)
    args = [_dtype.from_python_type(a) for a in args]
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    elif args and isinstance(args[0], _dtype.dtype):
        dtype = args.pop(0)
    elif (
        args
        and (args[0] is None or isinstance(args[0], (str, _device.device, int)))
        and not (isinstance(args[0], bool))
    ):
        device = args.pop(0)
        if args and (args[0] is None or isinstance(args[0], _dtype.dtype)):
            dtype = args.pop(0)
    flags = [non_blocking, copy]
    if len(args) > 2 or any(not isinstance(a, bool) for a in args):
        raise TypeError(
            "to() received an invalid combination of arguments - got "
            f"({', '.join(type(a).__name__ for a in args)})"
        )
    flags[: len(args)] = args
    if device is not None:
        device = _device.device(device)
    return device, dtype, flags[0], flags[1]


def _same_device(t: Tensor, device: _device.device) -> bool:
    have = t.device
    if have.type != device.type:
        return False
    return device.index is None or (have.index or 0) == device.index


def to_impl(self: Tensor, device=None, dtype=None, copy=False) -> Tensor:
    out = self
    if dtype is not None and dtype is not self.dtype:
        out = _cast(out, dtype)
    if device is not None and not _same_device(self, device):
        if self.is_meta:
            raise NotImplementedError(_meta.NO_DATA)
        out = _to_device(out, device)
    if out is self and copy:
        out = self.clone()
    return out


@composite(function=False)
def to(self, *args, **kwargs):
    """Matches `torch.Tensor.to`: `to(dtype)`, `to(device, dtype)`, `to(other)`; `self` if
    nothing changes and `copy=False`."""
    device, dtype, _, copy = _parse_to(args, kwargs)
    return to_impl(self, device, dtype, copy)


@composite(function=False)
def cpu(self, memory_format=None):
    """Matches `torch.Tensor.cpu`."""
    return to_impl(self, _device.CPU)


@composite(function=False)
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """Matches `torch.Tensor.cuda`: raises as PyTorch does when there is no accelerator."""
    if device is None:
        device = _device.device("cuda")
    elif isinstance(device, int):
        device = _device.device("cuda", device)
    else:
        device = _device.device(device)
    _device.to_jax(device)  # raises "Torch not compiled with CUDA enabled" without one
    return to_impl(self, device)


# ---------------------------------------------------------------------------
# type(), type_as() and the named casts

# "torch.FloatTensor"-style type names are c10's ScalarType names (`_dtype.legacy_type_name`).
_BY_TYPE_NAME = {c10_name(d): d._name for d in _dtype.ALL + (_dtype.complex32,)}


def type_string(t: Tensor) -> str:
    return _dtype.legacy_type_name(t.dtype, cuda=t.device.type == "cuda")


def _parse_type_string(name: str):
    rest = name[len("torch.") :] if name.startswith("torch.") else None
    cuda = rest is not None and rest.startswith("cuda.")
    if cuda:
        rest = rest[len("cuda.") :]
    if rest is None or not rest.endswith("Tensor") or rest[:-6] not in _BY_TYPE_NAME:
        raise ValueError(f"invalid type: '{name}'")
    return getattr(_dtype, _BY_TYPE_NAME[rest[:-6]]), cuda


@composite(name="type", function=False, python_dtype=False)
def type_(self, dtype=None, non_blocking=False, **kwargs):
    """Matches `torch.Tensor.type`: the type string, or a cast to a dtype or type string."""
    if dtype is None:
        return type_string(self)
    if isinstance(dtype, _dtype.dtype):
        return to_impl(self, dtype=dtype)
    if not isinstance(dtype, str):
        module = getattr(dtype, "__module__", "")
        name = getattr(dtype, "__name__", str(dtype))
        dtype = name if module in ("", "builtins") else f"{module}.{name}"
    dt, cuda = _parse_type_string(dtype)
    device = _device.device("cuda") if cuda else (_device.CPU if self.is_cuda else None)
    return to_impl(self, device, dt)


@composite(function=False)
def type_as(self, other):
    """Matches `torch.Tensor.type_as`."""
    return type_(self, type_string(other))


def _named_cast(name, dt):
    def cast(self, memory_format=None):
        return to_impl(self, dtype=dt)

    cast.__name__ = name
    cast.__doc__ = f"Matches `torch.Tensor.{name}`: `self.to({dt})`."
    return composite(cast, name=name, function=False)


for _name, _dt in [
    ("float", _dtype.float32),
    ("double", _dtype.float64),
    ("half", _dtype.float16),
    ("bfloat16", _dtype.bfloat16),
    ("long", _dtype.int64),
    ("int", _dtype.int32),
    ("short", _dtype.int16),
    ("char", _dtype.int8),
    ("byte", _dtype.uint8),
    ("bool", _dtype.bool),
    ("cfloat", _dtype.complex64),
    ("cdouble", _dtype.complex128),
    ("chalf", _dtype.complex32),
]:
    _named_cast(_name, _dt)


# ---------------------------------------------------------------------------
# fill_, zero_, and the conj/neg bits (jtorch has no lazy conjugation)


@op(
    promote=NONE,
    method=False,
    inplace=True,
    node=lambda value: "FillBackward3" if isinstance(value, Tensor) else "FillBackward2",
)
def fill(input: T, value: TI):
    """Matches `torch.fill`: a tensor like `input` filled with `value`."""
    if value.ndim:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value.ndim} dimensions."
        )
    if jnp.issubdtype(value.dtype, jnp.complexfloating) and not jnp.issubdtype(
        input.dtype, jnp.complexfloating
    ):
        value = jnp.real(value)
    return jnp.broadcast_to(cast_array(value, _dtype.from_np(input.dtype)), input.shape)


@composite(function=True)
def zero_(input):
    """Matches `torch.Tensor.zero_`."""
    return input.fill_(0)


@composite
def resolve_conj(input):
    """Matches `torch.resolve_conj`: jtorch conjugates eagerly, so this is `input`."""
    return input


@composite
def resolve_neg(input):
    """Matches `torch.resolve_neg`: jtorch negates eagerly, so this is `input`."""
    return input


@composite
def is_conj(input) -> bool:
    return False


@composite
def is_neg(input) -> bool:
    return False
