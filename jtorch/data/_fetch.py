"""Fetchers: turning one index (or one list of indices) into one collated batch.

Matches `torch.utils.data._utils.fetch`, plus a fast path: a `TensorDataset`
(possibly under `Subset`s) collated by `default_collate` is gathered with one
indexing op per tensor, `t[indices]`, instead of indexing every sample and
stacking them. Both give the same batch.
"""

from __future__ import annotations

import jax
import numpy as np
from jax._src.array import ArrayImpl as _ArrayImpl

from .. import _device, _programs
from .._tensor import Tensor, wrap
from ._collate import HostTensor, default_collate, default_convert, host_collate, host_convert
from ._dataset import Subset, TensorDataset


class _TensorGather:
    """`default_collate([ds[i] for i in indices])` for a TensorDataset under Subsets."""

    def __init__(self, tensors, index_maps: list[np.ndarray], host: bool):
        self.tensors = tensors
        self.index_maps = index_maps  # outermost Subset first
        self.host = host
        self.n = tensors[0].shape[0]
        # Workers gather with numpy from the host copy of each tensor (no jax there).
        self.arrays = [np.asarray(t._array) for t in tensors] if host else None

    def __call__(self, indices):
        idx = np.asarray(indices)
        if idx.ndim != 1 or idx.dtype.kind not in "iu":
            return None  # not a plain list of integers: let the general path decide
        for m in self.index_maps:
            idx = m[idx]
        if idx.size and (idx.max() >= self.n or idx.min() < -self.n):
            bad = next(int(i) for i in idx if i >= self.n or i < -self.n)
            raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {self.n}")
        if self.host:
            return [HostTensor(a[idx]) for a in self.arrays]
        idx = idx.astype(np.int64, copy=False)
        where = {}  # the index tensor, on each tensor's device
        out = []
        for t in self.tensors:
            rows = _host_rows(t, idx)
            if rows is not None:
                out.append(rows)
                continue
            dev = t.device
            if dev not in where:
                where[dev] = wrap(jax.device_put(idx, _device.to_jax(dev)))
            out.append(t[where[dev]])
        return out


def _host_rows(t: Tensor, idx: np.ndarray):
    """`t[idx]` gathered by numpy from the host copy of a CPU tensor, or None elsewhere.

    XLA's CPU gather of whole rows is several times slower than numpy's, and compiles once
    per batch shape (a spike in the first epoch). On the CPU backend, jax keeps the host
    view of an array once read (no copy), and a fresh numpy batch becomes a jax array
    without a copy; nothing else holds that batch, so sharing its buffer is safe. A tensor
    that requires grad keeps `t[idx]`, whose result has a history.
    """
    if t._rg:
        return None
    arr = t._array
    if type(arr) is not _ArrayImpl or arr.is_deleted():
        return None
    devices = arr.devices()
    if len(devices) != 1 or next(iter(devices)).platform != "cpu":
        return None
    # (`_programs.to_device`: jax.device_put's Python path cost ~15 ms of a 235-batch epoch)
    return wrap(_programs.to_device(np.take(np.asarray(arr), idx, axis=0), next(iter(devices))))


def _tensor_source(dataset):
    """(tensors, Subset index maps) when `dataset` is a plain TensorDataset under Subsets."""
    maps = []
    while isinstance(dataset, Subset):
        cls = type(dataset)
        if cls.__getitem__ is not Subset.__getitem__ or cls.__getitems__ is not Subset.__getitems__:
            return None
        maps.append(np.asarray(dataset.indices, dtype=np.int64))
        dataset = dataset.dataset
    if not isinstance(dataset, TensorDataset):
        return None
    if type(dataset).__getitem__ is not TensorDataset.__getitem__ or hasattr(
        dataset, "__getitems__"
    ):
        return None
    if not all(isinstance(t, Tensor) and t.ndim >= 1 for t in dataset.tensors):
        return None
    return dataset.tensors, maps


def prepare_for_fork(dataset) -> None:
    """Computes, before forking, what forked workers would otherwise need jax for.

    A forked worker may read the host copy of any array it inherits (`Tensor.numpy()` in a
    dataset), which waits for the array's computation: the parent's threads that would
    finish it are not in the child, so every live array is finished first.
    """
    import jax

    source = _tensor_source(dataset)
    if source is not None:
        for t in source[0]:
            np.asarray(t._array)  # re-derives views and caches the host copy
    for a in jax.live_arrays():
        try:
            a.block_until_ready()
        except RuntimeError:  # deleted (donated) meanwhile
            pass


class MapDatasetFetcher:
    """Matches PyTorch's `_MapDatasetFetcher` (with the TensorDataset fast path)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last, host=False):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = _host_variant(collate_fn) if host else collate_fn
        self.drop_last = drop_last
        self.gather = None
        if auto_collation and collate_fn is default_collate:
            source = _tensor_source(dataset)
            if source is not None:
                self.gather = _TensorGather(*source, host=host)

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if self.gather is not None:
                batch = self.gather(possibly_batched_index)
                if batch is not None:
                    return batch
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems:
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[i] for i in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class IterableDatasetFetcher:
    """Matches PyTorch's `_IterableDatasetFetcher`."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last, host=False):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = _host_variant(collate_fn) if host else collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _host_variant(collate_fn):
    """In a worker, the default collate functions build numpy batches (see `_collate`)."""
    if collate_fn is default_collate:
        return host_collate
    if collate_fn is default_convert:
        return host_convert
    return collate_fn


class DatasetKind:
    """Matches `torch.utils.data._DatasetKind`."""

    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last, host=False):
        cls = MapDatasetFetcher if kind == DatasetKind.Map else IterableDatasetFetcher
        return cls(dataset, auto_collation, collate_fn, drop_last, host)
