"""`torch.nn.DataParallel` and `torch.nn.parallel.data_parallel`.

Without an accelerator (or with `device_ids=[]`) DataParallel just calls the module, as
PyTorch's does on a CPU build. With accelerators it checks that the module lives on
`device_ids[0]`, moves the inputs there and calls the module once on the whole batch:
jtorch does not split the batch over several devices (no replicas, no per-device
BatchNorm statistics); the output is moved to `output_device`. For multi-device data
parallelism in jtorch, shard with JAX (see `jtorch.interop`).
"""

from __future__ import annotations

import itertools

from ..._device import device as _torch_device
from ..._tensor import Tensor
from ..modules.module import Module


def _device_index(d) -> int:
    if isinstance(d, int):
        return d
    d = _torch_device(d)
    return 0 if d.index is None else d.index


def _to(obj, dev):
    """Tensors inside tuples, lists and dicts moved to `dev` (PyTorch's one-device scatter)."""
    if isinstance(obj, Tensor):
        return obj.to(dev)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to(o, dev) for o in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, dev) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, dev)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    """Matches `torch.nn.DataParallel` on one device; see the module docstring for several."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        from ... import cuda

        if not cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(d) for d in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = _torch_device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in itertools.chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(
                    f"module must have its parameters and buffers on device "
                    f"{self.src_device_obj} (device_ids[0]) but found one of "
                    f"them on device: {t.device}"
                )
        out = self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))
        if len(self.device_ids) == 1:
            return out
        return _to(out, _torch_device("cuda", self.output_device))


def data_parallel(
    module: Module, inputs, device_ids=None, output_device=None, dim: int = 0, module_kwargs=None
):
    """Matches `torch.nn.parallel.data_parallel`: `DataParallel(module, ...)(*inputs)` once.

    Raises RuntimeError without an accelerator, as PyTorch does.
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    module_kwargs = module_kwargs or {}
    from ... import cuda

    if not cuda.is_available():
        # Unlike the DataParallel module, PyTorch's functional form needs an accelerator.
        raise RuntimeError("device type could not be determined")
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **module_kwargs)
