"""The registry produced every variant it declared, and every op is covered by a test."""

import glob
import json
import os
import re

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
