"""Top-level torch functions that are not ops: predicates, result_type, layouts, knobs."""

from __future__ import annotations

import os

import numpy as np

from . import _dtype
from ._alias import install_as_torch  # noqa: F401
from ._tensor import Size, Tensor
from .autograd.grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_storage(obj) -> bool:
    """Matches `torch.is_storage`: True for `TypedStorage`/`UntypedStorage` objects."""
    from ._storage import TypedStorage, UntypedStorage
    return isinstance(obj, (TypedStorage, UntypedStorage))


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    return input.dtype.is_complex


def is_nonzero(input: Tensor) -> bool:
    """Matches `torch.is_nonzero` (`Tensor.is_nonzero`, with its errors)."""
    return input.is_nonzero()


def numel(input: Tensor) -> int:
    return input.numel()


def typename(obj) -> str:
    if isinstance(obj, Tensor):
        return obj.type()     # PyTorch's typename is `Tensor.type()` for tensors
    return type(obj).__module__ + "." + type(obj).__qualname__


def result_type(tensor1, tensor2) -> _dtype.dtype:
    """Matches `torch.result_type`."""
    dims, zeros, scalars = [], [], []
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            (dims if x.ndim else zeros).append(x.dtype)
        else:
            scalars.append(x)
    return _dtype.result_type_of(dims, zeros, scalars)


def broadcast_shapes(*shapes) -> Size:
    """Matches `torch.broadcast_shapes`."""
    from ._ops._registry import broadcast_error
    norm = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in shapes]
    out = ()
    for s in norm:
        err = broadcast_error(out, s)
        if err is not None:
            raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  "
                               f"Mismatch is between arg 0 and arg {norm.index(s)}.")
        out = tuple(np.broadcast_shapes(out, s))
    return Size(out)


def set_printoptions(*args, **kwargs) -> None:
    from ._tensor_str import set_printoptions as impl
    impl(*args, **kwargs)


def get_printoptions() -> dict:
    from ._tensor_str import get_printoptions as impl
    return impl()


class layout:
    """Matches `torch.layout`: how a tensor's elements are stored (`torch.strided`)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name     # pickled by name, as `torch.strided`


class memory_format:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


strided = layout("strided")
# jtorch tensors are strided; the other layouts exist to be compared with (`t.layout !=
# torch.strided`) and named in arguments.
sparse_coo, sparse_csr, sparse_csc = layout("sparse_coo"), layout("sparse_csr"), layout(
    "sparse_csc")
sparse_bsr, sparse_bsc, _mkldnn, jagged = layout("sparse_bsr"), layout("sparse_bsc"), layout(
    "_mkldnn"), layout("jagged")
Tensor.layout = strided
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

_knobs = {"deterministic": False, "warn_only": False, "threads": os.cpu_count() or 1,
          "interop_threads": os.cpu_count() or 1, "matmul": "highest", "warn_always": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted: XLA's kernels are deterministic on CPU; the flag is recorded."""
    _knobs["deterministic"] = bool(mode)
    _knobs["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _knobs["deterministic"]


def set_num_threads(n: int) -> None:
    _knobs["threads"] = int(n)


def get_num_threads() -> int:
    return _knobs["threads"]


def set_float32_matmul_precision(precision: str) -> None:
    """Matches `torch.set_float32_matmul_precision`, mapped onto jax's default matmul precision."""
    import jax
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision}")
    _knobs["matmul"] = precision
    jax.config.update("jax_default_matmul_precision",
                      {"highest": "highest", "high": "high", "medium": "bfloat16"}[precision])


def get_float32_matmul_precision() -> str:
    return _knobs["matmul"]


# ---------------------------------------------------------------------------
# More knobs, predicates and build flags


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _knobs["warn_only"]


def get_deterministic_debug_mode() -> int:
    """Matches `torch.get_deterministic_debug_mode`: 0 off, 1 warn, 2 error."""
    if not _knobs["deterministic"]:
        return 0
    return 1 if _knobs["warn_only"] else 2


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """Matches `torch.set_deterministic_debug_mode`."""
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def set_num_interop_threads(n: int) -> None:
    """Recorded only: XLA schedules its own work."""
    if int(n) <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _knobs["interop_threads"] = int(n)


def get_num_interop_threads() -> int:
    return _knobs["interop_threads"]


def set_flush_denormal(mode: bool) -> bool:
    """Matches `torch.set_flush_denormal`'s contract: True when the mode is in effect.

    XLA's CPU kernels always flush denormals to zero, so turning flushing on succeeds and
    turning it off is not supported (False), as PyTorch reports on CPUs without the flag.
    """
    return bool(mode)


