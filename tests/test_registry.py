"""The registry produced every variant it declared, and every op is covered by a test."""

import glob
import json
import os
import re
import subprocess
import sys

import pytest

import jtorch
from jtorch._ops._registry import METHODS, NAMESPACES, OPS, OpDef

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _public(name):
    return not name.rsplit(".", 1)[-1].startswith("_")


def test_every_op_has_its_variants():
    for full, d in OPS.items():
        ns, _, short = full.rpartition(".")
        if d.published:
            assert NAMESPACES[ns].get(short) is not None, f"{full}: no function published"
        if not isinstance(d, OpDef):
            continue
        ifn = getattr(d, "inplace_fn", None)
        if ifn is not None:
            published = [ifn in ns.values() for ns in NAMESPACES.values()]
            assert ifn in METHODS.values() or any(published), f"{full}: {short}_ unpublished"
    for name, fn in METHODS.items():
        assert getattr(jtorch.Tensor, name) is fn, f"Tensor.{name} is not the registry's"


def test_namespaces_are_importable():
    assert jtorch.linalg.__name__ == "jtorch.linalg"
    for ns, mod in [
        ("linalg", jtorch.linalg),
        ("special", jtorch.special),
        ("fft", jtorch.fft),
        ("nn.functional", jtorch.nn.functional),
    ]:
        for short in NAMESPACES[ns]:
            assert getattr(mod, short) is NAMESPACES[ns][short]


def test_every_public_op_is_tested():
    sources = "\n".join(open(f).read() for f in glob.glob(os.path.join(ROOT, "tests", "*.py")))
    record_path = os.path.join(ROOT, "compat", "ops_status.json")
    record = json.load(open(record_path)) if os.path.exists(record_path) else {}
    passing = {v.get("name") for v in record.values() if v["status"] == "pass"}
    untested = []
    for full in OPS:
        if not _public(full):
            continue
        short = full.rsplit(".", 1)[-1]
        if full in passing or re.search(rf"\b{re.escape(short)}\b", sources):
            continue
        untested.append(full)
    assert not untested, f"ops with neither a unit test nor a passing OpInfo: {sorted(untested)}"


def test_numpy_argument_spellings():
    """PyTorch's parser takes `axis` for `dim` and `keepdims` for `keepdim`, not both at once."""
    import numpy as np

    x = jtorch.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(jtorch.sum(x, axis=0).numpy(), [3.0, 5.0, 7.0])
    assert x.sum(axis=1, keepdims=True).shape == (2, 1)
    assert jtorch.softmax(x, axis=1).shape == (2, 3)  # a required dim, given as axis
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        x.sum(dim=0, axis=0)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'dim'"):
        x.unsqueeze()


_IMPORT = """
import builtins, json, time
compiled = []
real = builtins.compile
builtins.compile = lambda src, name, *a, **k: compiled.append(name) or real(src, name, *a, **k)
import jtorch
builtins.compile = real
from jtorch import _tracebacks
x = jtorch.add(jtorch.ones(2), 1, alpha=2)
print(json.dumps([compiled.count(_tracebacks.GENERATED_FILE), x.tolist()]))
"""


def test_the_op_entries_code_is_kept_between_imports(tmp_path):
    """`_ops/_codes.py`: the registry's generated functions are compiled at the first import
    with a cache directory, and read back at the next (a file that does not read back is
    ignored and written again)."""
    env = dict(os.environ, JTORCH_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)

    def imported():
        out = subprocess.run(
            [sys.executable, "-c", _IMPORT], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    first, again = imported(), imported()
    assert first[0] > 1000 and again[0] == 0  # (every op entry compiled, then none)
    assert first[1] == again[1] == [3.0, 3.0]
    (kept,) = [p for p in tmp_path.iterdir() if p.name.startswith("jtorch-op-code.")]
    kept.write_bytes(b"not marshal")
    assert imported()[0] > 1000 and imported()[0] == 0


_COLLECTOR = """
import gc, json, sys
if sys.argv[1] == "off":
    gc.disable()
if sys.argv[1] == "jax first":
    import jax
import jtorch
print(json.dumps([gc.isenabled(), gc.get_freeze_count(), len(gc.get_objects())]))
"""


def test_import_freezes_what_it_made_and_leaves_the_collector_as_it_was():
    """`jtorch/__init__.py` pauses the cyclic collector while it imports and, where it
    starts jax, freezes the objects the import made, so later full collections (the one at
    exit too) skip them."""

    def imported(mode):
        out = subprocess.run(
            [sys.executable, "-c", _COLLECTOR, mode],
            env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout)

    enabled, frozen, tracked = imported("on")
    assert enabled and frozen > 50_000 and tracked < frozen // 10
    enabled, frozen, _ = imported("off")
    assert not enabled and frozen > 50_000  # (a program that turned it off keeps it off)
    # where jax came first, the program's own objects may be in it: nothing is frozen
    enabled, frozen, tracked = imported("jax first")
    assert enabled and frozen == 0 and tracked > 50_000
