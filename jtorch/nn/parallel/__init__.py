"""`torch.nn.parallel`: `DataParallel` over one process's local accelerators (with its parts
`scatter`, `replicate`, `parallel_apply`, `gather`, and `comm`), and
`DistributedDataParallel` over processes (see `jtorch.distributed`)."""

from . import comm  # noqa: F401
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
from .parallel_apply import parallel_apply  # noqa: F401
from .replicate import replicate  # noqa: F401
from .scatter_gather import gather, scatter  # noqa: F401

__all__ = [
    "replicate",
    "scatter",
    "parallel_apply",
    "gather",
    "data_parallel",
    "DataParallel",
    "DistributedDataParallel",
]
