"""`torch._utils`: helpers libraries call (device indices, element sizes, rebuilding tensors
from storages as checkpoints do, flattening dense tensors)."""

from __future__ import annotations

from . import _device, _dtype

__all__ = [
    "_get_device_index",
    "_element_size",
    "_rebuild_tensor",
    "_rebuild_tensor_v2",
    "_rebuild_parameter",
    "_flatten_dense_tensors",
    "_unflatten_dense_tensors",
    "_get_available_device_type",
    "_import_dotted_name",
    "classproperty",
]


def _get_device_index(device, optional: bool = False, allow_cpu: bool = False) -> int:
    """Matches `torch._utils._get_device_index`: the index of a device, an int, or (when
    `optional`) the current accelerator device for a device without index."""
    if isinstance(device, str):
        device = _device.device(device)
    index = None
    if isinstance(device, _device.device):
        if not allow_cpu and device.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {device}")
        index = -1 if device.type == "cpu" else device.index
    elif isinstance(device, int) and not isinstance(device, bool):
        index = device
    if index is None:
        if optional:
            from . import cuda

            return cuda.current_device() if cuda.is_available() else -1
        raise ValueError(
            f"Expected a torch.device with a specified index or an integer, but got:{device}"
        )
    return index


def _element_size(dtype) -> int:
    """Matches `torch._utils._element_size`: bytes per element of `dtype`."""
    if not isinstance(dtype, _dtype.dtype):
        raise RuntimeError(f"expected torch.dtype, but got {type(dtype)}")
    return dtype.itemsize


def _rebuild_tensor(storage, storage_offset: int, size, stride):
    """A tensor over `storage` (a TypedStorage) with the given layout, as checkpoints say."""
    from ._ops.creation import empty

    t = empty((0,), dtype=storage.dtype, device=storage.device)
    return t.set_(storage, storage_offset, tuple(size), tuple(stride))


def _rebuild_tensor_v2(
    storage, storage_offset: int, size, stride, requires_grad: bool, backward_hooks, metadata=None
):
    """Matches `torch._utils._rebuild_tensor_v2` (what `torch.save` pickles name)."""
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    t.requires_grad = requires_grad
    if metadata:
        t.__dict__.update(metadata)
    return t


def _rebuild_parameter(data, requires_grad: bool, backward_hooks):
    """Matches `torch._utils._rebuild_parameter`."""
    from .nn.parameter import Parameter

    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    if state:
        p.__dict__.update(state)
    return p


def _flatten_dense_tensors(tensors):
    """Matches `torch._utils._flatten_dense_tensors`: one flat tensor of them all."""
    from ._ops.shape import cat

    return cat([t.contiguous().view(-1) for t in tensors], 0)


def _unflatten_dense_tensors(flat, tensors) -> tuple:
    """Matches `torch._utils._unflatten_dense_tensors`: views of `flat` shaped as
    `tensors`."""
    out, offset = [], 0
    for t in tensors:
        n = t.numel()
        out.append(flat.narrow(0, offset, n).view_as(t))
        offset += n
    return tuple(out)


def _get_available_device_type():
    """ "cuda" when jtorch has an accelerator, else None (as PyTorch's CPU build)."""
    from . import cuda

    return "cuda" if cuda.is_available() else None


def _import_dotted_name(name: str):
    import importlib

    components = name.split(".")
    obj = importlib.import_module(components[0])
    for component in components[1:]:
        obj = getattr(obj, component)
    return obj


class classproperty:
    """A read-only property of a class."""

    def __init__(self, fget):
        self.fget = fget

    def __get__(self, instance, owner):
        return self.fget(owner)
