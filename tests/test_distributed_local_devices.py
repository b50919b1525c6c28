"""DeviceMesh, DTensor and fully_shard over one process's local devices.

jax fixes its device count when its backend starts, so the check runs in a fresh process
with 8 simulated CPU devices (`XLA_FLAGS=--xla_force_host_platform_device_count=8`):
dist_scripts/local_devices.py checks each array's layout over the devices and every value
against the same computation on plain tensors, and prints "ok". dist_scripts/data_parallel.py
does the same for nn.DataParallel over 4 of them made the accelerator (`JTORCH_CUDA_IS_CPU=1`),
and tests/test_cuda.py runs over one of them made `cuda:0`.
"""

import os
import subprocess
import sys
from xml.etree import ElementTree

import pytest

import jtorch as torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_scripts")


def _run(script: str, devices: int, **env) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        PYTHONPATH=ROOT,
        JTORCH_COMPILE_NOTE="0",
        XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
        **env,
    )
    return subprocess.run(
        [sys.executable, "-m", "jtorch", script],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=SCRIPTS,
    )


def test_mesh_dtensor_and_fully_shard_over_eight_local_devices():
    r = _run("local_devices.py", 8)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "ok"


def test_data_parallel_over_four_local_accelerators():
    # 5 host devices: `cpu` and cuda:0..3 under JTORCH_CUDA_IS_CPU=1.
    r = _run("data_parallel.py", 5, JTORCH_CUDA_IS_CPU="1")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "ok"


@pytest.mark.skipif(torch.cuda.is_available(), reason="tests/test_cuda.py runs on the GPU")
def test_cuda_tests_over_a_simulated_accelerator(tmp_path):
    # tests/test_cuda.py skips without a GPU; over a host device made `cuda:0` it checks in
    # every run that indexing, host-worked results and draws stay on the accelerator.
    report = tmp_path / "report.xml"
    env = dict(
        os.environ,
        PYTHONPATH=ROOT,
        JTORCH_CUDA_IS_CPU="1",
        XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"),
    )
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
        + [f"--junitxml={report}", os.path.join(ROOT, "tests", "test_cuda.py")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stdout[-3000:]
    suite = ElementTree.parse(report).getroot().find("testsuite")
    # (one test needs a real GPU's memory statistics)
    assert int(suite.get("tests")) >= 60 and int(suite.get("skipped")) == 1
    assert int(suite.get("failures")) == int(suite.get("errors")) == 0
