"""jtorch: the PyTorch API on JAX.

`import jtorch as torch`, or run an unmodified script with
`python -m jtorch script.py`. See docs/design.md for the decisions this rests on.
"""

# The imports below run in the order the package must initialise in: not sorted.
# isort: skip_file
import gc as _gc
import sys as _sys

# The cyclic collector is paused while jax and jtorch import: they make ~135,000 objects,
# which it traversed over and over (~0.12 s of collections here). What is there at the end
# is frozen (`gc.freeze`): it lives as long as the process, and every later full
# collection would traverse all of it again, the interpreter's own at exit among them
# (~0.3 s: `import jtorch` alone took 1.1 s, now 0.7). Freezing skips a collection
# (~0.09 s): the few hundred cyclic objects left unreachable by then stay. A frozen object
# is never collected, so only an import that starts the process's jax freezes: where jax
# came first (flax or JAX code before `import torch`), the program's own objects, which
# may become garbage in cycles holding arrays, are left to the collector.
_collecting = _gc.isenabled()
_freezing = "jax" not in _sys.modules
_gc.disable()
try:
    import jax as _jax
except BaseException:
    if _collecting:
        _gc.enable()
    raise

# Torch's dtypes need int64/float64 (DESIGN 4). This is process-wide in jax.
_jax.config.update("jax_enable_x64", True)

# Compiled programs persist across runs, and compiling is counted (DESIGN 13).
from . import _disk_cache, _programs  # noqa: E402,F401

_disk_cache.install()

from . import _dtype, _device, _tensor  # noqa: E402,F401
from ._dtype import (  # noqa: E402,F401
    bfloat16,
    bool,
    can_cast,
    complex32,
    complex64,
    complex128,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
    float8_e4m3fn,
    float8_e5m2,
    float8_e4m3fnuz,
    float8_e5m2fnuz,
    float8_e8m0fnu,
)
from ._device import device  # noqa: E402,F401

_device.use_cpu_by_default()
from ._tensor import Size, Tensor  # noqa: E402,F401
from . import _ops  # noqa: E402,F401
from ._ops._registry import NAMESPACES as _NAMESPACES  # noqa: E402

globals().update(_NAMESPACES[""])

