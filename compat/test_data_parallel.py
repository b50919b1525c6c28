"""nn.DataParallel over several devices against PyTorch.

PyTorch's DataParallel needs CUDA, which this CPU has not, so PyTorch computes on one device
what DataParallel is documented to compute (tests/dist_scripts/data_parallel_training.py:
torch.chunk's pieces, replicas sharing the parameters, replica 0 keeping the BatchNorm
statistics), and jtorch runs the real nn.DataParallel over 4 simulated accelerators
(`JTORCH_CUDA_IS_CPU=1`). Losses, parameters, buffers, an input's gradient and the chunk
each replica saw must agree. On this CPU, the parts of nn.parallel answer as PyTorch's CPU
build does. With JTORCH_DIST_FULL=1, transformers' Trainer on 2 simulated accelerators (it
wraps the model in DataParallel) trains as PyTorch's Trainer on the CPU with the same global
batch.
"""

import collections
import json
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.dist_common import outcome  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "dist_scripts")


def _run(*runner, script="data_parallel_training.py", **env):
    r = subprocess.run(
        [sys.executable, *runner, script],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=ROOT, JTORCH_COMPILE_NOTE="0", **env),
        cwd=SCRIPTS,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout) if script == "data_parallel_training.py" else r.stdout


def test_data_parallel_over_four_devices_matches_pytorch_semantics():
    expected = _run()
    got = _run(
        "-m", "jtorch", JTORCH_CUDA_IS_CPU="1", XLA_FLAGS="--xla_force_host_platform_device_count=5"
    )
    assert got["chunks"] == expected["chunks"]
    np.testing.assert_allclose(got["losses"], expected["losses"], rtol=1e-5, atol=1e-6)
    for group in ("params", "buffers"):
        assert got[group].keys() == expected[group].keys()
        for name in expected[group]:
            np.testing.assert_allclose(
                got[group][name], expected[group][name], rtol=1e-4, atol=1e-5, err_msg=name
            )
    np.testing.assert_allclose(got["input_grad"], expected["input_grad"], rtol=1e-4, atol=1e-5)


Point = collections.namedtuple("Point", "x y")


def _cpu_build(lib):
    from importlib import import_module

    sg = import_module(f"{lib.__name__}.nn.parallel.scatter_gather")
    p = lib.nn.parallel
    return [
        outcome(lambda: p.scatter(("a", 1, Point(2, None), {"k": [3]}), [0, 1, 2])),
        outcome(lambda: sg.scatter_kwargs((), {"flag": True}, [0, 1])),
        outcome(lambda: sg.scatter_kwargs(("a", "b"), None, [0, 1])),
        outcome(lambda: p.gather([None, None], 0)),
        outcome(lambda: p.gather([lib.ones(2), lib.ones(2)], 0)),
        outcome(lambda: p.replicate(lib.nn.Linear(2, 2), [])),
        outcome(lambda: p.parallel_apply([lib.nn.Linear(2, 2)], [lib.ones(2)])),
        outcome(lambda: p.comm.reduce_add([lib.ones(2)], 0)),
        outcome(lambda: p.data_parallel(lib.nn.Linear(2, 2), lib.ones(1, 2))),
    ]


@pytest.mark.skipif(torch.cuda.is_available(), reason="compares the CPU builds")
def test_parts_answer_as_the_cpu_build():
    assert _cpu_build(jtorch) == _cpu_build(torch)


@pytest.mark.skipif(
    os.environ.get("JTORCH_DIST_FULL") != "1", reason="~40 s: set JTORCH_DIST_FULL=1"
)
def test_transformers_trainer_over_two_devices_trains_as_pytorch_on_the_cpu():
    pytest.importorskip("transformers")
    script = "trainer_data_parallel.py"
    expected = _run(script=script).splitlines()
    got = _run(
        "-m",
        "jtorch",
        script=script,
        JTORCH_CUDA_IS_CPU="1",
        XLA_FLAGS="--xla_force_host_platform_device_count=3",
    ).splitlines()
    assert expected[0] == "n_gpu 0 train batch 8" and got[0] == "n_gpu 2 train batch 8"
    assert got[1] == "wrapped in DataParallel", got[1]

    def steps(lines):  # [step, loss, grad_norm] per logged step
        return [[float(w) for w in line.split()[1::2]] for line in lines if line.startswith("step")]

    assert len(steps(expected)) == 4
    np.testing.assert_allclose(steps(got), steps(expected), rtol=1e-4, atol=1e-5)
