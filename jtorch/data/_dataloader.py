"""`DataLoader`: batches from a dataset, in the main process or in worker processes.

Matches `torch.utils.data.DataLoader`: the same arguments, checks, samplers,
length rules, worker seeding and error messages. Differences, on purpose:

- JAX is not fork-safe: a forked child cannot run jax (`_worker`). With
  `multiprocessing_context=None` workers are forked as in PyTorch on Linux (they
  start in milliseconds, and scripts without an `if __name__ == "__main__":` guard
  work), and run the dataset's Python and numpy code. A dataset (or collate_fn,
  worker_init_fn) that runs jtorch ops reaches jax in its first batch; the loader
  then starts over with spawned workers, which run jax (this needs the main guard,
  as spawn re-runs the script). A start method asked for by name, or set with
  `multiprocessing.set_start_method`, is used as it is.
- Workers build default-collated batches with numpy; they become jtorch
  tensors in the main process (same values, dtypes and structure).
- `pin_memory` is accepted and does nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import multiprocessing
import multiprocessing.spawn
import os
import queue
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from .. import _dtype
from . import _worker
from ._collate import default_collate, default_convert
from ._dataset import Dataset, IterableDataset
from ._fetch import DatasetKind, prepare_for_fork
from ._sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

T_co = TypeVar("T_co", covariant=True)
get_worker_info = _worker.get_worker_info


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


def _cpu_count() -> int | None:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


class DataLoader(Generic[T_co]):
    """Matches `torch.utils.data.DataLoader`.

    Args:
        dataset: a map-style `Dataset` or an `IterableDataset`.
        batch_size: samples per batch; None turns automatic batching off.
        shuffle: reshuffle at every epoch (map-style only).
        sampler / batch_sampler: custom index orders (exclusive with the
            options they replace, as in PyTorch).
        num_workers: worker processes (0 loads in the main process).
        collate_fn: merges a list of samples into a batch.
        multiprocessing_context: a start method name or a context.
        generator: draws the shuffle order and the workers' base seed.
    """

    __initialized = False

    def __init__(
        self,
        dataset: Dataset[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to "
                "disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set "
                "prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle "
                    f"option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler "
                    f"option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified "
                    f"batch_sampler option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )

        if sampler is None:
            if self._dataset_kind == DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    # -- configuration ------------------------------------------------------------------

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process "
                    "loading (num_workers > 0), but got "
                    f"num_workers={self.num_workers}"
                )
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid "
                        f"start method in {methods!r}, but got "
                        f"multiprocessing_context={context!r}"
                    )
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context "
                    "object or a string specifying the start method, but got "
                    f"multiprocessing_context={context}"
                )
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _worker_context(self):
        """(context, whether a failure to run jax may restart the workers with spawn).

        See the module docstring about fork. A global start method other than fork counts
        as the user's choice; multiprocessing fixes the global one to the platform's
        default on first use, so 'fork' there cannot tell a choice from the default.
        """
        if self.multiprocessing_context is not None:
            return self.multiprocessing_context, False
        method = multiprocessing.get_start_method(allow_none=True)
        if method is None or method == "fork":
            method = multiprocessing.get_all_start_methods()[0]
        if method == "fork" and self.__dict__.get("_needs_jax"):
            method = "spawn"  # an earlier epoch found that the dataset runs jtorch ops
        return multiprocessing.get_context(method), method == "fork"

    # -- iteration ----------------------------------------------------------------------

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._dataset_kind == DatasetKind.Iterable:
            # An IterableDataset's len is a promise: remembered, and checked while iterating.
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = (
                    length // self.batch_size
                    if self.drop_last
                    else math.ceil(length / self.batch_size)
                )
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warns, as PyTorch does, when there are more workers than usable CPUs."""
        if not self.num_workers:
            return
        suggest = _cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is None:
            suggested = (
                "DataLoader is not able to compute a suggested max number of worker in "
                "current system."
            )
        else:
            cpuset = (
                "" if hasattr(os, "sched_getaffinity") else " (`cpuset` is not taken into account)"
            )
            suggested = (
                f"Our suggested max number of worker in current system is "
                f"{suggest}{cpuset}, which is smaller than what this DataLoader is "
                "going to create."
            )
        warnings.warn(
            f"This DataLoader will create {self.num_workers} worker processes in "
            f"total. {suggested} Please be aware that excessive worker creation might "
            "get DataLoader running slow or even freeze, lower the worker number to "
            "avoid potential slowness/freeze if necessary.",
            stacklevel=2,
        )


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used "
                f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                stacklevel=3,
            )
        if loader.pin_memory and not _accelerator_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then "
                "device pinned memory won't be used.",
                stacklevel=3,
            )
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        reported = self._IterableDataset_len_called
        if (
            self._dataset_kind == DatasetKind.Iterable
            and reported is not None
            and self._num_yielded > reported
        ):
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be {reported}"
                f"(when accessing len(dataloader)), but {self._num_yielded} samples have been "
                "fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                    "IterableDataset for examples."
                )
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _NeedsSpawn(Exception):
    """A forked worker's dataset reached jax before the first batch was handed out."""


def _rng_state(generator):
    import jtorch

    return generator.get_state() if generator is not None else jtorch.get_rng_state()


def _set_rng_state(generator, state) -> None:
    import jtorch

    if generator is not None:
        generator.set_state(state)
    else:
        jtorch.set_rng_state(state)


def _accelerator_available() -> bool:
    from .. import cuda

    return cuda.is_available()


