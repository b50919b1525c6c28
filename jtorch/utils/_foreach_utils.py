"""`torch.utils._foreach_utils`: which tensors PyTorch's code hands to the `_foreach_*` ops.

PyTorch's optimizers and `nn.utils` group tensors by (device, dtype) and call the foreach
ops where the device has them. jtorch's foreach ops run on every device that holds data,
as one compiled program per call; the meta device gets the per-tensor path, as in PyTorch.
"""

from __future__ import annotations

from .._C import _get_privateuse1_backend_name
from .._tensor import Tensor
from ..autograd import grad_mode
from ..jit import is_scripting

__all__: list[str] = []

TensorListList = list  # list[list[Tensor | None]]
Indices = list  # list[int]
_foreach_supported_types = [Tensor]


def _get_foreach_kernels_supported_devices() -> list[str]:
    """Matches PyTorch's: the device types with foreach kernels, besides the CPU (and
    jtorch's own accelerator names, whose foreach ops are as real as the CPU's)."""
    return ["cuda", "xpu", "mtia", "tpu", "xla", _get_privateuse1_backend_name()]


def _get_fused_kernels_supported_devices() -> list[str]:
    """Matches PyTorch's list of device types with fused optimizer kernels."""
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", _get_privateuse1_backend_name()]


@grad_mode.no_grad()
def _group_tensors_by_device_and_dtype(
    tensorlistlist: TensorListList, with_indices: bool = False
) -> dict:
    """Matches `torch.utils._foreach_utils._group_tensors_by_device_and_dtype`.

    Groups the positions of the lists by the (device, dtype) of the first list's tensor there:
    `{(device, dtype): ([each list's tensors at those positions], positions)}` (the positions
    only `with_indices`). Entries of the other lists may be None; the first list's may not.
    """
    groups: dict = {}
    for i, t in enumerate(tensorlistlist[0]):
        if t is None:
            raise RuntimeError(
                "Tensors of the first list of nested Tensor lists are supposed to be defined "
                f"but the {i}-th Tensor is not."
            )
        key = (t.device, t.dtype)
        if key not in groups:
            groups[key] = ([[] for _ in tensorlistlist], [])
        lists, indices = groups[key]
        for out, src in zip(lists, tensorlistlist):
            out.append(src[i])
        if with_indices:
            indices.append(i)
    return groups


def _device_has_foreach_support(device) -> bool:
    """Matches PyTorch's: foreach ops for `device`'s type (the CPU included)."""
    return (
        device.type in (_get_foreach_kernels_supported_devices() + ["cpu"]) and not is_scripting()
    )


def _has_foreach_support(tensors: list, device) -> bool:
    """Matches PyTorch's: `device` has foreach ops and every tensor is a plain Tensor."""
    return _device_has_foreach_support(device) and all(
        t is None or type(t) in _foreach_supported_types for t in tensors
    )
