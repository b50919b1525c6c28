"""jtorch.load on damaged and lying checkpoints: PyTorch's errors, and no allocation from lies.

The files are written by tests/checkpoint_forge.py (zipfile + pickle, no torch); the
expected exceptions are what PyTorch 2.13 raises on the same bytes, which
compat/test_serialization_faults.py checks against real PyTorch.
"""

import io
import os
import pickle
import random
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jtorch

from . import checkpoint_forge as forge


@pytest.mark.parametrize("name", sorted(forge.LYING))
def test_lying_checkpoints_are_refused_with_pytorchs_errors(name):
    data, exc, message = forge.LYING[name]
    with pytest.raises(exc, match=message):
        jtorch.load(io.BytesIO(data))


def _good_checkpoint() -> bytes:
    buf = io.BytesIO()
    jtorch.save({"w": jtorch.arange(64.0).reshape(8, 8), "step": 3}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("name", sorted(forge.truncations(b"x" * 700)))
def test_truncated_zip_is_reported_as_a_damaged_archive(name):
    data, exc, message = forge.truncations(_good_checkpoint())[name]
    with pytest.raises(exc, match=message):
        jtorch.load(io.BytesIO(data))


def test_a_zero_size_tensor_may_have_any_stride():
    # PyTorch's storage size of a tensor with no elements is 0, whatever its strides.
    data = forge.checkpoint(
        {"x": forge.Tensor(forge.Storage("0", 4), 0, (0, 5), (1000, 1))}, {"0": forge.FOUR_FLOATS}
    )
    x = jtorch.load(io.BytesIO(data))["x"]
    assert x.shape == (0, 5)


def test_views_that_fit_their_storage_still_load():
    s = forge.Storage("0", 4)
    data = forge.checkpoint(
        {
            "a": forge.Tensor(s, 1, (3,), (1,)),
            "b": forge.Tensor(s, 3, (1,), (-5,)),  # one element
            "c": forge.Tensor(s, 0, (2, 2), (0, 1)),
        },  # broadcast rows
        {"0": forge.FOUR_FLOATS},
    )
    out = jtorch.load(io.BytesIO(data))
    assert out["a"].tolist() == [1.0, 2.0, 3.0]
    assert out["b"].tolist() == [3.0] and out["b"].stride() == (-5,)
    assert out["c"].tolist() == [[0.0, 1.0], [0.0, 1.0]]


def test_big_endian_checkpoint_loads():
    data = forge.stored_zip(
        [
            (
                "archive/data.pkl",
                forge.data_pkl({"x": forge.Tensor(forge.Storage("0", 3), 0, (3,), (1,))}),
            ),
            ("archive/byteorder", b"big"),
            ("archive/data/0", np.array([1.5, -2.0, 3.25], dtype=">f4").tobytes()),
            ("archive/version", b"3\n"),
        ]
    )
    assert jtorch.load(io.BytesIO(data))["x"].tolist() == [1.5, -2.0, 3.25]


def test_a_file_too_short_for_a_zip_goes_to_the_legacy_reader():
    # PyTorch only takes files that start with a zip header as zips; "PK" alone is a pickle
    # whose first opcode ('P', 80) the weights-only unpickler does not know.
    with pytest.raises(pickle.UnpicklingError, match="Unsupported operand 80"):
        jtorch.load(io.BytesIO(b"PK"))
    with pytest.raises(EOFError):
        jtorch.load(io.BytesIO(b""))


def _legacy_checkpoint() -> bytes:
    """PyTorch's pre-1.6 format for {"x": float32 [0, 1, 2, 3]}, written by hand."""

    def dump(obj):
        return pickle.dumps(obj, protocol=2)

    body = forge.data_pkl({"x": forge.Tensor(forge.Storage("k", 4, legacy=True), 0, (4,), (1,))})
    return (
        dump(0x1950A86A20F9469CFC6C)
        + dump(1001)
        + dump({"little_endian": True})
        + body
        + dump(["k"])
        + struct.pack("<q", 4)
        + forge.FOUR_FLOATS
    )


def test_legacy_format_storages_are_checked_against_the_file():
    data = _legacy_checkpoint()
    assert jtorch.load(io.BytesIO(data))["x"].tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="unexpected EOF, expected 1 more bytes"):
        jtorch.load(io.BytesIO(data[:-1]))
    count = data.rfind(struct.pack("<q", 4))
    lying = data[:count] + struct.pack("<q", 2**40) + data[count + 8 :]
    with pytest.raises(RuntimeError, match="storage has wrong byte size: expected 4 got"):
        jtorch.load(io.BytesIO(lying))


def test_fuzzed_checkpoints_load_or_raise_without_allocating_what_they_claim(tmp_path):
    # Bit flips and truncations of a small checkpoint, in a child process whose peak memory
    # is measured: every variant either loads or raises, and none allocates much more than
    # the file could justify (a lie in a header must never turn into an allocation).
    script = textwrap.dedent("""
        import io, random, resource, sys
        import jtorch
        data = open(sys.argv[1], "rb").read()
        jtorch.load(io.BytesIO(data))
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rng = random.Random(0)
        outcomes = {}
        for i in range(300):
            damaged = bytearray(data)
            if i % 4 == 0:
                damaged = damaged[:rng.randrange(len(data))]
            else:
                for _ in range(1 + i % 3):
                    pos = rng.randrange(len(damaged))
                    damaged[pos] ^= 1 << rng.randrange(8)
            try:
                obj = jtorch.load(io.BytesIO(bytes(damaged)))
                if isinstance(obj, dict):
                    for v in obj.values():
                        if isinstance(v, jtorch.Tensor) and v.numel() <= 4096:
                            v.sum()
                outcomes["loaded"] = outcomes.get("loaded", 0) + 1
            except Exception as e:
                outcomes[type(e).__name__] = outcomes.get(type(e).__name__, 0) + 1
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
        print(sorted(outcomes.items()), grown)
    """)
    path = tmp_path / "ck.pt"
    path.write_bytes(_good_checkpoint())
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(jtorch.__file__)))
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    outcomes, grown_kb = out.stdout.strip().rsplit(" ", 1)
    assert "loaded" in outcomes and "RuntimeError" in outcomes
    assert int(grown_kb) < 200 * 1024, (outcomes, grown_kb)


@pytest.mark.parametrize("seed", range(3))
def test_random_cuts_of_a_checkpoint_never_load_a_wrong_object(seed):
    data = _good_checkpoint()
    cut = random.Random(seed).randrange(1, len(data))
    with pytest.raises((RuntimeError, pickle.UnpicklingError, EOFError)):
        jtorch.load(io.BytesIO(data[:cut]))
