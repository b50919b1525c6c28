"""`torch._C`: the names programs and libraries read from PyTorch's C extension.

PyTorch's `_C` is its compiled core; here each name is the jtorch object that plays the
same part (`Generator`, `DisableTorchFunction`, grad mode...), or a function answering what
PyTorch's answers where Python can observe it. CUDA-only names (`_cuda_getDeviceCount`...)
exist, as in PyTorch's builds, only where an accelerator is present (see `__getattr__`).
"""

from __future__ import annotations

from .. import _device, _dtype, _knobs, _layout, _random, _tensor, _torch_function
from ..autograd import grad_mode as _grad_mode
from ..jit import ScriptFunction  # noqa: F401
from ..library._schema import Argument, FunctionSchema, parse_schema  # noqa: F401
from . import _functions, _nn  # noqa: F401
from ._graph import Graph, Node, ScriptModule, Value  # noqa: F401

# -- tensors and types ------------------------------------------------------

TensorBase = _TensorBase = _tensor.Tensor  # jtorch's Tensor has no separate C base class
_TensorMeta = type(_tensor.Tensor)
Size = _tensor.Size
dtype = _dtype.dtype
device = _device.device
layout = _layout.layout
memory_format = _layout.memory_format
finfo = _dtype.finfo
iinfo = _dtype.iinfo
Generator = _random.Generator
default_generator = _random.default_generator

# -- __torch_function__ -----------------------------------------------------

DisableTorchFunction = _torch_function.DisableTorchFunction
DisableTorchFunctionSubclass = _torch_function.DisableTorchFunctionSubclass
_disabled_torch_function_impl = _torch_function.disabled_torch_function_impl
_is_torch_function_enabled = _torch_function.is_enabled
_is_torch_function_all_disabled = _torch_function.is_all_disabled
_is_torch_function_mode_enabled = _torch_function.is_mode_enabled
_has_torch_function = _torch_function.has_torch_function
_has_torch_function_unary = _torch_function.has_torch_function_unary
_has_torch_function_variadic = _torch_function.has_torch_function_variadic
_len_torch_function_stack = _torch_function.stack_len
_push_on_torch_function_stack = _torch_function.push_mode
_pop_torch_function_stack = _torch_function.pop_mode
_get_function_stack_at = _torch_function.get_stack_at

# -- grad mode and global switches --------------------------------------------

is_grad_enabled = _grad_mode.is_grad_enabled


def _set_grad_enabled(enabled: bool) -> None:
    """Matches `torch._C._set_grad_enabled`: switches grad mode for this thread."""
    if not isinstance(enabled, bool):
        raise TypeError(
            f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
            f"not {type(enabled).__name__}"
        )
    _grad_mode.set_grad_enabled(enabled)


def _get_tracing_state():
    """Matches `torch._C._get_tracing_state`: None outside `torch.jit.trace`."""
    from ..jit import _script

    return _TracingState() if _script.is_tracing() else None


class _TracingState:
    """What `_get_tracing_state()` gives while `torch.jit.trace` runs (it is truthy)."""

    __module__ = "torch._C"


def _log_api_usage_once(event: str) -> None:
    """Matches `torch._C._log_api_usage_once`: PyTorch's usage logger, silent by default."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")


def _get_cudnn_enabled() -> bool:
    from ..backends import cudnn

    return cudnn.enabled


def _set_cudnn_enabled(enabled: bool) -> None:
    from ..backends import cudnn

    cudnn.enabled = bool(enabled)


def _get_cudnn_benchmark() -> bool:
    from ..backends import cudnn

    return cudnn.benchmark


def _get_cudnn_deterministic() -> bool:
    from ..backends import cudnn

    return cudnn.deterministic


def _get_cudnn_allow_tf32() -> bool:
    from ..backends import cudnn

    return cudnn.allow_tf32


def _get_mkldnn_enabled() -> bool:
    from ..backends import mkldnn

    return mkldnn.enabled


def _set_mkldnn_enabled(enabled: bool) -> None:
    from ..backends import mkldnn

    mkldnn.enabled = bool(enabled)


_get_deterministic_algorithms = _knobs.are_deterministic_algorithms_enabled
_get_float32_matmul_precision = _knobs.get_float32_matmul_precision
_set_float32_matmul_precision = _knobs.set_float32_matmul_precision


def _set_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    _knobs.use_deterministic_algorithms(mode, warn_only=warn_only)


def _get_accelerator(check: bool = False) -> _device.device:
    """Matches `torch._C._get_accelerator`: the accelerator's device, `cpu` without one."""
    from .. import accelerator

    acc = accelerator.current_accelerator()
    return acc if acc is not None else _device.device("cpu")


def _get_default_device() -> str:
    """Matches `torch._C._get_default_device`: the default device's type."""
    from .._ops.creation import get_default_device

    return get_default_device().type


def _get_privateuse1_backend_name() -> str:
    return "privateuseone"


def _show_config() -> str:
    """What `torch.__config__.show()` prints: how this PyTorch (here jtorch) was built."""
    import jax

    return (
        f"jtorch (PyTorch API on JAX) built with:\n  - jax {jax.__version__}\n"
        f"  - default backend: {jax.default_backend()}\n"
    )


def _set_print_stack_traces_on_fatal_signal(print_stack: bool) -> None:
    if not isinstance(print_stack, bool):
        raise TypeError("bad argument type for built-in operation")


_GLIBCXX_USE_CXX11_ABI = True
_has_mps = False


def _mps_is_available() -> bool:
    return False


def _jit_is_script_object(obj) -> bool:
    """Matches `torch._C._jit_is_script_object`: jtorch has no TorchScript objects."""
    return False


def _add_docstr(obj, docstr: str):
    """Matches `torch._C._add_docstr`: sets a function's docstring, once."""
    if getattr(obj, "__doc__", None):
        raise RuntimeError(f"function '{getattr(obj, '__name__', obj)}' already has a docstring")
    obj.__doc__ = docstr
    return obj


def __getattr__(name: str):
    # Names of PyTorch's CUDA builds: present only where jtorch has an accelerator.
    if name in _CUDA and _cuda_available():
        return _CUDA[name]
    if name == "_has_cuda":
        return _cuda_available()
    raise AttributeError(f"module 'torch._C' has no attribute '{name}'")


def _cuda_available() -> bool:
    from .. import cuda

    return cuda.is_available()


def _cuda_device_count() -> int:
    from .. import cuda

    return cuda.device_count()


def _cuda_current_device() -> int:
    from .. import cuda

    return cuda.current_device()


def _cuda_clear_workspaces() -> None:
    """XLA owns the cuBLAS workspaces: there is nothing for jtorch to clear."""


_CUDA = {
    "_cuda_getDeviceCount": _cuda_device_count,
    "_cuda_getDevice": _cuda_current_device,
    "_cuda_isInBadFork": lambda: False,
    "_cuda_clearCublasWorkspaces": _cuda_clear_workspaces,
    "_cuda_isDriverSufficient": lambda: True,
}
