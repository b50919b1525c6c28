"""Samplers: which indices a `DataLoader` fetches, and in what order.

Matches `torch.utils.data.sampler` and `torch.utils.data.distributed`. Random
samplers draw from jtorch's generators, so a seeded `jtorch.Generator`
reproduces the order (PyTorch's bit streams themselves are not reproduced).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import jax
import numpy as np

from .. import _dtype, _programs, _random

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
    "DistributedSampler",
]

T_co = TypeVar("T_co", covariant=True)


def _ops():
    import jtorch  # the op namespace; imported late, samplers sit above the ops layer

    return jtorch


_SORT_KEYS = _programs.ProgramCache("sampler sort keys", share=1 / 64)


def _sort_keys(key, n: int) -> list:
    """The random sort keys of each round of `jax.random.permutation(key, n)`, in order."""
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    program = _SORT_KEYS.get((n, key.shape, key.dtype))
    if program is None:

        def draw(key):
            keys = []
            for _ in range(rounds):
                key, subkey = jax.random.split(key)
                keys.append(jax.random.bits(subkey, (n,), np.uint32))
            return keys

        program = _SORT_KEYS.put((n, key.shape, key.dtype), jax.jit(draw))
    return program(key)


def randperm_list(n: int, generator) -> list[int]:
    """`torch.randperm(n, generator=generator).tolist()`: the same draw, sorted by numpy.

    `jax.random.permutation` stable-sorts `arange(n)` by random keys, once per round; XLA's
    CPU sort took 25 ms of a 60000-sample shuffled epoch and compiled for 0.2 s, numpy's
    stable argsort of the same keys gives the same order in a tenth of that.
    `tests/test_data.py::test_samplers_shuffle_as_randperm` holds it to `randperm`'s order.
    """
    key = _random.key_for(generator)
    order = np.arange(n)
    for sort_key in _sort_keys(key, n):
        order = order[np.argsort(np.asarray(sort_key), kind="stable")]
    return order.tolist()


def _fresh_generator() -> _random.Generator:
    """PyTorch's choice when no generator is given: a new one seeded from the default one."""
    seed = int(_ops().empty((), dtype=_dtype.int64).random_().item())
    return _random.Generator().manual_seed(seed)


class Sampler(Generic[T_co]):
    """Matches `torch.utils.data.Sampler`: iterates indices (or lists of indices)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Matches `torch.utils.data.SequentialSampler`: 0, 1, ..., len-1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Matches `torch.utils.data.RandomSampler`: a permutation, or draws with replacement."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator=None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        ops = _ops()
        g = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            # Drawn in chunks of 32, as PyTorch does, so long streams start quickly.
            for _ in range(self.num_samples // 32):
                yield from ops.randint(high=n, size=(32,), dtype=_dtype.int64, generator=g).tolist()
            yield from ops.randint(
                high=n, size=(self.num_samples % 32,), dtype=_dtype.int64, generator=g
            ).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm_list(n, g)
            rest = self.num_samples % n
            if rest:
                yield from randperm_list(n, g)[:rest]
            else:
                # PyTorch draws a permutation here and keeps none of it: the generator
                # advances as that draw would advance it, without computing it.
                _random.key_for(g)

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """Matches `torch.utils.data.SubsetRandomSampler`: `indices` in random order."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm_list(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """Matches `torch.utils.data.WeightedRandomSampler`: indices drawn by weight."""

    def __init__(
        self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator=None
    ) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        w = _ops().as_tensor(weights, dtype=_dtype.float64)
        if w.ndim != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = _ops().multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Matches `torch.utils.data.BatchSampler`: groups another sampler's indices into lists."""

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class DistributedSampler(Sampler[int]):
    """Matches `torch.utils.data.distributed.DistributedSampler`: this rank's share of the data.

    `num_replicas` and `rank` default to the process group's (`jtorch.distributed`: a world
    of one process). Shuffling seeds a fresh generator with `seed + epoch` (see `set_epoch`).
    """

    def __init__(
        self,
        dataset,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            from .. import distributed as dist

            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = _random.Generator().manual_seed(self.seed + self.epoch)
            indices = randperm_list(n, g)
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[: self.total_size]
        else:  # pad by repeating from the start, as often as needed
            pad = self.total_size - len(indices)
            indices += (indices * math.ceil(pad / len(indices)))[:pad] if pad else []
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch, which changes the shuffle order (call before each epoch)."""
        self.epoch = epoch
