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


def _pieces(obj, devices: list, dim: int) -> list:
    """`obj` cut into a list of one structure per piece (see `scatter`)."""
    if isinstance(obj, Tensor):
        return list(comm.scatter(obj, devices, None, dim))
    if isinstance(obj, (tuple, list, dict)) and len(obj) > 0:
        items = list(obj.items()) if isinstance(obj, dict) else list(obj)
        # each element cut on its own, then regrouped by piece (zip stops at the fewest)
        by_piece = zip(*(_pieces(item, devices, dim) for item in items))
        if _is_namedtuple(obj):
            return [type(obj)(*piece) for piece in by_piece]
        if isinstance(obj, tuple):
            return [tuple(piece) for piece in by_piece]
        if isinstance(obj, list):
            return [list(piece) for piece in by_piece]
        return [type(obj)(piece) for piece in by_piece]
    return [obj] * len(devices)


def scatter(inputs, target_gpus, dim: int = 0):
    """Matches `torch.nn.parallel.scatter`: tensors cut into about equal chunks along `dim`, one
    per device (fewer when there are fewer rows); other objects repeated for each device.

    Tuples, lists, dicts and namedtuples are walked; the result has one entry per chunk, the
    shortest of the tensors deciding how many.
    """
    return _pieces(inputs, list(target_gpus), dim)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, target_gpus, dim: int = 0) -> tuple:
    """Matches `torch.nn.parallel.scatter_kwargs`: (positional inputs per device, keyword
    inputs per device), the shorter padded with `()` / `{}`."""
    args = scatter(inputs, target_gpus, dim) if inputs else []
    kws = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(args) < len(kws):
        args += [()] * (len(kws) - len(args))
    elif len(kws) < len(inputs):
        # PyTorch pads the keyword side only when it is shorter than the *unscattered*
        # positional inputs (its test compares with len(inputs)); the same here.
        kws += [{}] * (len(args) - len(kws))
    return tuple(args), tuple(kws)


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
    first = outputs[0]
    if isinstance(first, Tensor):
        return _gather_tensors(target_device, dim, outputs)
    if first is None:
        return None
    if isinstance(first, dict):
        if any(len(d) != len(first) for d in outputs):
            raise ValueError("All dicts must have the same number of keys")
        return type(first)((k, gather([d[k] for d in outputs], target_device, dim)) for k in first)
    joined = (gather(list(column), target_device, dim) for column in zip(*outputs, strict=True))
    return type(first)._make(joined) if _is_namedtuple(first) else type(first)(joined)
