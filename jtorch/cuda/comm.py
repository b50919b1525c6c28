"""`torch.cuda.comm` (also `torch.nn.parallel.comm`): copies between local accelerators.

Each function is tensor ops (`Tensor.to`, `chunk`, `cat`, `+`): jax moves the data between
its devices, and the autograd tape records the moves (the gradient of a copy goes back to
the source device), which is what `nn.DataParallel`'s scatter and gather rely on. The
coalesced forms give the same results as the plain ones (coalescing is a transport detail of
NCCL); sparse tensors are not supported.

Without an accelerator, naming a device index raises PyTorch's CPU-build error
(`AssertionError: Torch not compiled with CUDA enabled`).
"""

from __future__ import annotations

import warnings

from .. import _device
from .._tensor import Tensor
from .._utils import _get_device_index

__all__ = [
    "broadcast",
    "broadcast_coalesced",
    "reduce_add",
    "reduce_add_coalesced",
    "scatter",
    "gather",
]


def _cuda(index: int) -> _device.device:
    d = _device.device("cuda", index)
    _device.to_jax(d)  # raises as PyTorch's CPU build, or for a bad ordinal
    return d


def _index_of(t: Tensor) -> int:
    """`Tensor.get_device()`: the accelerator index, -1 on the CPU."""
    d = t.device
    return -1 if d.type == "cpu" else (d.index or 0)


def _copy_to(t: Tensor, index: int) -> Tensor:
    """`t` on accelerator `index`: `t` itself when it is there already (PyTorch's broadcast
    hands back the source tensor for the source device)."""
    return t if _index_of(t) == index else t.to(_cuda(index))


def broadcast(tensor: Tensor, devices=None, *, out=None):
    """Matches `torch.cuda.comm.broadcast`: `tensor` copied to each of `devices` (or into each
    of `out`)."""
    if not ((devices is None) ^ (out is None)):
        raise RuntimeError(
            f"Exactly one of 'devices' and 'out' must be specified, but got "
            f"devices={devices} and out={out}"
        )
    if devices is not None:
        return tuple(_copy_to(tensor, _get_device_index(d)) for d in devices)
    for o in out:
        if o.shape != tensor.shape:
            raise RuntimeError(
                f"Expected all output tensors to have the same shape as the source "
                f"{tuple(tensor.shape)}, but got {tuple(o.shape)}"
            )
    for o in out:
        o.copy_(tensor)
    return tuple(out)


def broadcast_coalesced(tensors, devices, buffer_size: int = 10485760) -> list:
    """Matches `torch.cuda.comm.broadcast_coalesced`: one list of copies per device; the list
    for `devices[0]`, where every tensor must be, holds the tensors themselves."""
    devices = [_get_device_index(d) for d in devices]
    for i, t in enumerate(tensors):
        if _index_of(t) != devices[0]:
            raise RuntimeError(
                f"All tensors must be on devices[0]: {devices[0]}, but tensor at index {i} "
                f"is on {t.device}"
            )
    return [list(tensors)] + [[t.to(_cuda(d)) for t in tensors] for d in devices[1:]]


def reduce_add(inputs, destination=None) -> Tensor:
    """Matches `torch.cuda.comm.reduce_add`: the sum of `inputs`, on `destination`, which
    must hold one of them."""
    destination = _get_device_index(destination, optional=True)
    input_size = inputs[0].size()
    root_index = None
    for i, inp in enumerate(inputs):
        if inp.device.type == "cpu":
            raise AssertionError(
                f"reduce_add expects all inputs to be on GPUs, but input {i} is on CPU"
            )
        if _index_of(inp) == destination:
            root_index = i
        if inp.size() != input_size:
            got = "x".join(str(x) for x in inp.size())
            expected = "x".join(str(x) for x in input_size)
            raise ValueError(f"input {i} has invalid size: got {got}, but expected {expected}")
    if root_index is None:
        raise RuntimeError(
            "reduce_add expects destination to be on the same GPU with one of the tensors"
        )
    if len(inputs) == 1:
        return inputs[0]
    # PyTorch's order of summation without NCCL: the root, then the others in order.
    dest = _cuda(destination)
    nonroot = [t for i, t in enumerate(inputs) if i != root_index]
    result = inputs[root_index] + nonroot[0].to(dest)
    for other in nonroot[1:]:
        result.add_(other.to(dest))
    return result


