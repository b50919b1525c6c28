"""Op kernels' executables kept on disk by jtorch's own key, so a second run skips their
tracing and lowering (DESIGN 13).

jax's persistent cache (`_disk_cache`) keys an executable by its lowered module: a run that
finds every program there still traces and lowers each one to compute the key (~15 ms for
a small kernel, most of what a short script's second run spends beside the import). A
kernel is already named by jtorch's own key (op, static arguments, promoted dtypes, input
avals), so its executable is also written under that key, and a later process loads it
(~1 ms) without tracing anything. So are the kernels' backwards (named by the kernel's key
and the forward arguments), view replays, foreach programs, optimizer steps and the
generator's key program.

The key holds everything else that shapes the program: the source of every jtorch module
(a changed file changes every key), jax's and jaxlib's versions, `XLA_FLAGS` and the
`JTORCH_*` settings, jax's configuration, the device. Only jtorch's own ops are kept (a
user's `torch.library` op may change between runs), only keys whose parts print the same in
every process (numbers, strings, dtypes, tuples of them), only in a process with one device,
only executables with no custom calls (a custom-call target, LAPACK's, is registered by
lowering, which a load skips) and only ones that still hold their code (`_write`: one jax
read from its own cache loses it when serialized again, so such a one is kept with the bytes
of jax's entry). A kernel whose executable does not take a call's arguments (another aval, a
trace) runs through its `jax.jit` wrapper."""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import io
import os
import pickle
import threading

import jax

from . import _disk_cache, _programs

try:
    from jax._src.core import trace_state_clean as _trace_state_clean
except ImportError:  # a jax without it: as `_programs.tracing`

    def _trace_state_clean() -> bool:
        return not _programs.tracing()


try:
    from jax._src.config import trace_context as _trace_context
except ImportError:  # a jax without it: `_config` builds its text each time

    def _trace_context():
        raise TypeError


__all__ = ["StoredKernel", "enabled"]

_PREFIX = "jtorch-kernel-"
# Settings that do not change a program (where programs are kept, logging, debugging aids).
_IGNORED_CONFIG = frozenset(
    {
        "jax_compilation_cache_dir",
        "jax_persistent_cache_min_compile_time_secs",
        "jax_persistent_cache_min_entry_size_bytes",
        "jax_enable_compilation_cache",
        "jax_compilation_cache_max_size",
        "jax_raise_persistent_cache_errors",
        "jax_log_compiles",
        "jax_explain_cache_misses",
        "jax_traceback_filtering",
        "jax_default_device",
        "jax_logging_level",
        "jax_debug_log_modules",
        "jax_pprint_use_color",
    }
)
_IGNORED_ENV = frozenset({"JTORCH_CACHE_DIR", "JTORCH_CACHE_SIZE_MB", "JTORCH_COMPILE_NOTE"})
_PLAIN = (bool, int, float, str, type(None))
_state = {"off": os.environ.get("JTORCH_STORED_KERNELS", "1") in ("0", "")}


def enabled() -> bool:
    """Whether kernels' executables are kept: jtorch's own disk store is on, one device."""
    if _state["off"] or _disk_cache.store() is None or jax.process_count() > 1:
        return False
    from . import _device

    return not _device.multi_device()


@functools.lru_cache(maxsize=1)
def _fingerprint() -> bytes:
    """What every key shares: jtorch's source, jax's versions, the environment's settings."""
    h = hashlib.sha256()
    root = os.path.dirname(os.path.abspath(__file__))
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                h.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as f:
                    h.update(f.read())
    import jaxlib

    h.update(f"jax {jax.__version__} jaxlib {jaxlib.__version__}".encode())
    env = sorted(
        (k, v)
        for k, v in os.environ.items()
        if (k.startswith("JTORCH_") and k not in _IGNORED_ENV) or k in ("XLA_FLAGS",)
    )
    h.update(repr(env).encode())
    return h.digest()


# jax's trace context (what its own caches of traced programs are keyed by) -> `_config()`
_configs: dict = {}


def _config() -> str:
    """jax's settings as text (~0.1 ms to build: kept per trace context, ~6 us)."""
    try:
        context = _trace_context()
        text = _configs.get(context)
    except TypeError:  # (an unhashable setting)
        context = text = None
    if text is None:
        values = jax.config.values
        text = repr(
            sorted(
                (k, v) for k, v in values.items() if k not in _IGNORED_CONFIG and type(v) in _PLAIN
            )
        )
        if context is not None and len(_configs) < 64:
            _configs[context] = text
    return text


def _steady(text: str) -> bool:
    """Whether a key's text reads the same in every process (no object addresses)."""
    return " at 0x" not in text and "object at" not in text


