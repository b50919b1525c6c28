"""`torch.nn.DataParallel` and `torch.nn.parallel.data_parallel`: one process, the batch cut
over several local accelerators.

Each forward scatters the inputs along `dim` over `device_ids` (`scatter_gather`), makes a
replica of the module per device (`replicate`: parameters copied with autograd, so every
replica's gradient accumulates into the original parameters), calls the replicas
(`parallel_apply`) and gathers their outputs on `output_device`. Without an accelerator (or
with `device_ids=[]`) the module is just called, as on PyTorch's CPU build.

Under `jtorch.compile`, a step through DataParallel over several devices runs eagerly (a
graph break, with the compiler's warning).

Which devices: `'cuda'` is the GPUs, a TPU host's chips, or with `JTORCH_CUDA_IS_CPU=1` the
simulated host devices (see `jtorch._device`).
"""

from __future__ import annotations

import itertools
import operator
import warnings

from ... import _tracing, cuda
from ..._device import device as _torch_device
from ..._utils import _get_device_index
from ...autograd.grad_mode import is_grad_enabled
from ...autograd.profiler import record_function
from ..modules.module import Module
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]

_IMBALANCE = (
    "There is an imbalance between your GPUs. You may want to exclude GPU {} which\n"
    "has less than 75% of the memory or cores of GPU {}. You can do so by setting\n"
    "the device_ids argument to DataParallel, or by setting the CUDA_VISIBLE_DEVICES\n"
    "environment variable."
)


def _check_balance(device_ids: list) -> None:
    """PyTorch's warning when one device has under 75% of another's memory or cores."""
    props = [cuda.get_device_properties(i) for i in device_ids]
    for get in (operator.attrgetter("total_memory"), operator.attrgetter("multi_processor_count")):
        values = [get(p) for p in props]
        min_pos, min_val = min(enumerate(values), key=operator.itemgetter(1))
        max_pos, max_val = max(enumerate(values), key=operator.itemgetter(1))
        if max_val and min_val / max_val < 0.75:  # a CPU device reports 0 for both
            warnings.warn(_IMBALANCE.format(device_ids[min_pos], device_ids[max_pos]), stacklevel=3)
            return


def _check_on(module: Module, src) -> None:
    for t in itertools.chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(
                f"module must have its parameters and buffers on device {src} "
                f"(device_ids[0]) but found one of them on device: {t.device}"
            )


class DataParallel(Module):
    """Matches `torch.nn.DataParallel` (see the module doc)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
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
        self.device_ids = [_get_device_index(x, True) for x in device_ids]
        self.output_device = _get_device_index(output_device, True)
        self.src_device_obj = _torch_device("cuda", self.device_ids[0])
        _check_balance(self.device_ids)
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        with record_function("DataParallel.forward"):  # the profiler's range, as PyTorch's
            return self._forward(inputs, kwargs)

    def _forward(self, inputs: tuple, kwargs: dict):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        if _tracing.is_compiling() and len(self.device_ids) > 1:
            # A traced value has no device of its own: the replicas cannot be placed.
            raise _tracing.GraphBreak("nn.DataParallel over several devices runs eagerly")
        _check_on(self.module, self.src_device_obj)
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[: len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module: Module, device_ids) -> list:
        # Without grad mode (evaluation) the replicas are detached copies.
        return replicate(module, device_ids, not is_grad_enabled())

    def scatter(self, inputs: tuple, kwargs: dict | None, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs) -> list:
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[: len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(
    module: Module, inputs, device_ids=None, output_device=None, dim: int = 0, module_kwargs=None
):
    """Matches `torch.nn.parallel.data_parallel`: what one `DataParallel(module, ...)` call
    does, without the wrapper. Raises RuntimeError without an accelerator, as PyTorch does."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        # Unlike the DataParallel module, PyTorch's functional form needs an accelerator.
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = list(range(cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_get_device_index(x, True) for x in device_ids]
    output_device = _get_device_index(output_device, True)
    _check_on(module, _torch_device("cuda", device_ids[0]))
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used_device_ids = device_ids[: len(inputs)]
    replicas = replicate(module, used_device_ids)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used_device_ids)
    return gather(outputs, output_device, dim)
