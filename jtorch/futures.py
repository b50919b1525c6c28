"""`torch.futures`: `Future`, `collect_all` and `wait_all`.

jtorch computes eagerly, so a future is completed by whoever makes it (a collective, an RPC
of one process); `then` and `add_done_callback` run their callbacks at completion, or at once
if the future is already complete, as PyTorch's do.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")


class Future(Generic[T]):
    """Matches `torch.futures.Future`."""

    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._value = None
        self._error = None
        self._callbacks: list = []
        self._lock = threading.Lock()

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self) -> T:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> T:
        if not self.done():
            raise RuntimeError("Future is not completed yet")
        return self.wait()

    def _complete(self, value, error) -> None:
        with self._lock:
            if self._done.is_set():
                raise RuntimeError(
                    "Attempting to mark a completed Future as complete again. "
                    "Note that a Future can only be marked completed once."
                )
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def set_result(self, result: T) -> None:
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def add_done_callback(self, callback) -> None:
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback) -> Future:
        out: Future = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except BaseException as e:  # noqa: BLE001 - carried by the chained future
                out.set_exception(e)

        self.add_done_callback(run)
        return out


def collect_all(futures: list) -> Future:
    """A future completed with the list of `futures` once all are complete."""
    out: Future = Future()
    pending = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])
        return out

    def one_done(_):
        with lock:
            pending[0] -= 1
            last = pending[0] == 0
        if last:
            out.set_result(list(futures))

    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures: list) -> list:
    """The values of `futures`, waiting for each (an error in one is raised)."""
    return [f.wait() for f in futures]
