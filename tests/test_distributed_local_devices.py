"""DeviceMesh, DTensor and fully_shard over one process's local devices.

jax fixes its device count when its backend starts, so the check runs in a fresh process
with 8 simulated CPU devices (`XLA_FLAGS=--xla_force_host_platform_device_count=8`):
dist_scripts/local_devices.py checks each array's layout over the devices and every value
against the same computation on plain tensors, and prints "ok".
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_scripts")


def test_mesh_dtensor_and_fully_shard_over_eight_local_devices():
    env = dict(
        os.environ,
        PYTHONPATH=ROOT,
        JTORCH_COMPILE_NOTE="0",
        XLA_FLAGS="--xla_force_host_platform_device_count=8",
    )
    r = subprocess.run(
        [sys.executable, "-m", "jtorch", "local_devices.py"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=SCRIPTS,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "ok"
