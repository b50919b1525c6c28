"""Creation ops: `tensor`, `zeros`, `arange`, ... and the `Tensor.new_*` methods.

Factories have no tensor inputs, so they are composites: they build an array,
then apply the shared factory epilogue: `device=` placement and
`requires_grad=`. A size seen the first few times is built on the host (numpy,
then one transfer): a compiled program per size would cost a compile per call
of `torch.full((n,), v)` over many `n` (DESIGN 13). A size that keeps coming
back (a training loop's) is built by a compiled kernel, the fill value traced,
from a bounded cache.
"""

import builtins
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _meta, _programs
from .._tensor import Tensor, wrap
from ._registry import NONE, TI, composite, op, write_out
from .views import permute, shape_arg


def set_default_device(device) -> None:
    """Matches `torch.set_default_device`."""
    _device.set_default(device)


def get_default_device() -> _device.device:
    """Matches `torch.get_default_device` (the innermost `with torch.device(...)` counts)."""
    d = _device.default_device()
    return d if d is not None else _device.device("cpu")


def finish(arr, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    """The factory epilogue: cast, place on `device`, set `requires_grad`, honour `out=`."""
    if dtype is not None and arr.dtype != dtype.np:
        arr = arr.astype(dtype.np)
    if device is None:
        device = _device.default_device()
    if device is not None:
        if _device.is_meta(device):
            arr = _meta.like(arr)
        else:
            jdev = _device.to_jax(device)
            if not isinstance(arr, jax.core.Tracer) and jdev not in arr.devices():
                arr = jax.device_put(arr, jdev)
    t = wrap(_device.commit(arr))
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        t.requires_grad = True
    if out is not None:
        return write_out(t, out)
    return t


# Past this many elements a host-built array costs more to move than a compile.
_HOST_MAX = 1 << 24
COMPILE_AFTER = _programs.COMPILE_AFTER
_BUILT = _programs.ProgramCache("creation", share=0.25)
_built_seen = _programs.Sightings()


def build(kind: str, shape: tuple, np_dtype, host, device, *args):
    """An array made by `device(*args)` (jax) or, equally, by `host(*args)` (numpy).

    `kind` and `shape` (with `np_dtype`) key the compiled `device`; `args` are its traced
    inputs. Under a jax trace the array is part of the traced program.
    """
    if _programs.tracing():
        return device(*args)
    key = (kind, shape, np.dtype(np_dtype))
    fn = _BUILT.get(key)
    if fn is None:
        if _built_seen.note(key) < COMPILE_AFTER and math.prod(shape) <= _HOST_MAX:
            return jax.device_put(host(*args))
        fn = _BUILT.put(key, jax.jit(lambda *a: device(*a)))
    return fn(*args)


def check_size(shape) -> None:
    """PyTorch's error for a negative size."""
    for n in shape:
        if n < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {n}: {list(shape)}"
            )


# c10::checked_convert's names in "value cannot be converted to type ... without overflow".
_C_TYPES = {
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
}


