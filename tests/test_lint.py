"""The linter configured in pyproject.toml passes over the whole repository (run by CI)."""

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the 'test' extra)")
    r = subprocess.run([ruff, "check", "--output-format", "concise", "jtorch", "tests", "compat",
                        "bench", "examples"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
