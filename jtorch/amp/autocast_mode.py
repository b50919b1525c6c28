"""`torch.autocast`: mixed precision by casting the inputs of listed ops.

The state (enabled, dtype per device type; cache; nesting) is thread-local, as in
PyTorch. While any thread has autocast on, the registry's `autocast_hook` is set and
sees every dispatched op before promotion; with autocast off it is None and costs
nothing. The casts are ordinary recorded `_to_copy` ops, so gradients flow back to the
float32 tensors in their own dtype. Which ops cast to what is in `_policy.py`.
"""

from __future__ import annotations

import functools
import threading
import warnings

from .. import _dtype
from .._ops import _dispatch, _registry
from .._tensor import Tensor
from . import _policy

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

_DEFAULT_DTYPE = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}
_DEVICE_TYPES = ("cpu", "cuda", "xla", "tpu", "mps", "xpu", "hpu", "mtia", "ipu", "xla")


class _State(threading.local):
    def __init__(self):
        self.enabled = {}  # device type -> bool
        self.dtype = dict(_DEFAULT_DTYPE)
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}  # id(leaf) -> (leaf, version, dtype, cast)


_state = _State()
_lock = threading.Lock()
_n_enabled = [0]  # enabled (thread, device type) pairs, over all threads


def _device_key(device_type: str) -> str:
    return "cpu" if device_type == "cpu" else "cuda"


def _check_device_type(device_type) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"unsupported autocast device_type '{device_type}'")
    return device_type


# ---------------------------------------------------------------------------
# The torch-level state functions


def is_autocast_available(device_type: str) -> bool:
    """Matches `torch.amp.is_autocast_available`."""
    return device_type in ("cpu", "cuda")


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Matches `torch.is_autocast_enabled` (no argument means CUDA, as in PyTorch)."""
    return _state.enabled.get(_device_key(device_type or "cuda"), False)


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Matches `torch.set_autocast_enabled(device_type, enabled)` (and the old `(enabled)`)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    key = _device_key(_check_device_type(device_type))
    was = _state.enabled.get(key, False)
    enabled = bool(enabled)
    if was == enabled:
        return
    _state.enabled[key] = enabled
    with _lock:
        _n_enabled[0] += 1 if enabled else -1
        _dispatch.autocast_hook = _hook if _n_enabled[0] > 0 else None


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    """Matches `torch.get_autocast_dtype`."""
    return _state.dtype[_device_key(_check_device_type(device_type))]


def set_autocast_dtype(device_type: str, dtype: _dtype.dtype) -> None:
    _state.dtype[_device_key(_check_device_type(device_type))] = dtype


def is_autocast_cpu_enabled() -> bool:
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> _dtype.dtype:
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> _dtype.dtype:
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


# ---------------------------------------------------------------------------
# The dispatch hook


def _cast(t: Tensor, dt: _dtype.dtype, lower: bool, st: _State):
    tdt = t.dtype
    if tdt is dt or not tdt.is_floating_point or tdt is _dtype.float64:
        return t
    from .._ops.conversion import _to_copy

    # PyTorch caches the low-precision copies of leaves that require grad (the weights),
    # so a weight used many times in a region is cast once.
    if lower and st.cache_enabled and t._rg and t.grad_fn is None:
        hit = st.cache.get(id(t))
        if hit is not None and hit[0] is t and hit[1] == t._version and hit[2] is dt:
            return hit[3]
        out = _to_copy(t, dtype=dt)
        st.cache[id(t)] = (t, t._version, dt, out)
        return out
    return _to_copy(t, dtype=dt)


def _first_tensor(op, args):
    for p, kind in op.slots:
        v = args[p]
        if isinstance(v, Tensor):
            return v
        if kind is _registry.TL and v:
            for x in v:
                if isinstance(x, Tensor):
                    return x
    return None


def _hook(op, args: tuple) -> tuple:
    """`op`'s arguments with its floating tensor inputs cast per the autocast policy."""
    st = _state
    if not st.enabled:
        return args
    first = _first_tensor(op, args)
    if first is None:
        return args
    key = _device_key(first.device.type)
    if not st.enabled.get(key):
        return args
    kind = _policy.table(key).get(op)
    if kind is None:
        return args
    lower = kind is _policy.LOWER
    dt = st.dtype[key] if lower else _dtype.float32
    new = list(args)
    for p, slot in op.slots:
        v = args[p]
        if slot is _registry.S:
            continue
        if isinstance(v, Tensor):
            new[p] = _cast(v, dt, lower, st)
        elif slot is _registry.TL and v:
            new[p] = type(v)(_cast(x, dt, lower, st) if isinstance(x, Tensor) else x for x in v)
    return tuple(new)


# ---------------------------------------------------------------------------
# The context manager


class autocast:
    """Matches `torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`.

    A context manager and a decorator. Inside, ops on PyTorch's lower-precision list
    (matmuls, linear, convolutions, ...) run in `dtype` (bfloat16 on CPU, float16 on
    CUDA by default) and ops on its float32 list (losses, reductions, ...) in float32.
    """

    def __init__(
        self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None
    ):
        self.device = _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        )
        enabled = bool(enabled)
        if enabled and self.device == "cuda":
            import jtorch  # `torch.cuda.is_available()`, as PyTorch's autocast asks it

            if not jtorch.cuda.is_available():
                warnings.warn(
                    "User provided device_type of 'cuda', but CUDA is not available. Disabling",
                    stacklevel=2,
                )
                enabled = False
        if (
            enabled
            and self.device == "cpu"
            and self.fast_dtype not in (_dtype.bfloat16, _dtype.float16)
        ):
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. "
                "Disabling autocast.\nCPU Autocast only supports dtype of "
                "torch.bfloat16, torch.float16 currently.",
                stacklevel=2,
            )
            enabled = False
        self._enabled = enabled
        self._saved = []

    def __enter__(self):
        d = self.device
        self._saved.append(
            (is_autocast_enabled(d), get_autocast_dtype(d), is_autocast_cache_enabled())
        )
        set_autocast_dtype(d, self.fast_dtype)
        set_autocast_enabled(d, self._enabled)
        set_autocast_cache_enabled(self._cache_enabled)
        autocast_increment_nesting()
        return self

    def __exit__(self, exc_type, exc, tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        enabled, dt, cache = self._saved.pop()
        set_autocast_enabled(self.device, enabled)
        set_autocast_dtype(self.device, dt)
        set_autocast_cache_enabled(cache)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper


def _cast_floats(value, dtype):
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_floats(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_floats(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """Matches `torch.amp.custom_fwd` for a custom `autograd.Function.forward`."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx = args[0]
        ctx._fwd_used_autocast = is_autocast_enabled(device_type)
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None or not ctx._fwd_used_autocast:
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast_floats(args, cast_inputs), **_cast_floats(kwargs, cast_inputs))

    return forward


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """Matches `torch.amp.custom_bwd`: the backward runs with the forward's autocast state."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        with autocast(
            device_type,
            enabled=getattr(ctx, "_fwd_used_autocast", False),
            dtype=getattr(ctx, "_dtype", None),
        ):
            return bwd(*args, **kwargs)

    return backward