def fill_scalar(value, dt: _dtype.dtype, numel: int = 0):
    """`value` (a Python or numpy number) as a numpy scalar of `dt`, with PyTorch's checks.

    As `fill_` does in PyTorch: an integer type takes integers and floats in its range
    (unsigned types also take negative integers down to -max, wrapped), a floating type
    takes infinities, nan and finite values in its range (float16 and bfloat16 filling one
    element round to inf instead: PyTorch's one-element path), a real type takes complex
    numbers with no imaginary part; bool and complex types take anything.
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        raise OverflowError("int too big to convert")
    name = str(dt.np)
    if dt is not _dtype.bool and not dt.is_complex:
        cname = _C_TYPES.get(name)
        if isinstance(value, complex):
            if value.imag != 0:
                raise RuntimeError(
                    f"value cannot be converted to type {cname or name} without overflow"
                )
            value = value.real
        if cname is not None and not isinstance(value, bool) and not _fits(value, dt, numel):
            raise RuntimeError(f"value cannot be converted to type {cname} without overflow")
    return np.asarray(value).astype(dt.np)[()]


def _fits(value, dt, numel) -> bool:
    if dt.is_floating_point:
        if not math.isfinite(value) or (numel == 1 and dt.itemsize == 2):
            return True
        return abs(value) <= float(np.finfo(dt.np).max)
    info = np.iinfo(dt.np)
    if isinstance(value, float):
        if not math.isfinite(value):
            return False
        return (0 if info.min == 0 else info.min) <= value <= info.max
    if info.min == 0:
        return -info.max <= value <= info.max
    return info.min <= value <= info.max


def _full_array(shape, dt, value, checked: bool = True, op: str = ""):
    shape = tuple(shape)
    if op == "zeros" and any(n < 0 for n in shape):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    check_size(shape)
    if isinstance(value, Tensor):
        value = value._array
    np_dtype = dt.np
    if isinstance(value, jax.core.Tracer):
        return jnp.full(shape, value, np_dtype)
    if isinstance(value, jax.Array):
        value = value.item()
    scalar = (
        fill_scalar(value, dt, math.prod(shape)) if checked else np.asarray(value, np_dtype)[()]
    )
    return build(
        "full",
        shape,
        np_dtype,
        lambda v: np.full(shape, v, np_dtype),
        lambda v: jnp.full(shape, v, np_dtype),
        scalar,
    )


def _resolve(dtype, fallback=None):
    return dtype if dtype is not None else (fallback or _dtype.get_default_dtype())


def _scalar_dtype(value):
    if isinstance(value, Tensor):
        return value.dtype
    return _dtype.scalar_dtype(value)


# ---------------------------------------------------------------------------
# From data


def _infer_dtype(data):
    """torch.tensor's dtype inference for nested Python data."""
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, np.ndarray):
        return _dtype.from_np(data.dtype)
    if isinstance(data, (np.generic,)):
        return _dtype.from_np(data.dtype)
    kind = np.asarray(_plain(data)).dtype.kind
    return {
        "b": _dtype.bool,
        "i": _dtype.int64,
        "u": _dtype.int64,
        "c": _dtype.default_complex_dtype(),
    }.get(kind, _dtype.get_default_dtype())


def _plain(data):
    if isinstance(data, Tensor):
        arr = np.asarray(data._array)
        return arr.astype(np.float32) if arr.dtype == jnp.bfloat16 else arr
    if isinstance(data, (list, tuple)):
        return [_plain(d) for d in data]
    return data


def _check_ragged(data, depth=0):
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], (list, tuple)):
        n = len(data[0])
        for d in data:
            if not isinstance(d, (list, tuple)) or len(d) != n:
                got = len(d) if isinstance(d, (list, tuple)) else type(d).__name__
                raise ValueError(f"expected sequence of length {n} at dim {depth + 1} (got {got})")
        for d in data:
            _check_ragged(d, depth + 1)


def _from_data(data, dtype):
    if isinstance(data, Tensor):
        arr = data._array
        return arr if dtype is None else arr.astype(dtype.np)
    if isinstance(data, (jax.Array, jax.core.Tracer)):
        return data if dtype is None else data.astype(dtype.np)
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    _check_ragged(data)
    dt = dtype or _infer_dtype(data)
    plain = _plain(data)
    try:
        arr = np.asarray(plain, dtype=np.float64 if dt is _dtype.bfloat16 else dt.np)
    except TypeError:
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'") from None
    return _device.from_host(arr, dt.np)


@composite(method=False)
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Matches `torch.tensor`: a copy of `data` with torch's dtype inference."""
    return finish(_from_data(data, dtype), dtype, device, requires_grad)


@composite(method=False)
def as_tensor(data, dtype=None, device=None):
    """Matches `torch.as_tensor`: `data` itself when it is a tensor of that dtype and device."""
    if (
        isinstance(data, Tensor)
        and (dtype is None or dtype is data.dtype)
        and (device is None or _device.device(device) == data.device)
    ):
        return data
    return finish(_from_data(data, dtype), dtype, device)


