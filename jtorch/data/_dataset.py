"""Datasets: `Dataset`, `IterableDataset` and the wrappers built from them.

Matches `torch.utils.data.dataset`: map-style datasets answer `ds[i]` (and
optionally `__getitems__` for a whole batch), iterable ones yield samples.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

from .. import _random
from .._tensor import Tensor

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """Matches `torch.utils.data.Dataset`: a map from keys to samples."""

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """Matches `torch.utils.data.IterableDataset`: a stream of samples.

    With `num_workers > 0` every worker iterates its own copy; shard the stream
    with `get_worker_info()` inside `__iter__` or in `worker_init_fn`.
    """

    def __add__(self, other: Dataset[T_co]):
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Matches `torch.utils.data.TensorDataset`: sample i is `tuple(t[i] for t in tensors)`."""

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Matches `torch.utils.data.StackDataset`: zips datasets into tuples or dicts."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            # PyTorch's message really lacks the space after "or".
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via "
                "``kwargs``) like input/output, but both types are given."
            )
        parts = list(args) or list(kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list):
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        columns = {}
        for key, d in parts:
            if callable(getattr(d, "__getitems__", None)):
                items = d.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError(
                        "Nested dataset's output size mismatch. "
                        f"Expected {len(indices)}, got {len(items)}"
                    )
            else:
                items = [d[i] for i in indices]
            columns[key] = items
        if named:
            return [{k: col[n] for k, col in columns.items()} for n in range(len(indices))]
        return [tuple(col[n] for col in columns.values()) for n in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Matches `torch.utils.data.ConcatDataset`: datasets one after another."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self):
        warnings.warn(
            "`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
            FutureWarning,
            stacklevel=2,
        )
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Matches `torch.utils.data.ChainDataset`: iterable datasets chained lazily."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """Matches `torch.utils.data.Subset`: the samples of `dataset` at `indices`."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When subclassing "
                "Subset and overriding __getitem__, you must also override __getitems__ to ensure "
                "DataLoader works correctly with your custom logic. A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        mapped = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(mapped)
        return [self.dataset[i] for i in mapped]

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(n: int, fractions: Sequence[float]) -> list[int]:
    """Fractions -> lengths: floor each, then hand out the remainder round-robin from the start."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(
                f"Length of split at index {i} is 0. This might result in an empty dataset.",
                stacklevel=3,
            )
    return lengths


def random_split(
    dataset: Dataset,
    lengths: Sequence[int | float],
    generator: _random.Generator | None = _random.default_generator,
) -> list[Subset]:
    """Matches `torch.utils.data.random_split`: disjoint random subsets (lengths or fractions).

    The permutation comes from `jtorch.randperm(generator=...)`, so it is
    reproducible under a seeded generator (it is not PyTorch's permutation).
    """
    from .._ops.random import randperm

    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _split_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, indices[end - length : end])
        for end, length in zip(itertools.accumulate(lengths), lengths)
    ]
