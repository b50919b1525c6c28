"""`torch.nn.parallel.parallel_apply`: each replica called on its inputs, on its device.

PyTorch starts a thread per replica so that each can queue its CUDA kernels while the
others do. jtorch calls the replicas one after the other from this thread: jax dispatches
asynchronously, so a replica's kernels are queued on its device and run while the next
replica is being traced and queued on another; Python is not held up by the devices. The
grad mode and autocast state are this thread's, as PyTorch's workers copy them.
"""

from __future__ import annotations

from ... import cuda as _cuda
from ..._tensor import Tensor
from ..._utils import _get_device_index
from ...data._worker import ExceptionWrapper

__all__ = ["get_a_var", "parallel_apply"]


def get_a_var(obj) -> Tensor | None:
    """Matches `torch.nn.parallel.parallel_apply.get_a_var`: the first tensor found in `obj`
    (walking lists, tuples and dict items), or None."""
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, dict):
        obj = list(obj.items())
    if isinstance(obj, (list, tuple)):
        return next((t for t in map(get_a_var, obj) if t is not None), None)
    return None


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None) -> list:
    """Matches `torch.nn.parallel.parallel_apply`: `modules[i](*inputs[i], **kwargs_tup[i])`
    with device `devices[i]` current (default: the current device). An exception in a
    replica is raised again with PyTorch's message ("Caught ValueError in replica 1 on
    device 1. Original Traceback ...")."""
    for what, given in (("inputs", inputs), ("kwargs_tup", kwargs_tup), ("devices", devices)):
        if given is not None and len(given) != len(modules):
            raise AssertionError(
                f"The number of modules {len(modules)} is not equal to the number of {what} "
                f"{len(given)}"
            )
    kwargs_tup = ({},) * len(modules) if kwargs_tup is None else kwargs_tup
    devices = [None] * len(modules) if devices is None else devices
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    devices = [_get_device_index(x, True) for x in devices]

    outputs = []
    for i, (module, input, kwargs, device) in enumerate(zip(modules, inputs, kwargs_tup, devices)):
        try:
            with _cuda.device(device):
                if not isinstance(input, (list, tuple)):
                    input = (input,)
                outputs.append(module(*input, **kwargs))
        except Exception:
            ExceptionWrapper(where=f"in replica {i} on device {device}").reraise()
    return outputs
