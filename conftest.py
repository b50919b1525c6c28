"""Test set-up shared by `tests/` and `compat/`: how XLA compiles, and a compilation cache.

The suite is dominated by XLA compiles (thousands of small programs, each run a few times),
so the tests ask XLA's CPU backend for its cheapest code generation: at optimization level 0
a small program compiles about twice as fast, and the tests never run long enough for the
slower code to matter. Subprocesses (the script corpus, the ecosystem cases, DataLoader
workers) inherit the setting through the environment. `JTORCH_TEST_XLA_OPT=1` turns it off.
"""

import os
import sys

# Python's bytecode kept, as on a user's machine: where PYTHONDONTWRITEBYTECODE is set (some
# sandboxes), each of the ~100 Python subprocesses the suite starts would compile jtorch's
# ~360 modules from source again (~0.55 s each). (Written into __pycache__/, ignored by git.)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

if os.environ.get("JTORCH_TEST_XLA_OPT") != "1":
    _flag = "--xla_backend_optimization_level=0"
    if _flag not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + _flag).strip()

# One compilation cache for the whole run: both pytest-xdist workers and every jtorch
# subprocess they start (the script corpus, the ecosystem cases, DataLoader workers) read
# and write the same directory through jtorch's own store, which writes each entry whole
# by a rename (jtorch/_disk_cache.py), so a program one process compiled is read, not
# compiled again, by the others (measured on the script corpus and the DataLoader tests:
# 3% fewer compiles; the scripts share few programs).
_CACHE = os.environ.get("JTORCH_TEST_CACHE", os.path.join(os.path.dirname(__file__), ".jax_cache"))
os.environ["JTORCH_CACHE_DIR"] = os.path.abspath(os.path.join(_CACHE, "shared"))
os.environ.setdefault("JTORCH_CACHE_SIZE_MB", "8192")

import jax  # noqa: E402 - XLA reads XLA_FLAGS when its backend starts, after the lines above

jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


# Every compiled XLA program holds memory mappings; a process that compiles thousands of them
# (this suite) would reach the kernel's limit (vm.max_map_count, 65530) and crash. Dropping
# jax's in-memory executables now and then keeps it far below; the persistent cache on disk
# still answers recompiles.
_tests_run = [0]


def _map_count() -> int:
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def pytest_runtest_teardown(item, nextitem):
    _tests_run[0] += 1
    if _tests_run[0] % 20 == 0 and _map_count() > 20000:
        jax.clear_caches()
