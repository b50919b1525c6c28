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
