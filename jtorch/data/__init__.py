"""Datasets, samplers and `DataLoader`: matches `torch.utils.data` (also `jtorch.utils.data`).

The implementation lives in private modules; PyTorch's public module paths
(`torch.utils.data.dataloader`, `.dataset`, `.sampler`, `.distributed`,
`._utils.collate`, ...) are registered as aliases of them, so scripts that
import from those paths get the same objects.
"""

import importlib.machinery
import sys
import types

from . import (  # noqa: E402
    _collate,
    _dataloader,
    _dataset,
    _fetch,
    _sampler,
    _worker,
    datapipes,
    graph,
    graph_settings,
)
from ._collate import default_collate, default_convert
from ._dataloader import DataLoader, get_worker_info
from ._dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from ._fetch import DatasetKind as _DatasetKind
from ._sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .datapipes.datapipe import DataChunk, IterDataPipe, MapDataPipe, functional_datapipe

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "_DatasetKind",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
    "DataChunk",
    "IterDataPipe",
    "MapDataPipe",
    "functional_datapipe",
]


def _utils_module(name: str) -> types.ModuleType:
    """PyTorch's `torch.utils.data._utils` package, as a namespace over the private modules."""
    mod = types.ModuleType(name, "Aliases for torch.utils.data._utils.")
    mod.__spec__ = importlib.machinery.ModuleSpec(name, None)
    mod.collate, mod.worker, mod.fetch = _collate, _worker, _fetch
    mod.MP_STATUS_CHECK_INTERVAL = _worker.STATUS_CHECK_INTERVAL
    return mod


def register_aliases(prefix: str) -> None:
    """Registers PyTorch's submodule paths under `prefix` (this package, or `jtorch.utils.data`)."""
    utils = _utils_module(prefix + "._utils")
    modules = {
        "dataset": _dataset,
        "sampler": _sampler,
        "dataloader": _dataloader,
        "distributed": _sampler,
        "_utils": utils,
        "_utils.collate": _collate,
        "_utils.worker": _worker,
        "_utils.fetch": _fetch,
        "graph": graph,
        "graph_settings": graph_settings,
        "datapipes": datapipes,
        "datapipes.datapipe": datapipes.datapipe,
        "datapipes.iter": datapipes.iter,
        "datapipes.iter.combinatorics": datapipes.iter.combinatorics,
    }
    for name, mod in modules.items():
        sys.modules.setdefault(f"{prefix}.{name}", mod)


register_aliases(__name__)
dataset, sampler, dataloader, distributed = _dataset, _sampler, _dataloader, _sampler
_utils = sys.modules[__name__ + "._utils"]
