"""Unmodified PyTorch scripts print the same under `python -m jtorch` as under PyTorch."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = ["examples/tensor_basics.py"]


def _run(cmd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_prints_what_pytorch_prints(script):
    expected = _run([sys.executable, script])
    actual = _run([sys.executable, "-m", "jtorch", script])
    assert actual == expected
