"""`torch.nn.parallel.scatter_gather`: an input structure cut into one structure per device,
and the replicas' outputs put back together on one device.

Tensors are cut with `comm.scatter` and joined with `comm.gather`; both are recorded by the
autograd tape, so a gathered output's gradient is cut back to the replicas' devices and an
input's gradient is joined back on its own device (PyTorch's `Scatter`/`Gather` functions).
"""

from __future__ import annotations

import warnings

from ..._tensor import Tensor
from ..._utils import _get_device_index
from ...cuda import comm

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs, target_gpus, dim: int = 0):
    """Matches `torch.nn.parallel.scatter`: tensors cut into about equal chunks along `dim`, one
    per device (fewer when there are fewer rows); other objects repeated for each device.

    Tuples, lists, dicts and namedtuples are walked; the result has one entry per chunk, the
    shortest of the tensors deciding how many.
    """

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return comm.scatter(obj, target_gpus, None, dim)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, target_gpus, dim: int = 0) -> tuple:
    """Matches `torch.nn.parallel.scatter_kwargs`: (positional inputs per device, keyword
    inputs per device), the shorter padded with `()` / `{}`."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        # PyTorch compares with len(inputs) here (not len(scattered_inputs)); kept as it is.
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def _gather_tensors(target_device, dim: int, outputs) -> Tensor:
    if not all(t.device.type != "cpu" for t in outputs):
        raise AssertionError("Gather function not implemented for CPU tensors")
    if all(t.dim() == 0 for t in outputs) and dim == 0:
        outputs = tuple(t.view(1) for t in outputs)
        warnings.warn(
            "Was asked to gather along dimension 0, but all input tensors were scalars; "
            "will instead unsqueeze and return a vector.",
            stacklevel=4,
        )
    if target_device != "cpu":
        target_device = _get_device_index(target_device, True)
    return comm.gather(outputs, dim, target_device)


def gather(outputs, target_device, dim: int = 0):
    """Matches `torch.nn.parallel.gather`: the per-device `outputs` (tensors, or tuples, lists,
    dicts, namedtuples of them) joined along `dim` on `target_device`; zero-dimensional
    tensors become a vector, with PyTorch's warning."""

    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            return _gather_tensors(target_device, dim, outputs)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs, strict=True)))
        return type(out)(map(gather_map, zip(*outputs, strict=True)))

    return gather_map(outputs)
