"""`torch.nn.parallel.DistributedDataParallel` in a one-process world (see jtorch.distributed).

With one rank, averaging gradients over ranks leaves them as they are, so DDP is the module
itself behind a `module` attribute (state_dict keys gain the `module.` prefix, as in
PyTorch). Like PyTorch it requires an initialised default process group.
"""

from __future__ import annotations

import contextlib
import os

from ... import _dtype
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
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.reducer = _Reducer()

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

    def _get_ddp_logging_data(self) -> dict:
        """PyTorch's DDP logging record: the settings, the module and the world it runs in."""
        params = [p for p in self.module.parameters() if p.requires_grad]
        nbytes = sum(p.numel() * p.element_size() for p in params)
        dtypes = sorted({_dtype.c10_name(p.dtype).lower() for p in params})
        env = os.environ.get
        return {
            "backend_name": dist.get_backend(), "bucket_sizes": str(nbytes),
            "cuda_visible_devices": env("CUDA_VISIBLE_DEVICES", "N/A"),
            "device_ids": ", ".join(str(d) for d in self.device_ids or []),
            "dtypes": ", ".join(dtypes), "gloo_device_transport": env("GLOO_DEVICE_TRANSPORT",
                                                                      "N/A"),
            "gloo_socket_ifname": env("GLOO_SOCKET_IFNAME", "N/A"),
            "master_addr": env("MASTER_ADDR", "N/A"), "master_port": env("MASTER_PORT", "N/A"),
            "module_name": type(self.module).__name__,
            "torch_distributed_debug": env("TORCH_DISTRIBUTED_DEBUG", "N/A"),
            "broadcast_buffers": int(self.broadcast_buffers),
            "bucket_cap_bytes": self.bucket_bytes_cap,
            "find_unused_parameters": int(self.find_unused_parameters), "gloo_num_threads": 2,
            "gradient_as_bucket_view": int(self.gradient_as_bucket_view), "has_sync_bn": int(
                any(type(m).__name__ == "SyncBatchNorm" for m in self.module.modules())),
            "is_multi_device_module": 0, "iteration": 0, "num_parameter_tensors": len(params),
            "output_device": -1 if self.output_device is None else self.output_device,
            "rank": dist.get_rank(), "total_parameter_size_bytes": nbytes,
            "world_size": dist.get_world_size(),
        }


class _Reducer:
    """DDP's reducer, as far as Python calls it: it prepares the bucketed gradient
    all-reduce of the next backward. Over one rank there is nothing to reduce, so preparing,
    rebuilding buckets and delaying the reduction have nothing to act on."""

    def prepare_for_backward(self, outputs) -> None:
        return None

    def _rebuild_buckets(self) -> bool:
        return False

    def _delay_all_reduce(self) -> None:
        return None
