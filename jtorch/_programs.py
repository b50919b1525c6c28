"""Compiled programs: bounded caches, and what compiling has cost so far (DESIGN 13).

Every cache of compiled programs in jtorch (op kernels, their VJPs, view replays
and write-backs, fused backwards, `jtorch.compile` programs) is a `ProgramCache`:
a least-recently-used map with a bound. Its entries are `jax.jit` wrappers made
for one key, shapes included, so that dropping an entry drops one program: jax
keeps a wrapper's executables in caches keyed weakly by the wrapped function,
and frees them (memory and memory maps) once the last reference goes. A live
autograd graph may still hold an evicted kernel; it is freed with the graph.

The bound of each cache is its share of `JTORCH_PROGRAM_CACHE_SIZE` (default
1024 programs). A small XLA CPU program holds about 0.4 MiB and 9 memory maps
(`vm.max_map_count` is 65530), so the bound is what keeps a long run alive.
jax also keeps each program's lowered module (about 1.2 MiB for a small one)
for as long as its wrapper lives; jtorch drops those every few compiles (a
wrapper's compiled program stays and is called as before), and hands memory
freed by evictions back to the system now and then (`malloc_trim`).

Counters of XLA's work come from jax's monitoring events; after a few seconds
of compiling, one line on stderr says where the time went, once per process
(`JTORCH_COMPILE_NOTE=0` keeps it quiet).
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import os
import sys
import threading

import jax
import numpy as np
from jax import monitoring

__all__ = [
    "ProgramCache",
    "ShapedJit",
    "Sightings",
    "CACHES",
    "COMPILE_AFTER",
    "COMPILE_BY",
    "HOST_RENT_S",
    "Rent",
    "stats",
    "clear",
    "tracing",
    "to_device",
    "ahead",
]

try:
    _BASE_SIZE = max(int(os.environ.get("JTORCH_PROGRAM_CACHE_SIZE", "1024")), 1)
except ValueError:
    _BASE_SIZE = 1024

CACHES: dict[str, "ProgramCache"] = {}

# What is met the first few times (a size, a view's shape) is made on the host, exactly, and
# gets a compiled program once it has come back this often.
COMPILE_AFTER = 16
# A kernel or view copy run on the host (`Rent`) gets its program no sooner than its
# COMPILE_AFTER-th call, and then once its host runs have cost about what a compile would
# (rent, then buy: never more than about twice the cheaper choice), or at its COMPILE_BY-th
# call. Measured on a CPU: a small kernel's compile, traced and lowered, costs 25-50 ms; a
# host call 0.1-0.6 ms more than a compiled one (a float add of 16K elements 0.3 ms, a copy
# of a strided view 0.1 ms, a stack of 27 scalars 0.5 ms), a big copy milliseconds.
COMPILE_BY = 256
HOST_RENT_S = 0.03


class ProgramCache:
    """A bounded LRU of compiled programs (see the module docstring).

    Args:
      name: the name `jtorch.compiler.stats()` reports it under.
      share: its bound as a fraction of `JTORCH_PROGRAM_CACHE_SIZE`; big programs (a
        whole backward, a compiled step) get a small share.
      register: list it in `CACHES` (per-function caches of `jtorch.compile` are not).
    """

    __slots__ = ("name", "maxsize", "_entries", "hits", "misses", "evictions", "__weakref__")

    def __init__(self, name: str, share: float = 1.0, register: bool = True):
        self.name = name
        self.maxsize = max(int(_BASE_SIZE * share), 1)
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self.hits = self.misses = self.evictions = 0
        if register:
            CACHES[name] = self

    def get(self, key):
        """The entry for `key` (now the most recently used), or None."""
        value = self._entries.get(key)
        if value is not None:
            try:
                self._entries.move_to_end(key)
            except KeyError:  # evicted meanwhile by another thread
                pass
            self.hits += 1
        return value

    def put(self, key, value):
        """Adds an entry, evicting the least recently used ones past the bound."""
        entries = self._entries
        entries[key] = value
        self.misses += 1
        while len(entries) > self.maxsize:
            try:
                entries.popitem(last=False)
            except KeyError:  # emptied meanwhile by another thread
                break
            self.evictions += 1
            _upkeep["evicted"] += 1
        if _counts.backend >= _upkeep["next_release"] and not _held[0]:
            _release()
        return value

    def pop(self, key, default=None):
        return self._entries.pop(key, default)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self):
        return iter(list(self._entries))

    def __contains__(self, key) -> bool:
        return key in self._entries

    def __repr__(self) -> str:
        return f"ProgramCache({self.name!r}, {len(self)}/{self.maxsize})"


class Sightings:
    """How often keys have come back (bounded): programs are built for what returns."""

    __slots__ = ("_counts", "limit")

    def __init__(self, limit: int = 4096):
        self._counts: collections.OrderedDict = collections.OrderedDict()
        self.limit = limit

    def note(self, key) -> int:
        """Records a sighting of `key`; returns how many there have been (this one counted)."""
        counts = self._counts
        n = counts.pop(key, 0) + 1
        counts[key] = n
        if len(counts) > self.limit:
            counts.popitem(last=False)
        return n

    def forget(self, key) -> None:
        self._counts.pop(key, None)

    def __contains__(self, key) -> bool:
        return key in self._counts


class Rent(Sightings):
    """Sightings that also add up what running each key on the host has cost: whether a key
    is due for its compiled program (see `HOST_RENT_S`)."""

    __slots__ = ("_spent",)

    def __init__(self, limit: int = 4096):
        super().__init__(limit)
        self._spent: dict = {}

    def due(self, key) -> bool:
        """Records a call of `key`; whether it should compile rather than run on the host."""
        calls = self.note(key)
        return calls >= COMPILE_BY or (
            calls >= COMPILE_AFTER and self._spent.get(key, 0.0) >= HOST_RENT_S
        )

    def pay(self, key, seconds: float) -> None:
        """Adds the seconds a host run of `key` took."""
        if key in self._counts:
            spent = self._spent
            spent[key] = spent.get(key, 0.0) + seconds
            if len(spent) > 2 * self.limit:  # (drops what the sightings forgot)
                self._spent = {k: v for k, v in spent.items() if k in self._counts}

    def forget(self, key) -> None:
        super().forget(key)
        self._spent.pop(key, None)

    def clear(self) -> None:
        self._counts.clear()
        self._spent.clear()


class ShapedJit:
    """`jax.jit(fn)` for arrays of any shape, one wrapper per (shapes, dtypes) in `cache`.

    For module-level helpers (`a + b` accumulating a gradient) that meet every shape:
    one `jax.jit(fn)` would keep a program per shape forever.
    """

    __slots__ = ("fn", "cache")

    def __init__(self, fn, cache: ProgramCache):
        self.fn = fn
        self.cache = cache

    def __call__(self, *arrays):
        key = (self.fn, tuple((a.shape, a.dtype) for a in arrays))
        jitted = self.cache.get(key)
        if jitted is None:
            fn = self.fn
            # A new function per wrapper: jax's caches are keyed by it (weakly).
            jitted = self.cache.put(key, jax.jit(lambda *a: fn(*a)))
        return jitted(*arrays)


try:  # jax.device_put's own path costs ~5x more for a small array
    from jax._src import core as _core
    from jax._src.interpreters.pxla import batched_device_put as _batched_device_put
except ImportError:
    _batched_device_put = None


def default_device():
    """jax's default device (where `jax.device_put(x)` places `x`)."""
    device = jax.config.jax_default_device
    if device is None or isinstance(device, str):
        device = jax.local_devices(backend=device)[0]
    return device


