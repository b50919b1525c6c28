"""Distributed parity over real processes: the same torchrun scripts under PyTorch's launcher
(gloo) and under jtorch's (`python -m jtorch -m torch.distributed.run`) print the same.

The scripts are tests/dist_scripts/*.py: each checks itself (DDP and FSDP against a plain
model trained on the global batch, collectives against numpy) and rank 0 prints what it
computed. Lines are compared as in the script corpus (text and integers exactly, floats
within a tolerance). Multi-process runs are slow (each process imports, joins and
compiles): the default suite compares the DDP script over 2 processes (about 25 s of two
cores); JTORCH_DIST_FULL=1 compares every script, over 4 processes too, and mp.spawn.
"""

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from compat.corpus import first_difference  # noqa: E402
from tests.helpers import free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "dist_scripts")
FULL = os.environ.get("JTORCH_DIST_FULL") == "1"


def _run(runner: list, script: str, nproc: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT, JTORCH_COMPILE_NOTE="0")
    # a free port of its own (torchrun's default 29500 would meet another run on this host)
    cmd = runner + ["-m", "torch.distributed.run", "--nproc-per-node", str(nproc)]
    cmd += ["--master-port", str(free_port()), script]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=SCRIPTS,
        start_new_session=True,
    )


CASES = [("ddp.py", 2, 1e-4, 1e-5)]
if FULL:
    CASES += [
        ("collectives.py", 2, 0, 0),
        ("collectives.py", 4, 0, 0),
        ("ddp.py", 4, 1e-4, 1e-5),
        ("ddp_compile.py", 2, 1e-4, 1e-5),
        ("fsdp.py", 2, 1e-4, 1e-5),
        ("fsdp.py", 4, 1e-4, 1e-5),
        ("dtensor.py", 2, 0, 0),
        ("dtensor.py", 4, 0, 0),
        ("tp.py", 2, 1e-4, 1e-5),
        ("tp.py", 4, 1e-4, 1e-5),
        ("tp_lm.py", 2, 1e-4, 1e-5),
        ("tp_lm.py", 4, 1e-4, 1e-5),
        ("dcp.py", 2, 1e-4, 1e-5),
        ("dcp.py", 4, 1e-4, 1e-5),
    ]


@pytest.mark.parametrize("script,nproc,rtol,atol", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_torchrun_script(script, nproc, rtol, atol):
    t = _run([sys.executable], script, nproc)
    assert t.returncode == 0, t.stderr[-3000:]
    j = _run([sys.executable, "-m", "jtorch"], script, nproc)
    assert j.returncode == 0, j.stderr[-3000:]
    diff = first_difference(j.stdout, t.stdout, rtol, atol)
    assert diff is None, f"line {diff[0]}: jtorch {diff[1]!r} vs PyTorch {diff[2]!r}"
    assert t.stdout.splitlines()[-1] == f"ok {nproc}"


@pytest.mark.skipif(not FULL, reason="set JTORCH_DIST_FULL=1")
def test_mp_spawn_script():
    """`torch.multiprocessing.spawn` workers joining by tcp://, and one failing."""
    for args in (["2"], ["2", "fail"]):
        outs = []
        for runner in ([sys.executable], [sys.executable, "-m", "jtorch"]):
            r = subprocess.run(
                runner + ["spawn.py", *args],
                capture_output=True,
                text=True,
                timeout=600,
                cwd=SCRIPTS,
                start_new_session=True,
                env=dict(os.environ, PYTHONPATH=ROOT, JTORCH_COMPILE_NOTE="0"),
            )
            assert r.returncode == 0, r.stderr[-3000:]
            outs.append(r.stdout)
        assert outs[1] == outs[0]
