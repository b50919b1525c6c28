"""`jtorch.autograd`: the eager tape, `backward`, `grad`, custom Functions, grad modes."""

from . import _engine, _methods, anomaly_mode, forward_ad, function, functional, graph, profiler  # noqa: F401  # noqa: F401
from ._engine import backward, grad  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .function import Function, once_differentiable  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .profiler import _disable_profiler, _profiler_enabled  # noqa: F401

_engine.install()
_methods.install()


def Variable(data, requires_grad: bool = False):  # noqa: N802 - PyTorch's name
    """Matches the legacy `torch.autograd.Variable`: returns the tensor itself."""
    if requires_grad:
        data.requires_grad_(True)
    return data