def to_device(value: np.ndarray, device, committed: bool = True) -> jax.Array:
    """A numpy array placed on one device (what `jax.device_put(value, device)` does); an
    uncommitted one (`committed=False`, as `jax.device_put(value)` makes) may meet arrays
    laid out over other devices, which jax then moves it to."""
    if _batched_device_put is not None:
        try:
            return _batched_device_put(
                _core.ShapedArray(value.shape, value.dtype),
                jax.sharding.SingleDeviceSharding(device),
                [value],
                [device],
                committed,
            )
        except Exception:  # noqa: BLE001 (a jax whose private signature changed)
            pass
    return jax.device_put(value, device) if committed else jax.device_put(value)


try:
    from jax._src.core import trace_state_clean as _trace_state_clean
except ImportError:  # a jax without it: take every call as eager

    def _trace_state_clean() -> bool:
        return True


def tracing() -> bool:
    """True while jax traces (`jax.jit`, `jtorch.compile`, `torch.func` transforms): what is
    built then is part of the traced program, not a program of its own."""
    return not _trace_state_clean()


# Every `_RELEASE_EVERY` programs, jax's lowered modules are dropped; after
# `_TRIM_EVERY` evictions, freed memory goes back to the system.
_RELEASE_EVERY = 32
_TRIM_EVERY = 256
_upkeep = {"next_release": _RELEASE_EVERY, "evicted": 0}


