"""Test set-up: a persistent XLA compilation cache, so reruns skip most compiling."""

import os

import jax

_CACHE = os.environ.get("JTORCH_TEST_CACHE", os.path.join(os.path.dirname(__file__), "..",
                                                          ".jax_cache"))
# One cache directory per pytest-xdist worker: jax's cache files are not safe to read while
# another process writes them.
_CACHE = os.path.join(_CACHE, os.environ.get("PYTEST_XDIST_WORKER", "main"))
jax.config.update("jax_compilation_cache_dir", os.path.abspath(_CACHE))
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
