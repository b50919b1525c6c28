"""The persistent compilation cache: compiled programs kept on disk between runs (DESIGN 13).

On by default, in a per-user directory: `$JTORCH_CACHE_DIR` when set (empty or
`0` turns the cache off), else `$XDG_CACHE_HOME/jtorch/xla`, else
`~/.cache/jtorch/xla`. Where jax's own cache was configured before jtorch was
imported (`JAX_COMPILATION_CACHE_DIR`, or `jax.config.update(
"jax_compilation_cache_dir", ...)`), jtorch leaves it as configured.

jax's file store writes an entry in place, so a process sharing the directory
can read half an entry; with a size bound set, it takes a lock and lists the
whole directory on every write. jtorch puts its own store behind jax's cache
interface instead: an entry is written to a temporary file and renamed into
place (atomic on POSIX), so concurrent processes read a whole entry or none,
and the directory is trimmed to `JTORCH_CACHE_SIZE_MB` (default 2048), least
recently read first, now and then and by one process at a time.
Programs of every compile time are kept (jax's default keeps only those that
took a second): eager kernels are small and many, and together they are what
a script's first run spends its time on.
"""

from __future__ import annotations

import os
import threading

import jax

__all__ = ["directory", "install", "store"]

_SUFFIX = "-cache"
_state = {"dir": None, "store": None}


def _default_dir() -> str | None:
    env = os.environ.get("JTORCH_CACHE_DIR")
    if env is not None:
        return None if env.strip() in ("", "0") else os.path.expanduser(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jtorch", "xla")


def directory() -> str | None:
    """Where compiled programs persist, or None when the persistent cache is off."""
    return _state["dir"]


def store():
    """jtorch's own store of the persistent cache, or None (off, or jax's own configured)."""
    return _state["store"]


def _max_bytes() -> int:
    try:
        return int(float(os.environ.get("JTORCH_CACHE_SIZE_MB", "2048")) * 2**20)
    except ValueError:
        return 2048 * 2**20


try:
    from jax._src.compilation_cache_interface import CacheInterface as _Interface
except ImportError:  # a jax without the interface: jax's own store is used
    _Interface = object


class AtomicStore(_Interface):
    """A directory of cache entries, each written whole by a rename (see the module)."""

    def __init__(self, path: str, max_bytes: int):
        import pathlib

        self._path = pathlib.Path(path)
        self.dir = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._written = 0
        self._trimmed = False

    def _file(self, key: str) -> str:
        return os.path.join(self.dir, key + _SUFFIX)

    def get(self, key: str):
        path = self._file(key)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        try:
            os.utime(path)  # recently read: trimmed last
        except OSError:
            pass
        return data

    def forget(self, key: str) -> None:
        """Deletes an entry (one found unusable)."""
        try:
            os.unlink(self._file(key))
        except OSError:
            pass

    def put(self, key: str, value: bytes) -> None:
        path = self._file(key)
        if os.path.exists(path):
            return
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(value)
            os.replace(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return
        with self._lock:
            self._written += len(value)
            due = not self._trimmed or self._written > self.max_bytes // 10
            if due:
                self._trimmed = True
                self._written = 0
        if due:
            self.trim()

    def trim(self) -> None:
        """Deletes the least recently read entries past the size bound (one process at a
        time: a process that finds another trimming skips)."""
        try:
            import fcntl
        except ImportError:  # not POSIX: no trimming
            return
        try:
            lock = open(os.path.join(self.dir, ".trim-lock"), "w")
        except OSError:
            return
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return
            entries, total = [], 0
            try:
                with os.scandir(self.dir) as it:
                    for e in it:
                        if e.name.endswith(_SUFFIX):
                            st = e.stat()
                            entries.append((st.st_mtime, st.st_size, e.path))
                            total += st.st_size
            except OSError:
                return
            if total <= self.max_bytes:
                return
            entries.sort()
            target = self.max_bytes * 8 // 10
            for _, size, path in entries:
                if total <= target:
                    break
                try:
                    os.unlink(path)
                    total -= size
                except OSError:
                    pass


def _jax_configured() -> str | None:
    """A cache directory the user gave jax before importing jtorch, if any."""
    return jax.config.jax_compilation_cache_dir or None


def install() -> None:
    """Turns the persistent cache on (see the module docstring); called on import."""
    configured = _jax_configured()
    if configured:
        _state["dir"] = configured
        return
    path = _default_dir()
    if path is None:
        return
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return  # an unwritable home: no persistent cache
    if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in os.environ:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_compilation_cache_dir", path)
    _state["dir"] = path
    if _Interface is object:
        return
    try:
        from jax._src import compilation_cache as cc

        with cc._cache_initialized_mutex:
            if not cc._cache_initialized:
                cc._cache = AtomicStore(path, _max_bytes())
                cc._cache_initialized = True
                _state["store"] = cc._cache
    except (ImportError, AttributeError):
        pass  # jax's own store, from the directory set above