def _lowering_caches() -> list:
    caches = []
    try:
        from jax._src import pjit

        caches.append(pjit._pjit_lower)
    except (ImportError, AttributeError):
        pass
    try:
        from jax._src.interpreters import pxla

        caches.append(pxla._cached_lowering_to_hlo)
    except (ImportError, AttributeError):
        pass
    return caches


_LOWERINGS = _lowering_caches()


# While > 0, jax's lowered modules stay (see `ahead`).
_held = [0]
_ahead_pool = None


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def ahead(jobs: list):
    """Compiles programs side by side before they are called, and keeps what calls them cheap.

    `jobs` are zero-argument callables, each lowering and compiling one program
    (`jitted.lower(...).compile()`): XLA's compile releases the GIL, so with several CPUs a
    batch known in advance (a first backward's VJPs, an optimizer's groups) compiles in the
    time of its longest programs. A `jax.jit` wrapper then called with the arguments it was
    lowered for finds its executable by its lowered module, so jax's cached lowered modules
    stay until the block ends. A job that fails is left to the call, which raises as it
    would have. With one CPU, or one job, nothing is compiled ahead.
    """
    _held[0] += 1
    try:
        n = cpus() if len(jobs) > 1 else 1  # (a later call of a graph or step has none)
        if n > 1:
            pool = _pool()
            for f in [pool.submit(job) for job in jobs]:
                try:
                    f.result()
                except Exception:  # noqa: BLE001 (the call raises it, where it belongs)
                    pass
        yield
    finally:
        _held[0] -= 1


def background(job):
    """Starts `job` on `ahead`'s threads without waiting for it: its future, or None with one
    CPU (where it would only slow the caller down)."""
    return _pool().submit(job) if cpus() > 1 else None


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _ahead_pool
    if _ahead_pool is None:
        _ahead_pool = concurrent.futures.ThreadPoolExecutor(cpus(), "jtorch-ahead")
    return _ahead_pool


def _release() -> None:
    """Drops jax's cached lowered modules (see the module docstring), and trims the heap."""
    _upkeep["next_release"] = _counts.backend + _RELEASE_EVERY
    for cache in _LOWERINGS:
        cache.cache_clear()
    if _upkeep["evicted"] >= _TRIM_EVERY:
        _upkeep["evicted"] = 0
        _malloc_trim()


def _malloc_trim() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def clear() -> None:
    """Empties every registered program cache."""
    for cache in CACHES.values():
        cache.clear()


# ---------------------------------------------------------------------------
# What XLA has done: counted from jax's monitoring events.

_BACKEND = "/jax/core/compile/backend_compile_duration"
_TRACE = "/jax/core/compile/jaxpr_trace_duration"
_LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"
_DISK_HIT = "/jax/compilation_cache/cache_hits"
_DISK_READ = "/jax/compilation_cache/cache_retrieval_time_sec"


