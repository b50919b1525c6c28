"""`torch.nn.parallel.replicate`: one copy of a module per device, for `DataParallel`.

As in PyTorch, a replica is a shallow copy of each submodule whose parameters are copies
of the original parameters on the replica's device, made *with* autograd: each replica's
gradient flows back through the copy into the original parameter, so after a backward the
original `.grad` holds the sum over the replicas. The replica on the first device holds
views of the parameters themselves and the buffers themselves (PyTorch: "the replica on
device[0] will have its parameters and buffers sharing storage with the base module"), so
in-place updates there, such as BatchNorm's running statistics, reach the original module;
the other replicas' buffers are detached copies whose updates are dropped with the replica.
"""

from __future__ import annotations

from collections import OrderedDict

from ..._utils import _get_device_index
from ...autograd.grad_mode import no_grad
from ...cuda import comm
from ..modules.module import Module

__all__ = ["replicate"]


def _replica_of(module: Module) -> Module:
    """Matches `Module._replicate_for_data_parallel` (used when a class does not define it):
    a shallow copy with no parameters of its own."""
    replica = module.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    replica._parameters = {}
    replica._buffers = replica._buffers.copy()
    replica._modules = replica._modules.copy()
    replica._is_replica = True
    return replica


def _broadcast(tensors: list, devices: list, detach: bool) -> list:
    """`tensors` (all on devices[0]) for each device: a list per device."""
    if not tensors:
        return []
    if detach:
        with no_grad():
            return comm.broadcast_coalesced(tensors, devices)
    for i, t in enumerate(tensors):
        if comm._index_of(t) != devices[0]:
            raise RuntimeError(
                f"All tensors must be on devices[0]: {devices[0]}, but tensor at index {i} "
                f"is on {t.device}"
            )
    # PyTorch's Broadcast function: its output for the source device is a view of the input
    # (an autograd function's output that is its input), a copy for every other device.
    return [[t.view_as(t) for t in tensors]] + [
        [t.to(comm._cuda(d)) for t in tensors] for d in devices[1:]
    ]


def replicate(network: Module, devices, detach: bool = False) -> list:
    """Matches `torch.nn.parallel.replicate`: a replica of `network` on each of `devices`
    (see the module doc); `detach=True` makes copies without autograd."""
    if not devices:
        return []
    devices = [_get_device_index(x, True) for x in devices]
    num_replicas = len(devices)

    params = list(network.parameters())
    param_indices = {id(p): i for i, p in enumerate(params)}
    param_copies = _broadcast(params, devices, detach)

    buffers = list(network.buffers())
    buffers_rg = [b for b in buffers if b.requires_grad and not detach]
    buffers_not_rg = [b for b in buffers if not (b.requires_grad and not detach)]
    buffer_indices_rg = {id(b): i for i, b in enumerate(buffers_rg)}
    buffer_indices_not_rg = {id(b): i for i, b in enumerate(buffers_not_rg)}
    buffer_copies_rg = _broadcast(buffers_rg, devices, detach)
    buffer_copies_not_rg = _broadcast(buffers_not_rg, devices, True)

    modules = list(network.modules())
    module_copies: list[list[Module]] = [[] for _ in devices]
    module_indices = {}
    for i, module in enumerate(modules):
        module_indices[id(module)] = i
        make = getattr(type(module), "_replicate_for_data_parallel", None)
        for j in range(num_replicas):
            replica = make(module) if make is not None else _replica_of(module)
            replica._former_parameters = OrderedDict()
            module_copies[j].append(replica)

    for i, module in enumerate(modules):
        for key, child in module._modules.items():
            for j in range(num_replicas):
                replica = module_copies[j][i]
                if child is None:
                    replica._modules[key] = None
                else:
                    setattr(replica, key, module_copies[j][module_indices[id(child)]])
        for key, param in module._parameters.items():
            for j in range(num_replicas):
                replica = module_copies[j][i]
                if param is None:
                    replica._parameters[key] = None
                else:
                    param_copy = param_copies[j][param_indices[id(param)]]
                    setattr(replica, key, param_copy)
                    replica._former_parameters[key] = param_copy
        for key, buf in module._buffers.items():
            for j in range(num_replicas):
                replica = module_copies[j][i]
                if buf is None:
                    replica._buffers[key] = None
                elif buf.requires_grad and not detach:
                    setattr(replica, key, buffer_copies_rg[j][buffer_indices_rg[id(buf)]])
                else:
                    setattr(replica, key, buffer_copies_not_rg[j][buffer_indices_not_rg[id(buf)]])

    return [module_copies[j][0] for j in range(num_replicas)]
