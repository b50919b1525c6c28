"""`torch.utils.data.datapipes.iter.combinatorics`: shuffling and sampling DataPipes."""

from __future__ import annotations

import random

from ..datapipe import IterDataPipe, functional_datapipe

__all__ = ["SamplerIterDataPipe", "ShufflerIterDataPipe"]


class SamplerIterDataPipe(IterDataPipe):
    """Yields the items a sampler (default: in order) picks from a sized DataPipe."""

    def __init__(self, datapipe, sampler=None, sampler_args=None, sampler_kwargs=None):
        from ..._sampler import SequentialSampler

        self.datapipe = datapipe
        sampler = SequentialSampler if sampler is None else sampler
        self.sampler = sampler(
            *(sampler_args or ()), data_source=datapipe, **(sampler_kwargs or {})
        )

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self) -> int:
        return len(self.sampler)


@functional_datapipe("shuffle")
class ShufflerIterDataPipe(IterDataPipe):
    """Matches PyTorch's `Shuffler`: a buffer of `buffer_size` items drawn from at random.

    Each iteration draws its seed from torch's generator (unless `set_seed` gave one), so
    `torch.manual_seed` makes the order reproducible; `set_shuffle(False)` passes items
    through in order.
    """

    def __init__(self, datapipe, *, buffer_size: int = 10000, unbatch_level: int = 0):
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        if unbatch_level != 0:
            raise NotImplementedError("ShufflerIterDataPipe(unbatch_level=...) is not supported")
        self.datapipe = datapipe
        self.buffer_size = buffer_size
        self._buffer: list = []
        self._enabled = True
        self._seed = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle: bool = True) -> ShufflerIterDataPipe:
        self._enabled = shuffle
        return self

    def set_seed(self, seed: int) -> ShufflerIterDataPipe:
        self._seed = seed
        return self

    def reset(self) -> None:
        import jtorch

        self._buffer = []
        if self._enabled:
            if self._seed is None:
                self._seed = int(jtorch.empty((), dtype=jtorch.int64).random_().item())
            self._rng.seed(self._seed)
            self._seed = None

    def __iter__(self):
        self.reset()
        if not self._enabled:
            yield from self.datapipe
            return
        for x in self.datapipe:
            if len(self._buffer) == self.buffer_size:
                idx = self._rng.randint(0, len(self._buffer) - 1)
                val, self._buffer[idx] = self._buffer[idx], x
                yield val
            else:
                self._buffer.append(x)
        while self._buffer:
            yield self._buffer.pop(self._rng.randint(0, len(self._buffer) - 1))

    def __len__(self) -> int:
        if hasattr(self.datapipe, "__len__"):
            return len(self.datapipe)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
