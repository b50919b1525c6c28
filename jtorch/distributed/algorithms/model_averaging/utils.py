"""`torch.distributed.algorithms.model_averaging.utils`: averaging parameters over a group."""

from __future__ import annotations

from ... import distributed_c10d as c10d

__all__ = ["average_parameters", "average_parameters_or_parameter_groups",
           "get_params_to_average"]


def average_parameters(params, process_group) -> None:
    """Averages `params` in place over `process_group` (all-reduce, then divide)."""
    group = process_group if process_group is not None else c10d._get_default_group()
    params = [p for p in params if p is not None]
    if not params:
        return
    from .... import no_grad
    with no_grad():
        for p in params:
            c10d.all_reduce(p.data, group=group)
            p.data.div_(group.size())


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