def _signature(args) -> tuple | None:
    """The call's arguments as text (avals, Python number types, None, nested tuples), and
    their one device; None where an argument is anything else, or devices differ."""
    parts, device = [], None
    for a in args:
        if isinstance(a, jax.Array):
            if isinstance(a, jax.core.Tracer):
                return None
            devs, text = a.devices(), str(a.aval)
        elif type(a) in (bool, int, float, complex):
            parts.append(type(a).__name__)
            continue
        elif a is None:
            parts.append("None")
            continue
        elif type(a) in (tuple, list, dict):
            if type(a) is dict:  # (jax takes a dict's values in the order of its keys)
                keys = sorted(a) if all(type(k) is str for k in a) else None
                inner = _signature([a[k] for k in keys]) if keys is not None else None
                if inner is not None:
                    inner = ((tuple(keys),) + inner[0], inner[1])
            else:
                inner = _signature(a)
            if inner is None:
                return None
            parts.append(inner[0])
            devs, text = {inner[1]}, None
        else:
            return None
        if len(devs) != 1:
            return None
        d = next(iter(devs))
        if device is None:
            device = d
        elif d != device:
            return None
        if text is not None:
            parts.append(text)
    if device is None:  # (Python numbers alone: the program runs on jax's default device)
        device = _programs.default_device()
    return tuple(parts), device


def _digest(key: str, parts: tuple, device) -> str:
    h = hashlib.sha256(_fingerprint())
    h.update(key.encode())
    h.update(repr(parts).encode())
    h.update(f"{device.platform} {device.id} {device.device_kind}".encode())
    h.update(_config().encode())
    return h.hexdigest()


def _load(digest: str, device):
    store = _disk_cache.store()
    data = store.get(_PREFIX + digest) if store is not None else None
    if data is None:
        return None
    try:
        from jax.experimental import serialize_executable

        payload, in_tree, out_tree, note = pickle.loads(data)
        compiled = serialize_executable.deserialize_and_load(
            payload, in_tree, out_tree, backend=device.client, execution_devices=[device]
        )
        return compiled, note
    except Exception:  # noqa: BLE001 (an entry this jax cannot read: compile it again)
        return None


_writer = None  # the thread writing kept executables (`_save`)


def _save(digest: str, compiled, device, args: tuple, note, jax_key=None) -> None:
    """Writes the executable on a thread of its own: serializing, checking and writing one
    (~2 ms) is not the caller's wait. Writes still queued finish before the process exits
    (the thread is joined then)."""
    global _writer
    store = _disk_cache.store()
    if store is None:
        return
    if _writer is None:
        _writer = concurrent.futures.ThreadPoolExecutor(1, "jtorch-store")
    _writer.submit(_write, digest, compiled, device, args, note, store, jax_key)


def _forked() -> None:
    global _writer
    _writer = None  # (a forked child has no writer thread: it starts its own)


os.register_at_fork(after_in_child=_forked)


# Which entry of its own cache jax read last, per thread (`_note_hit`).
_hits = threading.local()


def _note_hit(module_name, cache_key):
    _hits.key = cache_key
    return _log_hit(module_name, cache_key)


try:  # (jax says which entry it read only in this log call)
    from jax._src import compiler as _jax_compiler

    _log_hit = _jax_compiler.log_persistent_cache_hit
    _jax_compiler.log_persistent_cache_hit = _note_hit
except (ImportError, AttributeError):  # a jax without it: what jax read is not kept
    pass


def _jax_entry(jax_key: str, device) -> bytes | None:
    """The executable's bytes as jax wrote them to its cache under `jax_key` (from a fresh
    compile: with their code), or None."""
    try:
        from jax._src import compilation_cache

        cache = compilation_cache._get_cache(device.client)
        data = cache.get(jax_key) if cache is not None else None
        if data is None:
            return None
        data = compilation_cache.decompress_executable(data)
        return compilation_cache.extract_executable_and_time(data)[0]
    except Exception:  # noqa: BLE001 (another jax's layout: not kept)
        return None


def _same_program(code: bytes, compiled, device) -> bool:
    """Whether `code` (an entry of jax's cache) is `compiled`'s program."""
    xla = compiled.runtime_executable()
    from jax._src.lib import xla_client

    other = device.client.deserialize_executable(code, xla_client.DeviceList((device,)))
    return other.fingerprint == xla.fingerprint is not None


