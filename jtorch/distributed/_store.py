"""c10d key-value stores: `Store`, `HashStore`, `FileStore`, `PrefixStore`.

A store is how processes of a job meet (rendezvous) and swap small values. `HashStore` lives in
one process; `FileStore` keeps its keys in a file that every process of the job opens, with an
advisory lock around each read-modify-write, so processes on one host can share it. Values are
bytes; `get` and `wait` block until their keys appear or the timeout passes, as PyTorch's do.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import os
import pickle
import threading
import time

__all__ = ["FileStore", "HashStore", "PrefixStore", "Store"]

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=5)


def _bytes(value) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)):  # PyTorch accepts a list of byte values
        return bytes(value)
    raise TypeError(
        f"set(): incompatible function arguments: value must be str or bytes, "
        f"got {type(value).__name__}"
    )


class Store:
    """Matches `torch.distributed.Store`: the key-value interface every store implements.

    Subclasses give `_update(fn)`, which runs `fn` on the key dict atomically and returns
    its result.
    """

    def __init__(self, timeout: datetime.timedelta = _DEFAULT_TIMEOUT):
        self._timeout = timeout

    def _update(self, fn):
        raise NotImplementedError

    @property
    def timeout(self) -> datetime.timedelta:
        return self._timeout

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        self._timeout = timeout

    def set(self, key: str, value) -> None:
        value = _bytes(value)
        self._update(lambda d: d.__setitem__(key, value))

    def multi_set(self, keys: list, values: list) -> None:
        for k, v in zip(keys, values):
            self.set(k, v)

    def get(self, key: str) -> bytes:
        self.wait([key])
        return self._update(lambda d: d[key])

    def multi_get(self, keys: list) -> list:
        return [self.get(k) for k in keys]

    def add(self, key: str, amount: int) -> int:
        def step(d):
            value = int(d.get(key, b"0")) + int(amount)
            d[key] = str(value).encode()
            return value

        return self._update(step)

    def append(self, key: str, value) -> None:
        value = _bytes(value)
        self._update(lambda d: d.__setitem__(key, d.get(key, b"") + value))

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        expected, desired = _bytes(expected_value), _bytes(desired_value)

        def step(d):
            current = d.get(key)
            if (current is None and expected == b"") or current == expected:
                d[key] = desired
                return desired
            return expected if current is None else current

        return self._update(step)

    def check(self, keys: list) -> bool:
        return self._update(lambda d: all(k in d for k in keys))

    def delete_key(self, key: str) -> bool:
        return self._update(lambda d: d.pop(key, None) is not None)

    def num_keys(self) -> int:
        return self._update(len)

    def wait(self, keys: list, timeout: datetime.timedelta | None = None) -> None:
        limit = (timeout or self._timeout).total_seconds()
        deadline = time.monotonic() + limit
        while not self.check(keys):
            if time.monotonic() >= deadline:
                missing = [k for k in keys if not self.check([k])]
                raise RuntimeError(
                    f"Timeout waiting for key: {', '.join(missing)} after {int(limit * 1000)} ms"
                )
            time.sleep(0.01)


class HashStore(Store):
    """Matches `torch.distributed.HashStore`: a store in this process's memory."""

    def __init__(self):
        super().__init__()
        self._data: dict = {}
        self._lock = threading.Lock()

    def _update(self, fn):
        with self._lock:
            return fn(self._data)


class FileStore(Store):
    """Matches `torch.distributed.FileStore`: a store kept in `file_name` (see the module doc)."""

    def __init__(self, file_name: str, world_size: int = -1):
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        open(file_name, "ab").close()

    @contextlib.contextmanager
    def _locked(self):
        with open(self.path, "r+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield f
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _update(self, fn):
        with self._locked() as f:
            raw = f.read()
            data = pickle.loads(raw) if raw else {}
            before = dict(data)
            result = fn(data)
            if data != before:
                f.seek(0)
                f.truncate()
                f.write(pickle.dumps(data))
                f.flush()
                os.fsync(f.fileno())
            return result

    def delete_key(self, key: str) -> bool:
        """Deletes `key`; like PyTorch's FileStore, answers True whether or not it existed."""
        super().delete_key(key)
        return True


class PrefixStore(Store):
    """Matches `torch.distributed.PrefixStore`: `prefix/key` in an underlying store."""

    def __init__(self, prefix: str, store: Store):
        super().__init__(store.timeout)
        self._prefix = prefix
        self.underlying_store = store

    def _key(self, key: str) -> str:
        return f"{self._prefix}/{key}"

    def _update(self, fn):
        prefix = self._prefix + "/"

        def view(d):
            mine = {k[len(prefix) :]: v for k, v in d.items() if k.startswith(prefix)}
            result = fn(mine)
            for k in [k for k in d if k.startswith(prefix) and k[len(prefix) :] not in mine]:
                del d[k]
            d.update({prefix + k: v for k, v in mine.items()})
            return result

        return self.underlying_store._update(view)
