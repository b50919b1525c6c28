"""The linter configured in pyproject.toml passes over the whole repository (run by CI)."""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_clean():
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (it comes with the 'test' extra)")
    paths = ["jtorch", "tests", "compat", "bench", "examples", "tools"]
    cmd = [sys.executable, "-m", "ruff", "check", "--output-format", "concise", *paths]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
