"""`parameters_to_vector` and `vector_to_parameters`."""

from __future__ import annotations

from typing import Iterable

from ... import cat, typename
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Matches `torch.nn.utils.parameters_to_vector`: the parameters flattened, concatenated."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Matches `torch.nn.utils.vector_to_parameters`: slices of `vec` become the params' data."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer : pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param: Tensor, old_param_device: int | None) -> int:
    """The device index of `param` (-1 for non-cuda); raises if it differs from the last."""
    if old_param_device is None:
        return param.get_device() if param.device.type == "cuda" else -1
    if param.device.type == "cuda":
        warn = param.get_device() != old_param_device
    else:
        warn = old_param_device != -1
    if warn:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return old_param_device
