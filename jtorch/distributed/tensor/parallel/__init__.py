"""`torch.distributed.tensor.parallel`: tensor parallelism by module (see `style`)."""

from .api import parallelize_module  # noqa: F401
from .loss import loss_parallel  # noqa: F401
from .style import (  # noqa: F401
    ColwiseParallel,
    ParallelStyle,
    PrepareModuleInput,
    PrepareModuleInputOutput,
    PrepareModuleOutput,
    RowwiseParallel,
    SequenceParallel,
)

__all__ = [
    "ColwiseParallel",
    "ParallelStyle",
    "PrepareModuleInput",
    "PrepareModuleInputOutput",
    "PrepareModuleOutput",
    "RowwiseParallel",
    "SequenceParallel",
    "parallelize_module",
    "loss_parallel",
]
