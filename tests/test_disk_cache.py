"""The persistent compilation cache (DESIGN 13): where it lives, how entries are written and
trimmed, and that a second run reads its programs back instead of compiling them."""

import json
import os
import subprocess
import sys
import threading

import jax

from jtorch import _disk_cache


def test_the_directory_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("JTORCH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _disk_cache._default_dir() == os.path.join(str(tmp_path), "jtorch", "xla")
    monkeypatch.setenv("JTORCH_CACHE_DIR", "~/elsewhere")
    assert _disk_cache._default_dir() == os.path.expanduser("~/elsewhere")
    for off in ("", "0", " "):
        monkeypatch.setenv("JTORCH_CACHE_DIR", off)
        assert _disk_cache._default_dir() is None


def test_a_cache_configured_for_jax_is_left_as_it_is():
    # tests/conftest.py gives jax a directory per test worker before jtorch is imported
    assert _disk_cache.directory() == jax.config.jax_compilation_cache_dir


def test_entries_are_written_whole_and_read_back(tmp_path):
    store = _disk_cache.AtomicStore(str(tmp_path), max_bytes=10**9)
    assert store.get("k") is None
    store.put("k", b"abc" * 1000)
    store.put("k", b"something else")  # an existing entry is kept
    assert store.get("k") == b"abc" * 1000
    assert sorted(os.listdir(tmp_path)) == [".trim-lock", "k-cache"]  # no temporary left


def test_concurrent_writers_never_show_half_an_entry(tmp_path):
    value = bytes(range(256)) * 4096  # 1 MiB
    stores = [_disk_cache.AtomicStore(str(tmp_path), max_bytes=10**9) for _ in range(4)]
    seen, errors = [], []

    def write(store, k):
        for i in range(20):
            store.put(f"key{i}", value)

    def read(store):
        for _ in range(200):
            for i in range(20):
                got = store.get(f"key{i}")
                if got is not None and got != value:
                    errors.append(len(got))
                seen.append(got is not None)

    threads = [threading.Thread(target=write, args=(s, k)) for k, s in enumerate(stores[:2])]
    threads += [threading.Thread(target=read, args=(s,)) for s in stores[2:]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and any(seen)


def test_trimming_drops_the_least_recently_read(tmp_path):
    store = _disk_cache.AtomicStore(str(tmp_path), max_bytes=10**9)
    for i in range(4):
        store.put(f"e{i}", b"x" * 3000)
        os.utime(tmp_path / f"e{i}-cache", (1000 + i, 1000 + i))
    store.get("e0")  # read: now the most recent
    store.max_bytes = 10_000
    store.trim()
    left = sorted(f for f in os.listdir(tmp_path) if f.endswith("-cache"))
    assert left == ["e0-cache", "e3-cache"]  # under 80% of the bound, oldest reads gone


_SCRIPT = """
import json, jtorch as torch
x = torch.arange(12.0).reshape(3, 4).requires_grad_()
(torch.tanh(x * 2).sum(1) ** 2).mean().backward()
print(json.dumps({k: v for k, v in torch.compiler.stats().items() if k != "caches"}))
"""


def test_a_second_run_reads_its_programs_from_disk(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("JAX_") and k != "JTORCH_STORED_KERNELS"
    }
    env.update(
        JTORCH_CACHE_DIR=str(tmp_path / "xla"),
        JAX_PLATFORMS="cpu",
        PYTHONPATH=os.pathsep.join(
            p
            for p in [
                os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                env.get("PYTHONPATH"),
            ]
            if p
        ),
    )
    runs = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["compiles"] > 0 and first["disk_hits"] == first["stored_hits"] == 0
    # every program comes back from disk: jtorch's own (kernels, their backwards) by its own
    # key, without tracing (jtorch/_stored.py), any other by jax's
    assert second["compiles"] == 0 and second["stored_hits"] > 0
    assert second["disk_hits"] + second["stored_hits"] == first["compiles"]
    assert any(f.endswith("-cache") for f in os.listdir(tmp_path / "xla"))