def _draw_seed(generator) -> int:
    """The workers' base seed: one int64 draw, as PyTorch makes at every epoch."""
    import jtorch

    return int(jtorch.empty((), dtype=_dtype.int64).random_(generator=generator).item())


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._fetcher = DatasetKind.create_fetcher(
            self._dataset_kind,
            self._dataset,
            self._auto_collation,
            self._collate_fn,
            self._drop_last,
        )

    def _next_data(self):
        return self._fetcher.fetch(self._next_index())


@contextlib.contextmanager
def _child_environment(spawned: bool):
    """Spawned workers load data on the CPU: keep their jax off any accelerator."""
    if not spawned:
        yield
        return
    with _ENV_LOCK:
        saved = {k: os.environ.get(k) for k in _WORKER_ENV}
        os.environ.update(_WORKER_ENV)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


_ENV_LOCK = threading.Lock()
_WORKER_ENV = {"JAX_PLATFORMS": "cpu"}


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Workers fetch batches by index; results come back in sampler order (or as they come)."""

    def __init__(self, loader: DataLoader) -> None:
        # Where the loader's random stream stands, in case the epoch has to start over.
        self._rng_before = _rng_state(loader.generator)
        super().__init__(loader)
        self._loader = loader
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError(
                "prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter"
            )
        # A process that is itself still starting (a spawned worker re-running an unguarded
        # script) must not start workers: multiprocessing's error, whatever the method.
        multiprocessing.spawn._check_not_importing_main()
        ctx, self._may_respawn = loader._worker_context()
        forked = ctx.get_start_method() == "fork"
        self._spawned = ctx.get_start_method() == "spawn"
        if forked:
            prepare_for_fork(self._dataset)
        self._shutdown = False
        self._workers_status = [True] * self._num_workers
        self._workers_done_event = ctx.Event()
        self._worker_result_queue = ctx.Queue()
        self._index_queues = []
        self._workers = []
        started = False
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                w = ctx.Process(
                    target=_worker.worker_loop,
                    daemon=True,
                    args=(
                        self._dataset_kind,
                        self._dataset,
                        index_queue,
                        self._worker_result_queue,
                        self._workers_done_event,
                        self._auto_collation,
                        self._collate_fn,
                        self._drop_last,
                        self._base_seed,
                        loader.worker_init_fn,
                        i,
                        self._num_workers,
                        forked,
                    ),
                )
                with _child_environment(not forked), warnings.catch_warnings():
                    # jax warns at every fork; these workers are made for it (_worker)
                    warnings.filterwarnings(
                        "ignore", message="os.fork\\(\\) was called", category=RuntimeWarning
                    )
                    w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
            started = True
        finally:
            if not started:  # a worker failed to start (e.g. an unpicklable dataset)
                self._shutdown_workers()
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # next task to send to a worker
        self._rcvd_idx = 0  # next task to hand out from __next__
        self._task_info = {}  # task -> (worker,) while pending, (worker, data) once arrived
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: start their new epoch, drop stale results
            for q in self._index_queues:
                q.put(_worker.ResumeIteration())
            waiting = self._num_workers
            while waiting > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _worker.ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except queue.Empty:
            pass
        failed = [
            w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()
        ]
        if failed:
            for i, w in enumerate(self._workers):
                if w in failed:
                    self._mark_worker_as_unavailable(i)
            pids = ", ".join(str(w.pid) for w in failed)
            msg = f"DataLoader worker (pid(s) {pids}) exited unexpectedly"
            if self._spawned and self._loader.__dict__.get("_needs_jax"):
                msg += (
                    ". The dataset runs torch operations, which jtorch's workers can run "
                    "only when started with 'spawn'; a spawned worker imports the main "
                    "script again, so the script must start its work under `if __name__ "
                    "== '__main__':` (see the worker's error above)"
                )
            raise RuntimeError(msg)
        return False, None

    def _get_data(self):
        start = time.monotonic()
        while True:
            wait = _worker.STATUS_CHECK_INTERVAL
            if self._timeout > 0:
                left = self._timeout - (time.monotonic() - start)
                if left <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                wait = min(wait, left)
            ok, data = self._try_get_data(wait)
            if ok:
                return data

    def _next_data(self):
        while True:
            # Skip tasks whose worker is gone (an exhausted IterableDataset copy).
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == DatasetKind.Iterable and isinstance(
                data, _worker.IterableDatasetStopIteration
            ):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker with room, if any
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id] and (
                self._in_order
                or self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status)
            ):
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id: int):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            if data.needs_jax and self._may_respawn and self._num_yielded == 0:
                raise _NeedsSpawn
            data.reraise()
        return data

    def __next__(self):
        try:
            return super().__next__()
        except _NeedsSpawn:
            pass
        # The forked workers' dataset runs jtorch ops: start this epoch over with spawned
        # workers, from the same random state, as if they had been spawned from the start.
        loader = self._loader
        self._shutdown_workers()
        loader._needs_jax = True
        _set_rng_state(loader.generator, self._rng_before)
        self.__init__(loader)
        return super().__next__()

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        self._index_queues[worker_id].put(None)  # tells the worker to exit
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for i in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[i]:
                    self._mark_worker_as_unavailable(i)
            for w in self._workers:
                w.join(timeout=_worker.STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_worker.STATUS_CHECK_INTERVAL)

    def __del__(self) -> None:
        if getattr(self, "_workers", None) is not None and not getattr(self, "_shutdown", True):
            with contextlib.suppress(Exception):  # at interpreter exit modules may be gone
                self._shutdown_workers()