@composite(method=False)
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Matches `torch.asarray`: a tensor shares `obj` (a tensor) when no dtype or device change
    and no `copy=True` asks for a new one; storages are reinterpreted as `dtype`; numpy
    arrays, buffers, scalars and (nested) sequences are converted as `torch.tensor` does.

    Unlike PyTorch, a tensor made from a numpy array or a buffer never shares its memory
    (jax arrays are immutable), so `copy=False` with such an object raises.
    """
    from .._storage import TypedStorage, UntypedStorage

    dev = None if device is None else _device.device(device)
    if isinstance(obj, Tensor):
        if dtype is None or dtype is obj.dtype:
            if dev is None or dev == obj.device:
                if copy:
                    return (
                        obj.clone().requires_grad_(requires_grad) if requires_grad else obj.clone()
                    )
                if requires_grad:
                    obj.requires_grad_(True)
                return obj
        elif copy is False:
            raise ValueError(
                f"can't alias tensor with dtype '{_dtype.c10_name(obj.dtype)}' "
                f"into dtype '{_dtype.c10_name(dtype)}'."
            )
        return obj.to(device=dev, dtype=dtype, copy=True).requires_grad_(requires_grad)
    if copy is False:
        raise ValueError(
            "jtorch cannot make a tensor that shares the memory of a "
            f"{type(obj).__name__}: jax arrays are immutable (use copy=None)"
        )
    if isinstance(obj, (UntypedStorage, TypedStorage)):
        if isinstance(obj, TypedStorage):
            dtype = dtype or obj.dtype
        dtype = dtype or _dtype.get_default_dtype()
        raw = (obj._untyped_storage if isinstance(obj, TypedStorage) else obj)._bytes()
        arr = _device.from_host(raw.view(dtype.np))  # the storage's bytes (or a window)
        return finish(arr, None, dev if dev is not None else obj.device, requires_grad)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        dt = dtype or _dtype.uint8
        return finish(_device.from_host(np.frombuffer(obj, dtype=dt.np)), None, dev, requires_grad)
    if (
        isinstance(obj, np.ndarray)
        or hasattr(obj, "__array__")
        and not isinstance(obj, (list, tuple))
    ):
        arr = np.asarray(obj)
        if arr.dtype.kind not in "biufc" and arr.dtype != jnp.bfloat16:
            raise TypeError(f"can't convert np.ndarray of type {arr.dtype}.")
        return finish(_device.from_host(arr), dtype, dev, requires_grad)
    return tensor(obj, dtype=dtype, device=dev, requires_grad=requires_grad)


@composite(method=False)
def from_numpy(ndarray):
    """Matches `torch.from_numpy`, except that the tensor does not share the numpy buffer."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_np(ndarray.dtype)
    return wrap(_device.from_host(ndarray))


@composite(method=False)
def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return finish(jnp.asarray(s, _resolve(dtype).np), None, device, requires_grad)


@composite(method=False)
def frombuffer(
    buffer, *, dtype: _dtype.dtype, count: int = -1, offset: int = 0, requires_grad: bool = False
):
    """Matches `torch.frombuffer`, with one difference: PyTorch's tensor shares the buffer's
    memory, jtorch's is a copy (jax arrays are immutable), so later writes to the buffer do
    not show in the tensor, nor the tensor's in the buffer."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    nbytes, size = view.nbytes, dtype.itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if not 0 <= offset < nbytes:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than "
            f"buffer length ({nbytes} bytes) minus 1"
        )
    if count < 0 and (nbytes - offset) % size:
        raise ValueError(
            f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) "
            f"must be a multiple of element size ({size})"
        )
    count = (nbytes - offset) // size if count < 0 else count
    if offset + count * size > nbytes:
        raise ValueError(
            f"requested buffer length ({count} * {size} bytes) after offset "
            f"({offset} bytes) must not be greater than actual buffer length "
            f"({nbytes} bytes)"
        )
    raw = view.cast("B")[offset : offset + count * size]
    # A private copy: jax may alias an aligned host buffer, which the caller can still write.
    arr = np.frombuffer(raw, dtype=dtype.np, count=count).copy()
    return finish(jnp.asarray(arr), None, None, requires_grad)


# ---------------------------------------------------------------------------
# Filled


def _filled_factory(name, value):
    def factory(
        *size,
        out=None,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        pin_memory=False,
        memory_format=None,
    ):
        dt = _resolve(dtype)
        return finish(
            _full_array(shape_arg(size), dt, value, False, name), None, device, requires_grad, out
        )

    factory.__name__ = name
    factory.__doc__ = f"Matches `torch.{name}`."
    return composite(factory, method=False)


zeros = _filled_factory("zeros", 0)
ones = _filled_factory("ones", 1)
empty = _filled_factory("empty", 0)


@composite(method=False)
def full(
    size,
    fill_value,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dt = _resolve(dtype, _scalar_dtype(fill_value))
    return finish(_full_array(shape_arg((size,)), dt, fill_value), None, device, requires_grad, out)


@composite(method=False)
def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
):
    dt = dtype or input.dtype
    return finish(
        _full_array(tuple(input.shape), dt, fill_value),
        None,
        device if device is not None else input.device,
        requires_grad,
    )


def _like_factory(name, value):
    def factory(
        input,
        *,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        memory_format=None,
        pin_memory=False,
    ):
        return full_like(input, value, dtype=dtype, device=device, requires_grad=requires_grad)

    factory.__name__ = name
    factory.__doc__ = f"Matches `torch.{name}`."
    return composite(factory, method=False)


zeros_like = _like_factory("zeros_like", 0)
ones_like = _like_factory("ones_like", 1)
empty_like = _like_factory("empty_like", 0)


@composite(method=False)
def empty_strided(
    size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
):
    dt = _resolve(dtype)
    size, stride = tuple(size), tuple(stride)
    numel = 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = finish(_full_array((numel,), dt, 0, False), None, device)
    t = base.as_strided(size, stride, 0)
    t.requires_grad = requires_grad
    return t


def _new_factory(name, fill):
    def method(
        self,
        *args,
        dtype=None,
        device=None,
        requires_grad=False,
        layout=None,
        pin_memory=False,
        **named,
    ):
        # PyTorch also takes the leading arguments by name: new_ones(size=()), new_full(size=,
        # fill_value=), new_tensor(data=)
        args += tuple(named.pop(k) for k in ("size", "fill_value", "data") if k in named)
        if named:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(named))}'")
        dt = dtype or self.dtype
        dev = device if device is not None else self.device
        if fill == "full":
            size, value = args
            return finish(_full_array(shape_arg((size,)), dt, value), None, dev, requires_grad)
        if fill == "tensor":
            return finish(_from_data(args[0], dt), None, dev, requires_grad)
        return finish(_full_array(shape_arg(args), dt, fill, False), None, dev, requires_grad)

    method.__name__ = name
    return composite(method, function=False)


@composite(function=False)
def new_empty_strided(
    self,
    size,
    stride,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    layout=None,
    pin_memory=False,
):
    """Matches `Tensor.new_empty_strided`: dtype and device default to this tensor's."""
    return empty_strided(
        size,
        stride,
        dtype=dtype or self.dtype,
        device=device if device is not None else self.device,
        requires_grad=requires_grad,
    )


