"""`torch.distributed.algorithms.model_averaging.utils`: averaging parameters over a group."""

from __future__ import annotations

from ... import distributed_c10d as c10d

__all__ = ["average_parameters", "average_parameters_or_parameter_groups", "get_params_to_average"]


def average_parameters(params, process_group) -> None:
    """Averages `params` in place over `process_group`: PyTorch packs them into one flat
    buffer (so an empty list fails in `cat`), divides it by the group size, all-reduces it
    and copies the pieces back."""
    from .... import cat, no_grad

    group = process_group if process_group is not None else c10d._get_default_group()
    params = list(params)
    with no_grad():
        flat = cat([p.data.reshape(-1) for p in params])
        flat.div_(group.size())
        c10d.all_reduce(flat, group=group)
        offset = 0
        for p in params:
            n = p.numel()
            p.data.copy_(flat[offset : offset + n].view_as(p))
            offset += n


def get_params_to_average(params) -> list:
    """The parameters (or those of the param groups) that have gradients."""
    out = []
    for item in params:
        if isinstance(item, dict):
            out.extend(p for p in item["params"] if p.grad is not None)
        elif item.grad is not None:
            out.append(item)
    return out


def average_parameters_or_parameter_groups(params, process_group) -> None:
    average_parameters(get_params_to_average(params), process_group)
