"""`torch.nn.parallel.DistributedDataParallel`: data parallel training over processes.

DDP wraps a module (state_dict keys gain the `module.` prefix, as in PyTorch). At
construction it broadcasts rank 0's parameters and buffers to every rank; before each
forward it broadcasts rank 0's buffers (`broadcast_buffers`); during backward its reducer
(`_reducer`) averages the gradients over the process group, bucket by bucket, with one
all-reduce per bucket. Inside `no_sync()` gradients accumulate locally and are averaged by
the first backward after it. Over one rank there is nothing to average and the reducer does
nothing. Like PyTorch it requires an initialised default process group.

Under `jtorch.compile`, a training step through DDP (forward, `backward()`, optimizer step)
is one program of all the processes with its all-reduces inside (`jtorch/_spmd.py`); a
compiled forward arms the reducer at each call, so the eager backward after it averages.
`find_unused_parameters=True` runs eagerly (each call's graph is looked at).
"""

from __future__ import annotations

import contextlib
import os

from ... import _dtype, _tracing
from ... import distributed as dist
from ..modules.module import Module
from ._reducer import Reducer


class DistributedDataParallel(Module):
    """Matches `torch.nn.parallel.DistributedDataParallel` (see the module doc)."""

    def __init__(
        self,
        module: Module,
        device_ids=None,
        output_device=None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        init_sync: bool = True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        delay_all_reduce_named_params=None,
        param_to_hook_all_reduce=None,
        mixed_precision=None,
        device_mesh=None,
        skip_all_reduce_unused_params: bool = False,
    ):
        super().__init__()
        if process_group is None:
            dist.get_world_size()  # PyTorch's error when no default group exists
        if device_mesh is not None:
            process_group = device_mesh.get_group()
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't "
                "have any parameter that requires a gradient."
            )
        self.module = module
        self.process_group = process_group or dist.distributed_c10d._get_default_group()
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
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        params, seen = [], set()
        for name, p in module.named_parameters():
            if p.requires_grad and id(p) not in seen and name not in self.parameters_to_ignore:
                seen.add(id(p))
                params.append(p)
        self._multi = self.process_group.size() > 1
        if self._multi and init_sync:
            from ...distributed.utils import _sync_module_states

            _sync_module_states(
                module, self.process_group, 250 * 1024 * 1024, 0, self.parameters_to_ignore
            )
        self.reducer = (
            Reducer(
                params,
                self.process_group,
                self.bucket_bytes_cap,
                find_unused_parameters,
                # PyTorch's default first bucket: 1 MiB, unless bucket_cap_mb was given.
                1024 * 1024 if bucket_cap_mb is None else self.bucket_bytes_cap,
            )
            if self._multi
            else _Reducer()
        )

    def forward(self, *inputs, **kwargs):
        if self._multi:
            self.reducer.check_finished()
            if self.broadcast_buffers and self.require_forward_param_sync:
                buffers = [
                    b.detach()
                    for n, b in self.module.named_buffers()
                    if n not in self.parameters_to_ignore
                ]
                if buffers:
                    dist.distributed_c10d._broadcast_coalesced(
                        self.process_group, buffers, 250 * 1024 * 1024, 0
                    )
        out = self.module(*inputs, **kwargs)
        if self._multi:
            if _tracing.is_compiling():
                if self.find_unused_parameters:
                    raise _tracing.GraphBreak(
                        "DistributedDataParallel(find_unused_parameters=True) looks for the "
                        "unused parameters in each call's autograd graph"
                    )
                # A later call of the compiled program runs no Python: arm the reducer then.
                _tracing.each_call(self._arm_reducer)
            self._arm_reducer(out)
        return out

    def _arm_reducer(self, out=None) -> None:
        """After a forward: the next backward averages the gradients (unless grad mode is off
        or inside `no_sync`)."""
        from ... import is_grad_enabled

        self.reducer.check_finished()
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(out)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside the block; the first backward after it
        averages what accumulated."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook) -> None:
        """Matches `DistributedDataParallel.register_comm_hook`: `hook(state, bucket)`
        returns a future of the bucket's reduced buffer (over one rank it is never called:
        there is no communication)."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        if isinstance(self.reducer, Reducer):
            if self.reducer.comm_hook is not None:
                raise RuntimeError(
                    "register_comm_hook or register_builtin_comm_hook can only be called once."
                )
            self.reducer.comm_hook = (state, hook)

    def join(
        self,
        divide_by_initial_world_size: bool = True,
        enable: bool = True,
        throw_on_early_termination: bool = False,
    ):
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
            "backend_name": dist.get_backend(),
            "bucket_sizes": str(nbytes),
            "cuda_visible_devices": env("CUDA_VISIBLE_DEVICES", "N/A"),
            "device_ids": ", ".join(str(d) for d in self.device_ids or []),
            "dtypes": ", ".join(dtypes),
            "gloo_device_transport": env("GLOO_DEVICE_TRANSPORT", "N/A"),
            "gloo_socket_ifname": env("GLOO_SOCKET_IFNAME", "N/A"),
            "master_addr": env("MASTER_ADDR", "N/A"),
            "master_port": env("MASTER_PORT", "N/A"),
            "module_name": type(self.module).__name__,
            "torch_distributed_debug": env("TORCH_DISTRIBUTED_DEBUG", "N/A"),
            "broadcast_buffers": int(self.broadcast_buffers),
            "bucket_cap_bytes": self.bucket_bytes_cap,
            "find_unused_parameters": int(self.find_unused_parameters),
            "gloo_num_threads": 2,
            "gradient_as_bucket_view": int(self.gradient_as_bucket_view),
            "has_sync_bn": int(
                any(type(m).__name__ == "SyncBatchNorm" for m in self.module.modules())
            ),
            "is_multi_device_module": 0,
            "iteration": 0,
            "num_parameter_tensors": len(params),
            "output_device": -1 if self.output_device is None else self.output_device,
            "rank": dist.get_rank(),
            "total_parameter_size_bytes": nbytes,
            "world_size": dist.get_world_size(),
        }


class _Reducer:
    """DDP's reducer over one rank, as far as Python calls it: there is nothing to reduce,
    so preparing, rebuilding buckets and delaying the reduction have nothing to act on."""

    def prepare_for_backward(self, outputs) -> None:
        return None

    def _rebuild_buckets(self) -> bool:
        return False

    def _delay_all_reduce(self) -> None:
        return None
