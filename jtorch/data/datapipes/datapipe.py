"""`IterDataPipe`/`MapDataPipe` and `functional_datapipe` (PyTorch's registry of functional
forms: `@functional_datapipe("shuffle")` makes `dp.shuffle(...)` build that class over `dp`)."""

from __future__ import annotations

import functools

from .._dataset import Dataset, IterableDataset

__all__ = ["DataChunk", "IterDataPipe", "MapDataPipe", "functional_datapipe"]


class IterDataPipe(IterableDataset):
    """Matches `torch.utils.data.IterDataPipe`: an iterable dataset with functional forms."""

    functions: dict = {}
    getstate_hook = None

    def __getattr__(self, name: str):
        if name in IterDataPipe.functions:
            return functools.partial(IterDataPipe.functions[name], self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}")

    def reset(self) -> None:
        """Called when a new iteration starts (a shuffler draws its seed here)."""


class MapDataPipe(Dataset):
    """Matches `torch.utils.data.MapDataPipe`: a map-style dataset with functional forms."""

    functions: dict = {}

    def __getattr__(self, name: str):
        if name in MapDataPipe.functions:
            return functools.partial(MapDataPipe.functions[name], self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}")


class DataChunk(list):
    """A batch of items that `unbatch` can take apart."""


def functional_datapipe(name: str):
    """Registers the decorated DataPipe class as the functional form `name`."""

    def register(cls):
        table = IterDataPipe.functions if issubclass(cls, IterDataPipe) else MapDataPipe.functions
        table[name] = cls
        return cls

    return register
