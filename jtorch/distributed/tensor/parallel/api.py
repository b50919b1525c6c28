"""`parallelize_module`: applying tensor-parallel styles by module path."""

from __future__ import annotations

import warnings
from fnmatch import fnmatch

from ...device_mesh import _current_mesh
from .style import ParallelStyle

__all__ = ["parallelize_module"]


def parallelize_module(
    module, device_mesh=None, parallelize_plan=None, *, src_data_rank: int | None = 0
):
    """Matches `torch.distributed.tensor.parallel.parallelize_module`: `parallelize_plan` is a
    style, or `{module path (fnmatch patterns per level): style}`."""
    device_mesh = device_mesh or _current_mesh()
    if parallelize_plan is None:
        warnings.warn(
            "No parallelize_plan is provided and auto-parallel is not supported at "
            "the moment, so this parallelize_module call will do nothing.",
            stacklevel=2,
        )
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan.src_data_rank = src_data_rank
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(
            f"Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for "
            f"parallelize_plan, {type(parallelize_plan)} found!"
        )
    for path, style in parallelize_plan.items():
        if path == "":
            parallelize_module(module, device_mesh, style)
            continue
        token, _, rest = path.partition(".")
        matched = [m for name, m in module.named_children() if fnmatch(name, token)]
        if not matched:
            warnings.warn(
                f"Parallelize plan key '{path}' could not be resolved: no submodule "
                f"matching token '{token}' in module {module}, skipping this plan "
                f"entry.",
                stacklevel=2,
            )
            continue
        for sub in matched:
            parallelize_module(
                sub, device_mesh, {rest: style} if rest else style, src_data_rank=src_data_rank
            )
    return module