def reduce_add_coalesced(inputs, destination=None, buffer_size: int = 10485760) -> tuple:
    """Matches `torch.cuda.comm.reduce_add_coalesced`: `inputs[d]` holds device d's tensors;
    the i-th result sums the i-th tensor of every device (detached, as PyTorch's)."""
    return tuple(
        reduce_add(list(column), destination).detach() for column in zip(*inputs, strict=True)
    )


def scatter(
    tensor: Tensor, devices=None, chunk_sizes=None, dim: int = 0, streams=None, *, out=None
):
    """Matches `torch.cuda.comm.scatter`: `tensor` cut along `dim` (as `Tensor.chunk` cuts it,
    or into `chunk_sizes`) and each piece put on its device (or copied into `out`)."""
    if out is not None:
        if devices is not None:
            raise RuntimeError(
                f"'devices' must not be specified when 'out' is specified, but got "
                f"devices={devices}"
            )
        if chunk_sizes is not None:
            raise RuntimeError(
                f"'chunk_sizes' must not be specified when 'out' is specified, but got "
                f"chunk_sizes={chunk_sizes}"
            )
        sizes = [o.size(dim) for o in out]
        if sum(sizes) != tensor.size(dim):
            raise RuntimeError(
                f"Total size for output tensors along scatter dim ({sum(sizes)}) does not "
                f"match the size of the source tensor ({tensor.size(dim)})"
            )
        for o, piece in zip(out, tensor.split(sizes, dim)):
            o.copy_(piece)
        return tuple(out)
    if devices is None:
        raise RuntimeError("Either 'devices' or 'out' must be specified")
    devices = [_get_device_index(d) for d in devices]
    if chunk_sizes is None:
        pieces = tensor.chunk(len(devices), dim)
    else:
        chunk_sizes = list(chunk_sizes)
        if len(chunk_sizes) != len(devices):
            raise RuntimeError(
                f"Expected devices and chunk_sizes to be of same length, but got "
                f"len(devices) = {len(devices)} and len(chunk_sizes) = {len(chunk_sizes)}"
            )
        if sum(chunk_sizes) != tensor.size(dim):
            raise RuntimeError(
                f"Expected chunk sizes to sum to {tensor.size(dim)}, but got {sum(chunk_sizes)}"
            )
        pieces = tensor.split(chunk_sizes, dim)
    # `chunk` may give fewer pieces than devices (5 rows over 4 devices: 2, 2, 1).
    return tuple(_copy_to(p, d).contiguous() for p, d in zip(pieces, devices))


def gather(tensors, dim: int = 0, destination=None, *, out=None) -> Tensor:
    """Matches `torch.cuda.comm.gather`: `tensors` concatenated along `dim` on `destination`
    (the current device by default, `'cpu'` for the host), or into `out`."""
    for i, t in enumerate(tensors):
        if t.device.type == "cpu":
            raise RuntimeError(
                f"Expected all input tensors to be CUDA tensors, but tensor at index {i} "
                f"was on device cpu"
            )
    if out is not None:
        if destination is not None:
            raise RuntimeError(
                f"'destination' must not be specified when 'out' is specified, but got "
                f"destination={destination}"
            )
        return out.copy_(_cat_on(tensors, dim, out.device))
    if destination == -1:
        warnings.warn(
            "Using -1 to represent CPU tensor is deprecated. Please use a device object or "
            'string instead, e.g., "cpu".',
            FutureWarning,
            stacklevel=2,
        )
    index = _get_device_index(destination, allow_cpu=True, optional=True)
    target = _device.CPU if index == -1 else _cuda(index)
    return _cat_on(tensors, dim, target)


def _cat_on(tensors, dim: int, target: _device.device) -> Tensor:
    from .._ops.shape import cat

    return cat([t.to(target) for t in tensors], dim)
