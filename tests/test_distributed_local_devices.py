"""DeviceMesh, DTensor and fully_shard over one process's local devices.

jax fixes its device count when its backend starts, so the check runs in a fresh process
with 8 simulated CPU devices (`XLA_FLAGS=--xla_force_host_platform_device_count=8`):
dist_scripts/local_devices.py checks each array's layout over the devices and every value
against the same computation on plain tensors, and prints "ok". dist_scripts/data_parallel.py
does the same for nn.DataParallel over 4 of them made the accelerator (`JTORCH_CUDA_IS_CPU=1`).
"""

import os
import subprocess
import sys

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