class _Counters:
    def __init__(self):
        self.backend = 0  # executables obtained: compiled, or read from disk
        self.backend_s = 0.0
        self.trace_s = 0.0
        self.lower_s = 0.0
        self.disk_hits = 0
        self.disk_read_s = 0.0
        self.stored = 0  # kernels' executables loaded by jtorch's own key (`_stored`)


_counts = _Counters()
_lock = threading.Lock()
_note = {
    "after_s": 5.0,
    "shown": False,
    "enabled": os.environ.get("JTORCH_COMPILE_NOTE", "1") not in ("0", ""),
}


def _on_duration(event: str, duration: float, **kwargs) -> None:
    c = _counts
    if event == _BACKEND:
        with _lock:
            c.backend += 1
            c.backend_s += duration
        _maybe_note()
    elif event == _TRACE:
        c.trace_s += duration
    elif event == _LOWER:
        c.lower_s += duration
    elif event == _DISK_READ:
        c.disk_read_s += duration


def _on_event(event: str, **kwargs) -> None:
    if event == _DISK_HIT:
        with _lock:
            _counts.disk_hits += 1


monitoring.register_event_duration_secs_listener(_on_duration)
monitoring.register_event_listener(_on_event)


def disk_hits() -> int:
    """Programs jax has read from its persistent cache so far (by its key)."""
    return _counts.disk_hits


def note_stored() -> None:
    """Counts an executable loaded by jtorch's own key (`_stored`): a program made, read
    from disk, with no tracing, lowering or compiling."""
    with _lock:
        _counts.stored += 1


def compile_seconds() -> float:
    """Seconds spent making executables (tracing, lowering and XLA), disk reads excluded."""
    c = _counts
    return c.trace_s + c.lower_s + c.backend_s - c.disk_read_s


def _maybe_note() -> None:
    if _note["shown"] or not _note["enabled"]:
        return
    spent = compile_seconds()
    if spent < _note["after_s"]:
        return
    _note["shown"] = True
    from . import _disk_cache

    where = _disk_cache.directory()
    keep = (
        f"compiled programs are kept in {where} for the next run"
        if where
        else "the persistent compilation cache is off"
    )
    try:
        sys.stderr.write(
            f"jtorch: {spent:.0f} s so far compiling XLA programs (each new "
            f"shape compiles once; {keep}). JTORCH_COMPILE_NOTE=0 hides "
            "this note.\n"
        )
    except (OSError, ValueError):  # a closed stderr
        pass


def stats() -> dict:
    """What compiling has cost this process, and what the program caches hold.

    `compiles`: XLA programs compiled; `compile_seconds`: time spent tracing, lowering and
    compiling them; `disk_hits`: programs read from the persistent cache instead (they are
    traced and lowered all the same, to find them); `disk_seconds`: time reading them;
    `stored_hits`: op kernels loaded by jtorch's own key, not traced at all (`_stored`);
    `caches`: per cache of programs, its `size`, `limit`, `hits`, `misses` (programs made)
    and `evictions`.
    """
    c = _counts
    return {
        "compiles": c.backend - c.disk_hits,
        "compile_seconds": round(compile_seconds(), 6),
        "disk_hits": c.disk_hits,
        "disk_seconds": round(c.disk_read_s, 6),
        "stored_hits": c.stored,
        "caches": {
            name: {
                "size": len(cache),
                "limit": cache.maxsize,
                "hits": cache.hits,
                "misses": cache.misses,
                "evictions": cache.evictions,
            }
            for name, cache in CACHES.items()
        },
    }


def compiles() -> int:
    """XLA programs compiled so far in this process (read from disk ones not counted)."""
    return _counts.backend - _counts.disk_hits


def programs_made() -> int:
    """XLA programs made so far in this process: compiled, or read from the disk cache
    (by jax's key or jtorch's)."""
    return _counts.backend + _counts.stored