new_zeros = _new_factory("new_zeros", 0)
new_ones = _new_factory("new_ones", 1)
new_empty = _new_factory("new_empty", 0)
new_full = _new_factory("new_full", "full")
new_tensor = _new_factory("new_tensor", "tensor")


@composite(method=False)
def empty_permuted(
    size,
    physical_layout,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """Matches `torch.empty_permuted`: dims laid out in memory in `physical_layout` order.

    The result is a permuted view of a contiguous tensor of the physical shape, so `stride()`
    reports what PyTorch reports; unlike PyTorch's, its `_base` is that tensor.
    """
    size = shape_arg((size,))
    physical_layout = tuple(physical_layout)
    n = len(size)
    if len(physical_layout) != n:
        raise RuntimeError(
            f"Number of dimensions in size does not match the length of the "
            f"physical_layout; i.e. len(size) = {n} is not equal to "
            f"len(physical_layout) = {len(physical_layout)}"
        )
    seen = set()
    for i, d in enumerate(physical_layout):
        if not 0 <= d < n:
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {n - 1}, "
                f"but got {d} at index {i}).  NB: negative dims not currently "
                f"supported; file an issue if you want it."
            )
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    inverse = [0] * n
    for i, d in enumerate(physical_layout):
        inverse[d] = i
    base = empty(*[size[d] for d in physical_layout], dtype=dtype, device=device)
    t = permute(base, *inverse) if n else base
    t.requires_grad = requires_grad
    return t


# ---------------------------------------------------------------------------
# Ranges


def _num(v):
    return v.item() if isinstance(v, Tensor) else v


