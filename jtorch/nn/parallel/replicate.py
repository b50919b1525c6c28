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


def _copies_per_tensor(tensors: list, devices: list, detach: bool) -> dict:
    """{id(t): (its copy on devices[0], on devices[1], ...)} for each tensor of `tensors`."""
    per_device = _broadcast(tensors, devices, detach)
    return {id(t): copies for t, copies in zip(tensors, zip(*per_device))}


def replicate(network: Module, devices, detach: bool = False) -> list:
    """Matches `torch.nn.parallel.replicate`: a replica of `network` on each of `devices`
    (see the module doc); `detach=True` makes copies without autograd."""
    if not devices:
        return []
    devices = [_get_device_index(x, True) for x in devices]
    # What reaches the replicas through autograd (parameters, and buffers that require grad
    # unless `detach`), and what is copied detached (the other buffers).
    buffers = list(network.buffers())
    tracked = list(network.parameters())
    tracked += [b for b in buffers if b.requires_grad and not detach]
    copies = _copies_per_tensor(tracked, devices, detach)
    seen = {id(t) for t in tracked}
    copies.update(_copies_per_tensor([b for b in buffers if id(b) not in seen], devices, True))

    modules = list(network.modules())
    replicas = []
    for j in range(len(devices)):
        # one shallow copy of every submodule, then its children, parameters and buffers
        # pointed at this device's copies
        made = {}
        for m in modules:
            make = getattr(type(m), "_replicate_for_data_parallel", None)
            made[id(m)] = make(m) if make is not None else _replica_of(m)
            made[id(m)]._former_parameters = OrderedDict()
        for m in modules:
            r = made[id(m)]
            for key, child in m._modules.items():
                if child is None:
                    r._modules[key] = None
                else:
                    setattr(r, key, made[id(child)])
            for key, p in m._parameters.items():
                if p is None:
                    r._parameters[key] = None
                else:
                    setattr(r, key, copies[id(p)][j])
                    r._former_parameters[key] = copies[id(p)][j]
            for key, b in m._buffers.items():
                if b is None:
                    r._buffers[key] = None
                else:
                    setattr(r, key, copies[id(b)][j])
        replicas.append(made[id(network)])
    return replicas
