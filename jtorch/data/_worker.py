"""The worker process side of a multi-process `DataLoader`.

Matches `torch.utils.data._utils.worker`: `get_worker_info()`, per-worker
seeding, the fetch loop, and exceptions carried back as text.

JAX is not fork-safe: a jax call in a child forked from a process whose jax
runtime is running never returns. Workers therefore collate the default way
with numpy only (`_collate.host_collate`), and in a forked worker (the default,
see `_dataloader`) jax is switched off so that user code calling it fails with an
error instead of hanging; the loader then starts over with spawned workers,
which run jax normally.
"""

from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

import numpy as np

STATUS_CHECK_INTERVAL = 0.5  # seconds between liveness checks, on both sides

FORK_JAX_ERROR = (
    "JAX cannot run in a DataLoader worker started with 'fork' (JAX is multithreaded and not "
    "fork-safe). Keep jtorch ops out of the dataset and collate_fn (numpy is fine), or pass "
    "multiprocessing_context='spawn'."
)


@dataclass(frozen=True)
class WorkerInfo:
    """Matches `torch.utils.data.get_worker_info()`'s result: this worker's id and setup."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """Matches `torch.utils.data.get_worker_info`: None in the main process."""
    return _worker_info


class KeyErrorMessage(str):
    """A KeyError's message that prints as written (KeyError reprs its argument)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker: its type and formatted traceback, picklable."""

    def __init__(self, exc_info=None, where: str = "in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        # a forked worker reached jax: the loader may start over with spawned workers
        self.needs_jax = FORK_JAX_ERROR in self.exc_msg

    def reraise(self):
        """Raises the exception again, here, with the worker's traceback in the message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # the type needs other arguments
            raise RuntimeError(msg) from None
        raise exception


@dataclass(frozen=True)
class IterableDatasetStopIteration:
    """A worker's note that its copy of an IterableDataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class ResumeIteration:
    """The main process's request (persistent workers) to start a new epoch."""

    seed: int | None = None


class _Pickled:
    """A result pickled in the worker's own thread; it unpickles as the result itself.

    The queue would otherwise pickle in a background thread, where a failure
    is only printed and the main process waits for that batch forever.
    """

    __slots__ = ("payload",)

    def __init__(self, payload: bytes):
        self.payload = payload

    def __reduce__(self):
        return (pickle.loads, (self.payload,))


def _sendable(data, worker_id: int):
    where = f"in DataLoader worker process {worker_id}"
    try:
        return _Pickled(bytes(ForkingPickler.dumps(data)))
    except Exception:
        wrapped = ExceptionWrapper(where=where)
    try:
        pickle.dumps(wrapped.exc_type)
    except Exception:  # an exception class defined inside a function: send its text only
        wrapped.exc_type = RuntimeError
    return wrapped


_left_alive: list = []  # (in a forked worker: see `_switch_off_jax_after_fork`)


def _switch_off_jax_after_fork() -> None:
    """Makes jax calls in this forked child raise instead of waiting forever on dead threads."""
    try:
        import jax
        from jax._src import compiler, xla_bridge
    except ImportError:
        return

    def refuse(*args, **kwargs):
        raise RuntimeError(FORK_JAX_ERROR)

    # The parent's executables stay alive here: freeing one calls into its runtime, and a
    # CUDA context does not survive a fork (freeing a GPU program aborts the worker). The
    # child exits without running destructors.
    for backend in list((getattr(xla_bridge, "_backends", None) or {}).values()):
        try:
            _left_alive.extend(backend.live_executables())
        except Exception:  # noqa: BLE001 (a client without the list: nothing more to keep)
            pass
    jax.clear_caches()  # drop compiled fast paths that would reach the parent's runtime
    # Every way in: a backend looked up by name (device_put, new arrays), and compiling,
    # which a jitted call on arrays the parent made reaches through their own client.
    for module, names in (
        (xla_bridge, ("backends", "get_backend", "_get_backend_uncached")),
        (compiler, ("compile_or_get_cached", "backend_compile_and_load")),
    ):
        for name in names:
            if hasattr(module, name):
                setattr(module, name, refuse)


def _seed_everything(seed: int, base_seed: int, worker_id: int) -> None:
    from .. import _random

    random.seed(seed)
    _random.manual_seed(seed)
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]
    np.random.seed(np.random.SeedSequence(entropy).generate_state(4))


def worker_loop(
    dataset_kind,
    dataset,
    index_queue,
    data_queue,
    done_event,
    auto_collation,
    collate_fn,
    drop_last,
    base_seed,
    init_fn,
    worker_id,
    num_workers,
    forked,
) -> None:
    """Runs in each worker: fetches the batches whose indices arrive on `index_queue`."""
    global _worker_info
    from ._fetch import DatasetKind

    try:
        if forked:
            _switch_off_jax_after_fork()
        seed = base_seed + worker_id
        _seed_everything(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = DatasetKind.create_fetcher(
                dataset_kind, dataset, auto_collation, collate_fn, drop_last, host=True
            )
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:  # stop if the main process is gone
            try:
                r = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = DatasetKind.create_fetcher(
                    dataset_kind, dataset, auto_collation, collate_fn, drop_last, host=True
                )
                continue
            if r is None:  # the main process is shutting this worker down
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == DatasetKind.Iterable:
                        data = IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, _sendable(data, worker_id)))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
