"""Global switches and build facts: determinism, thread counts, float32 matmul precision,
warnings, anomaly mode, print options, `get_device_module` and the `has_*` build flags.

jtorch records the switches XLA has no use for (thread counts; determinism: XLA's CPU kernels
are deterministic) and maps the rest onto jax (matmul precision).
"""

from __future__ import annotations

import os

_knobs = {
    "deterministic": False,
    "warn_only": False,
    "threads": os.cpu_count() or 1,
    "interop_threads": os.cpu_count() or 1,
    "matmul": "highest",
    "warn_always": False,
}


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
    jax.config.update(
        "jax_default_matmul_precision",
        {"highest": "highest", "high": "high", "medium": "bfloat16"}[precision],
    )


def get_float32_matmul_precision() -> str:
    return _knobs["matmul"]


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
            raise RuntimeError(
                f"invalid value of debug_mode, expected one of `default`, `warn`, "
                f"`error`, but got {debug_mode}"
            )
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
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


def set_printoptions(*args, **kwargs) -> None:
    from ._tensor_str import set_printoptions as impl

    impl(*args, **kwargs)


def get_printoptions() -> dict:
    from ._tensor_str import get_printoptions as impl

    return impl()


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
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    try:
        return importlib.import_module(f"jtorch.{kind}")
    except ImportError:
        raise RuntimeError(
            f"Device '{kind}' does not have a corresponding module registered as 'torch.{kind}'."
        ) from None


def compiled_with_cxx11_abi() -> bool:
    """True: jtorch's native code (jaxlib) uses the C++11 ABI, as PyTorch's builds do."""
    return True


# What this build has, in PyTorch's words: linear algebra and FFTs come from XLA;
# there is no MKL and no OpenMP.
has_lapack, has_spectral, has_mkl, has_openmp = True, True, False, False


def is_vulkan_available() -> bool:
    """Matches `torch.is_vulkan_available`: False (no Vulkan backend)."""
    return False