def _serialized(compiled, code: bytes | None):
    """`serialize_executable.serialize(compiled)`, with `code` for the executable's own
    bytes where given (those jax read it from: serialized again, it would lose its code)."""
    from jax._src.lib import xla_client
    from jax.experimental import serialize_executable

    if code is None:
        return serialize_executable.serialize(compiled)

    class Pickler(serialize_executable._JaxPjrtPickler):
        def persistent_id(self, obj):
            if isinstance(obj, xla_client.LoadedExecutable):
                return ("exec", code)
            return super().persistent_id(obj)

    args_info, in_tree = jax.tree_util.tree_flatten(compiled.args_info)
    with io.BytesIO() as file:
        unloaded = compiled._executable._unloaded_executable
        Pickler(file).dump((unloaded, args_info, compiled._no_kwargs))
        return file.getvalue(), in_tree, compiled.out_tree


def _write(digest: str, compiled, device, args: tuple, note=None, store=None, jax_key=None) -> None:
    if store is None:
        store = _disk_cache.store()
        if store is None:
            return
    try:
        # A program calling a custom-call target (LAPACK's on CPU: linalg) is not kept: jax
        # registers such targets as it lowers, and a process that loads the program without
        # lowering anything crashes calling the unregistered target.
        if "custom-call" in compiled.as_text():
            return
        # (constants jax passes beside the arguments are not serialized with the program)
        if getattr(getattr(compiled, "_params", None), "const_args", None):
            return
        from jax.experimental import serialize_executable

        code = None
        if jax_key is not None:  # (read from jax's cache: its bytes there are whole)
            code = _jax_entry(jax_key, device)
            if code is None or not _same_program(code, compiled, device):
                return
        payload, in_tree, out_tree = _serialized(compiled, code)
    except Exception:  # noqa: BLE001 (an executable that does not serialize: not kept)
        return
    # XLA's CPU executable carries the code it generated as an ELF object, which one that jax
    # read from its own cache serializes without ("Function ... not found" when loaded). A
    # program without generated code (library calls alone: dots, XNNPACK fusions) has none
    # either: such a one is kept once a copy loaded from its bytes ran the first call's
    # arguments (kernels do not donate them).
    if device.platform == "cpu" and b"\x7fELF" not in payload:
        try:
            copy = serialize_executable.deserialize_and_load(
                payload, in_tree, out_tree, backend=device.client, execution_devices=[device]
            )
            jax.block_until_ready(copy(*args))
        except Exception:  # noqa: BLE001 (code lost, or anything else: not kept)
            return
    data = pickle.dumps((payload, in_tree, out_tree, note))
    store.put(_PREFIX + digest, data)