@composite(method=False)
def arange(
    start=0,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """Matches `torch.arange`: values computed in double precision, then cast."""
    if end is None:
        start, end = 0, start
    start, end, step = _num(start), _num(end), _num(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = _dtype.get_default_dtype() if is_float else _dtype.int64
    if not (dtype.is_floating_point or dtype.is_complex):
        # PyTorch computes integral ranges in int64: the bounds are truncated first.
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise RuntimeError("step must be nonzero")
    n = math.ceil((end - start) / step)
    if dtype.is_floating_point or dtype.is_complex:
        values = start + np.arange(n, dtype=np.float64) * step
    else:
        values = start + np.arange(n, dtype=np.int64) * int(step)
    return finish(
        jnp.asarray(values.astype(np.float32 if dtype is _dtype.bfloat16 else dtype.np), dtype.np),
        None,
        device,
        requires_grad,
        out,
    )


@composite(method=False, name="range")
def range_(
    start=0,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
):
    """Matches the deprecated `torch.range`: the end is included."""
    n = math.floor((_num(end) - _num(start)) / _num(step)) + 1
    values = _num(start) + np.arange(n, dtype=np.float64) * _num(step)
    return finish(jnp.asarray(values, _resolve(dtype).np), None, device, requires_grad, out)


def _linspace_values(start, end, steps):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 1:
        return np.asarray(
            [start], dtype=np.float64 if not isinstance(start, complex) else np.complex128
        )
    step = (end - start) / (steps - 1)
    i = np.arange(steps)
    half = steps // 2
    # PyTorch fills the first half from the start and the second half from the end.
    return np.where(i < half, start + i * step, end - (steps - 1 - i) * step)


@composite(method=False)
def linspace(
    start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
):
    start, end = _num(start), _num(end)
    is_complex = isinstance(start, complex) or isinstance(end, complex)
    dt = _resolve(dtype, _dtype.default_complex_dtype() if is_complex else None)
    integral = not (dt.is_floating_point or dt.is_complex)
    if integral:
        # PyTorch truncates the endpoints to integers before spacing them.
        start, end = int(start), int(end)
    values = _linspace_values(start, end, steps)
    if integral:
        values = np.trunc(values)
    return finish(
        jnp.asarray(values.astype(np.float32 if dt is _dtype.bfloat16 else dt.np), dt.np),
        None,
        device,
        requires_grad,
        out,
    )


@composite(method=False)
def logspace(
    start,
    end,
    steps,
    base=10.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
):
    dt = _resolve(dtype)
    start, end = _num(start), _num(end)
    integral = not (dt.is_floating_point or dt.is_complex)
    if integral:
        # as for linspace, PyTorch truncates the exponents' endpoints for integral dtypes
        start, end = int(start), int(end)
    values = np.power(base, _linspace_values(start, end, steps))
    if integral:
        values = np.trunc(values)
    return finish(jnp.asarray(values, dt.np), None, device, requires_grad, out)


@composite(method=False)
def eye(
    n,
    m=None,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    dt = _resolve(dtype)
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    m = n if m is None else m
    return finish(
        build(
            "eye",
            (n, m),
            dt.np,
            lambda: np.eye(n, m, dtype=dt.np),
            lambda: jnp.eye(n, m, dtype=dt.np),
        ),
        None,
        device,
        requires_grad,
        out,
    )


def _tri_indices(row, col, offset, lower):
    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return np.stack([r, c]).astype(np.int64)


@composite(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return finish(jnp.asarray(_tri_indices(row, col, offset, True)), dtype or _dtype.int64, device)


@composite(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return finish(jnp.asarray(_tri_indices(row, col, offset, False)), dtype or _dtype.int64, device)


@composite(method=False)
def meshgrid(*tensors, indexing=None):
    """Matches `torch.meshgrid`; the results are expanded views of the inputs."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}"
            )
    sizes = [t.numel() for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(tensors):
        pos = i
        if swap and i < 2:
            pos = 1 - i
        shape = [1] * len(tensors)
        shape[pos] = -1
        out.append(t.reshape(shape).expand(sizes))
    return tuple(out)


# ---------------------------------------------------------------------------
# Matrices built from a vector


# PyTorch's vander: cumprod of [1, x, x, ...], then flipped, or written in place when increasing
@op(
    promote=NONE,
    method=False,
    out=False,
    node=lambda increasing: "torch::autograd::CopySlices" if increasing else "FlipBackward0",
)
def _vander(x: TI, N=None, increasing=False):
    """`torch.vander`'s kernel."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    # Integral and bool inputs give int64, as `promote_types(dtype, int64)` does in PyTorch.
    if not (jnp.issubdtype(x.dtype, jnp.inexact)):
        x = x.astype(jnp.int64)
    if N == 0:
        return jnp.zeros((x.shape[0], 0), x.dtype)
    # Cumulative products, as PyTorch builds the powers (not `pow`).
    cols = jnp.concatenate(
        [jnp.ones((x.shape[0], 1), x.dtype), jnp.broadcast_to(x[:, None], (x.shape[0], N - 1))],
        axis=1,
    )
    out = jnp.cumprod(cols, axis=1).astype(x.dtype)
    return out if increasing else out[:, ::-1]


@composite(method=False)
def vander(x, N=None, increasing=False):
    """Matches `torch.vander`: columns `x**(N-1), ..., x, 1` (reversed when `increasing`)."""
    # PyTorch computes only the columns after the first from x (`if (N > 1) cumprod_out`):
    # with N <= 1 the result is its `ones` start, not tied to x, and does not require grad.
    if isinstance(x, Tensor) and x.ndim == 1 and (x.shape[0] if N is None else N) <= 1:
        x = x.detach()
    return _vander(x, N, increasing)
