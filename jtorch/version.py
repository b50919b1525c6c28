"""`torch.version`: the PyTorch release jtorch follows, and the accelerator toolkit.

`cuda` is None unless jax runs on an NVIDIA GPU, where it is the CUDA runtime's
version ("12.4"); `hip` is always None.
"""

from .torch_version import TorchVersion

__version__ = TorchVersion("2.13.0")
git_version = "unknown"
hip = None
rocm = None
xpu = None
debug = False

__all__ = ["__version__", "debug", "git_version", "hip"]  # and `cuda`, computed on first use


def _cuda_version():
    import jax

    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        return None
    platform = str(getattr(gpus[0].client, "platform_version", "")).lower() if gpus else "rocm"
    if "rocm" in platform or "hip" in platform:
        return None
    try:
        from jax._src.lib import cuda_versions

        v = int(cuda_versions.cuda_runtime_get_version())
        return f"{v // 1000}.{v % 1000 // 10}"
    except Exception:  # noqa: BLE001 - the plugin's layout varies across jax versions
        return "12.0"


def __getattr__(name):
    # Computed on first use: asking jax about GPUs initializes its backends.
    if name == "cuda":
        value = _cuda_version()
        globals()["cuda"] = value
        return value
    raise AttributeError(f"module 'torch.version' has no attribute {name!r}")