class StoredKernel:
    """An op kernel's `jax.jit` wrapper whose first eager call finds its executable on disk.

    Called with concrete arguments, it runs the executable it loaded (or compiled and
    kept) for its first call; traced (a backward, `jtorch.compile`, `torch.func`), or with
    arguments that executable does not take, it is the `jax.jit` wrapper. Its other
    attributes are the wrapper's (`lower`, `trace`).
    """

    def __init__(self, jitted, key: str, named_by: int | None = None, note=None):
        self.jitted = jitted
        self.key = key
        # how many leading arguments, with `key`, fix the program (None: all of them)
        self.named_by = named_by
        # a one-item list the program's trace fills (an optimizer's state keys): kept with
        # the executable, and filled from it when loaded
        self.note = note
        self.call = None
        self.ready = None  # what `prepare` or `load` made for the first call

    def __getattr__(self, name):
        if name == "jitted":  # (not set yet: a copy being made)
            raise AttributeError(name)
        return getattr(self.jitted, name)

    def __call__(self, *args):
        # (every eager call of the op comes here: kept lean)
        if _trace_state_clean():
            call = self.call
            if call is None:
                return self._first(args)
            try:
                return call(*args)
            except (TypeError, ValueError):  # not the arguments it was made for
                pass
        return self.jitted(*args)

    def unmade(self) -> bool:
        """Whether no executable was made yet (loaded, compiled, or declined for the jit
        wrapper)."""
        return self.call is None and self.ready is None

    def load(self, *args) -> bool:
        """Whether the executable for `args` was kept: then loaded for the first call."""
        if self.unmade():
            self.ready = self._executable(args, compile=False)
        return self.ready is not None and self.ready[2] == "loaded"

    def prepare(self, *args, more=None) -> None:
        """Loads or compiles the executable before the first call (on `_programs.ahead`'s
        threads: a graph's backwards side by side). `args` are the call's arguments, or its
        first `named_by` ones with `more()` giving the rest (`jax.ShapeDtypeStruct`s may be
        among those), asked for only where a compile needs them. The first call runs what
        was made (and keeps a fresh one)."""
        if self.unmade():
            made = self._executable(args, more=more)
            if made is None:
                self.call = self.jitted
            else:
                self.ready = made

    def _executable(self, args, compile: bool = True, more=None):
        """`(compiled, digest, how, device, jax_key)` for `args`: `how` "loaded" (by its
        key) or "compiled" (to be kept), `jax_key` the entry of jax's cache the compile read
        it from, if any; None where it cannot be kept (or, `compile` false, was not)."""
        if not enabled():  # (asked here too: a program made at import, before jax started)
            return None
        sig = _signature(args if self.named_by is None else args[: self.named_by])
        if sig is None:
            return None
        digest = _digest(self.key, *sig)
        device = sig[1]
        loaded = _load(digest, device)
        if loaded is not None:
            compiled, note = loaded
            if self.note is not None:
                self.note[0] = note
            _programs.note_stored()
            return compiled, digest, "loaded", device, None
        if not compile:
            return None
        if more is not None:
            args = tuple(args) + tuple(more())
        lowered = self.jitted.lower(*args)
        _hits.key = None  # (after the trace: it may have run other programs)
        compiled = lowered.compile()
        # An executable jax read from its own cache loses its code when serialized again
        # ("Function ... not found" when loaded): it is kept with the bytes of jax's entry
        # (`_write`), which this thread's compile names (`_note_hit`).
        return compiled, digest, "compiled", device, getattr(_hits, "key", None)

    def _first(self, args):
        made, self.ready = self.ready or self._executable(args), None
        if made is None:
            self.call = self.jitted
            return self.jitted(*args)
        compiled, digest, how, device, jax_key = made
        try:
            out = compiled(*args)
        except (TypeError, ValueError):  # made for other arguments
            self.call = self.jitted
            return self.jitted(*args)
        except jax.errors.JaxRuntimeError as e:
            # a kept executable that lost its code ("Function ... not found"): forgotten,
            # and the call compiled as usual (nothing ran)
            if how != "loaded" or "not found" not in str(e):
                raise
            store = _disk_cache.store()
            if store is not None:
                store.forget(_PREFIX + digest)
            self.call = self.jitted
            return self.jitted(*args)
        if how == "compiled":
            note = None if self.note is None else self.note[0]
            _save(digest, compiled, device, args, note, jax_key)
        # the executable's own C++ entry (what calling `compiled` runs after its first call)
        self.call = getattr(compiled, "_call", None) or compiled
        return out


def unmade(fn) -> bool:
    """Whether `fn`, a StoredKernel or a `jax.jit` wrapper, has no executable yet."""
    return fn.unmade() if type(fn) is StoredKernel else not fn._cache_size()


def make_ahead(fn, *args, more=None) -> None:
    """Makes `fn`'s executable before its first call (a job of `_programs.ahead`): a
    StoredKernel loads or compiles it (`prepare`), a `jax.jit` wrapper compiles it for
    `args` and what `more()` adds."""
    if type(fn) is StoredKernel:
        fn.prepare(*args, more=more)
    else:
        fn.lower(*args, *(more() if more is not None else ())).compile()


def program(jitted, *key_parts, named_by: int | None = None, note=None):
    """A program of jtorch's own (a view's replay, the generator's key, a kernel's backward,
    an optimizer's step) named by `key_parts`, which with the avals of the call's arguments
    (its first `named_by` ones) fix what it computes: kept as a StoredKernel (with `note`,
    see there), or `jitted` itself where the store is off or the parts would not read the
    same in another process. (Made at import too: whether the store is on is asked at the
    first call, once jax has started.)"""
    if _state["off"]:
        return jitted
    key = repr(("program",) + key_parts)
    if not _steady(key):
        return jitted
    return StoredKernel(jitted, key, named_by, note)


# op identity -> the op, or None once two ops were seen to share it
_owners: dict = {}


def wrap(jitted, op, parts: tuple):
    """`op`'s kernel `jitted` as a StoredKernel named by the op and `parts` (what else its
    program depends on besides the call's avals), or `jitted` itself where the store is off,
    or the name would not read the same in every process or name one op only."""
    if not enabled():
        return jitted
    impl = getattr(op, "impl", None)
    module = getattr(impl, "__module__", None) or ""
    if not module.startswith("jtorch."):
        return jitted  # (a user's op, `torch.library`: its source is not in the fingerprint)
    identity = (op.name, module, getattr(impl, "__qualname__", None))
    owner = _owners.setdefault(identity, op)
    if owner is not op:
        _owners[identity] = None  # (two ops by one name: neither is kept)
        return jitted
    key = repr((identity, parts))
    if not _steady(key):
        return jitted
    return StoredKernel(jitted, key)