def set_warn_always(b: bool, /) -> None:
    """Matches `torch.set_warn_always` (jtorch's once-only warnings are Python's)."""
    _knobs["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _knobs["warn_always"]


def is_anomaly_enabled() -> bool:
    from .autograd import anomaly_mode
    return anomaly_mode.is_anomaly_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    from .autograd import anomaly_mode
    return anomaly_mode.is_anomaly_check_nan_enabled()


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Matches `torch.set_anomaly_enabled`: the switch behind `autograd.set_detect_anomaly`."""
    from .autograd import anomaly_mode
    anomaly_mode._set(enabled, check_nan)


def _require_tensor(fn: str, arg: str, pos: int, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def is_same_size(input: Tensor, other: Tensor) -> bool:
    _require_tensor("is_same_size", "input", 1, input)
    _require_tensor("is_same_size", "other", 2, other)
    return input.shape == other.shape


def is_signed(input: Tensor) -> bool:
    _require_tensor("is_signed", "input", 1, input)
    return input.dtype.is_signed


def get_device(input: Tensor) -> int:
    """Matches `torch.get_device`: the device index, -1 on the CPU."""
    _require_tensor("get_device", "input", 1, input)
    return input.get_device()


def is_inference(input: Tensor) -> bool:
    """Matches `torch.is_inference`: made under `inference_mode()` (see Tensor.is_inference)."""
    _require_tensor("is_inference", "input", 1, input)
    return input.is_inference()


def get_device_module(device=None):
    """Matches `torch.get_device_module`: `jtorch.cuda` for 'cuda', `jtorch.cpu` for 'cpu'."""
    import importlib
    from ._device import device as _device_cls
    if device is None:
        from . import accelerator
        acc = accelerator.current_accelerator()
        kind = acc.type if acc is not None else "cpu"
    elif isinstance(device, str):
        kind = _device_cls(device).type
    elif isinstance(device, _device_cls):
        kind = device.type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    try:
        return importlib.import_module(f"jtorch.{kind}")
    except ImportError:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as "
                           f"'torch.{kind}'.") from None


def compiled_with_cxx11_abi() -> bool:
    """True: jtorch's native code (jaxlib) uses the C++11 ABI, as PyTorch's builds do."""
    return True


# What this build has, in PyTorch's words: linear algebra and FFTs come from XLA;
# there is no MKL and no OpenMP.
has_lapack, has_spectral, has_mkl, has_openmp = True, True, False, False


# ---------------------------------------------------------------------------
# Symbolic-shape helpers: jtorch's shapes are concrete, so these are PyTorch's
# behaviour on plain Python numbers.

_SYM_NUMBERS = (np.integer, np.floating, int, float)


def sym_not(a):
    return not a


def sym_float(a):
    return float(a)


def sym_int(a):
    return int(a)


def _check_sym_numbers(a, b) -> bool:
    for x in (a, b):
        if not isinstance(x, _SYM_NUMBERS):
            raise AssertionError(f"expected {_SYM_NUMBERS}, got {type(x)}")
    return isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating))


def sym_max(a, b):
    """Matches `torch.sym_max`: a float when either argument is one."""
    as_float = _check_sym_numbers(a, b)
    return float(max(a, b)) if as_float else max(a, b)


def sym_min(a, b):
    """Matches `torch.sym_min`: a float when either argument is one."""
    as_float = _check_sym_numbers(a, b)
    return float(min(a, b)) if as_float else min(a, b)


def sym_ite(b, t, f):
    """Matches `torch.sym_ite`: `t if b else f`."""
    if not isinstance(b, bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sqrt(a):
    import math
    return math.sqrt(a)


def sym_sum(*args):
    """Matches `torch.sym_sum`: `sum(args)`, also for one list or tuple."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return sum(args)


def is_vulkan_available() -> bool:
    """Matches `torch.is_vulkan_available`: False (no Vulkan backend)."""
    return False


def is_distributed(input: Tensor) -> bool:
    """Matches `torch.is_distributed`: False (a tensor is never a legacy distributed one)."""
    return False


def cudnn_is_acceptable(input: Tensor) -> bool:
    """Matches `torch.cudnn_is_acceptable`: False (jtorch never runs cuDNN kernels itself)."""
    return False


def index_put_(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """Matches `torch.index_put_`: `input.index_put_(indices, values, accumulate)`."""
    return input.index_put_(indices, values, accumulate)


def detach_(input: Tensor) -> Tensor:
    """Matches `torch.detach_`: `input.detach_()`."""
    return input.detach_()
