"""`torch.nn.parallel.DistributedDataParallel` in a one-process world (see jtorch.distributed).

With one rank, averaging gradients over ranks leaves them as they are, so DDP is the module
itself behind a `module` attribute (state_dict keys gain the `module.` prefix, as in
PyTorch). Like PyTorch it requires an initialised default process group.
"""

from __future__ import annotations

import contextlib

from ... import distributed as dist
from ..modules.module import Module


class DistributedDataParallel(Module):
    """Matches `torch.nn.parallel.DistributedDataParallel` for world size 1."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params: bool = False):
        super().__init__()
        if process_group is None:
            dist.get_world_size()       # PyTorch's error when no default group exists
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.device_ids = list(device_ids) if device_ids else None
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Skips the (here trivial) gradient all-reduce inside the block."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook) -> None:
        """Accepted: with one rank there is no communication for the hook to run on."""

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False):
        return contextlib.nullcontext()

    def _set_static_graph(self) -> None:
        self.static_graph = True
