"""`torch.profiler`: `profile` with PyTorch's schedule, `record_function`, trace export.

jtorch records host wall-clock ranges (`record_function`, `ProfilerStep#N`), not
individual ops or device kernels: see `jtorch.autograd.profiler`.
"""

from ..autograd.profiler import kineto_available, record_function  # noqa: F401
from . import _profiler as profiler  # noqa: F401 - torch.profiler.profiler
from ._profiler import (  # noqa: F401
    ProfilerAction,
    ProfilerActivity,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]