from ._ops.creation import get_default_device, set_default_device  # noqa: E402,F401
from ._random import (  # noqa: E402,F401
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from ._ops.tensor_queries import (  # noqa: E402,F401
    is_complex,
    is_floating_point,
    is_nonzero,
    is_tensor,
    numel,
    result_type,
    typename,
    is_storage,
    broadcast_shapes,
)
from .autograd.grad_mode import (  # noqa: E402,F401
    no_grad,
    enable_grad,
    set_grad_enabled,
    is_grad_enabled,
    inference_mode,
    is_inference_mode_enabled,
)
from ._layout import (  # noqa: E402,F401
    strided,
    contiguous_format,
    channels_last,
    channels_last_3d,
    preserve_format,
    layout,
    memory_format,
    sparse_coo,
    sparse_csr,
    sparse_csc,
    sparse_bsr,
    sparse_bsc,
    _mkldnn,
    jagged,
)
from ._knobs import (  # noqa: E402,F401
    set_printoptions,
    get_printoptions,
    use_deterministic_algorithms,
    are_deterministic_algorithms_enabled,
    set_num_threads,
    get_num_threads,
    set_float32_matmul_precision,
    get_float32_matmul_precision,
)
from ._alias import install_as_torch  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from . import func  # noqa: E402,F401
from . import cuda, linalg, special, fft, random, backends, nn, masked, signal  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from . import sparse  # noqa: E402,F401
from .sparse import (  # noqa: E402,F401
    empty_like,
    full_like,
    hspmm,
    ones_like,
    rand_like,
    randn_like,
    smm,
    sparse_compressed_tensor,
    sparse_coo_tensor,
    sparse_csr_tensor,
    spmm,
    zeros_like,
)
from . import distributions  # noqa: E402,F401
from . import amp, cpu  # noqa: E402,F401
from .amp.autocast_mode import (  # noqa: E402,F401
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from . import serialization  # noqa: E402,F401
from .serialization import PyTorchFileReader, load, save  # noqa: E402,F401
from . import interop  # noqa: E402,F401
from ._compile import compile  # noqa: E402,F401
from . import compiler, _dynamo  # noqa: E402,F401
from .interop import from_jax  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from .utils.dlpack import from_dlpack  # noqa: E402,F401
from . import jit, multiprocessing, profiler  # noqa: E402,F401
from . import distributed, futures  # noqa: E402,F401
from ._errors import AcceleratorError, OutOfMemoryError  # noqa: E402,F401
from ._storage import LEGACY_STORAGES as _LEGACY_STORAGES  # noqa: E402
from ._storage import TypedStorage, UntypedStorage  # noqa: E402,F401

globals().update({c.__name__: c for c in _LEGACY_STORAGES.values()})  # FloatStorage, ...
from . import accelerator, testing  # noqa: E402,F401
from ._knobs import (  # noqa: E402,F401
    is_deterministic_algorithms_warn_only_enabled,
    get_deterministic_debug_mode,
    set_deterministic_debug_mode,
    set_num_interop_threads,
    get_num_interop_threads,
    set_flush_denormal,
    set_warn_always,
    is_warn_always_enabled,
    is_anomaly_enabled,
    is_anomaly_check_nan_enabled,
    set_anomaly_enabled,
    get_device_module,
    compiled_with_cxx11_abi,
    has_lapack,
    has_spectral,
    has_mkl,
    has_openmp,
    is_vulkan_available,
)
from ._ops.tensor_queries import (  # noqa: E402,F401
    is_same_size,
    is_signed,
    get_device,
    is_inference,
    cudnn_is_acceptable,
    is_distributed,
)
from ._sym import (  # noqa: E402,F401
    sym_not,
    sym_float,
    sym_int,
    sym_max,
    sym_min,
    sym_ite,
    sym_sqrt,
    sym_sum,
)
from ._ops.views import detach_  # noqa: E402,F401
from ._torch_function import DisableTorchFunction, DisableTorchFunctionSubclass  # noqa: E402,F401
from .amp import GradScaler  # noqa: E402,F401
from .jit import fork, wait  # noqa: E402,F401
from .sparse import (  # noqa: E402,F401
    dsmm,
    hsmm,
    sparse_bsc_tensor,
    sparse_bsr_tensor,
    sparse_csc_tensor,
)
from ._legacy_types import set_default_tensor_type  # noqa: E402,F401
from ._legacy_types import CPU_TYPES as _CPU_TYPES  # noqa: E402

globals().update(_CPU_TYPES)  # FloatTensor, DoubleTensor, ..., BoolTensor
from ._control_flow import cond, while_loop  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401
from math import e, inf, nan, pi  # noqa: E402,F401

newaxis = None
legacy_contiguous_format = contiguous_format  # PyTorch's alias (the same format)

half, float, double = float16, float32, float64
cfloat, cdouble, chalf = complex64, complex128, complex32
short, int, long = int16, int32, int64

from . import _C, overrides  # noqa: E402,F401
from ._C import ScriptModule  # noqa: E402,F401
from . import library  # noqa: E402,F401
from .library import ops  # noqa: E402,F401
from ._checks import (  # noqa: E402,F401
    SymBool,
    SymFloat,
    SymInt,
    _assert,
    _check,
    _check_index,
    _check_is_size,
    _check_not_implemented,
    _check_tensor_all,
    _check_tensor_all_with,
    _check_type,
    _check_value,
    _check_with,
)
from ._streams import Event, Stream  # noqa: E402,F401
from . import _utils, classes, export, fx, hub, onnx, return_types, storage, types  # noqa: E402,F401,E501
from . import mps, mtia, xpu  # noqa: E402,F401
from . import version  # noqa: E402,F401
from .version import __version__  # noqa: E402,F401

_ops._codes.save()  # (the op entries' code, kept for the next import)

if _freezing:
    _gc.freeze()
if _collecting:
    _gc.enable()
del _gc, _sys, _collecting, _freezing
