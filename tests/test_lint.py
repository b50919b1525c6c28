"""The linter, import sorter and formatter configured in pyproject.toml pass over the whole
repository (run by CI). `python -m ruff format . && python -m ruff check --fix .` mends both."""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATHS = ["jtorch", "tests", "compat", "bench", "examples", "tools"]


def _ruff(*args) -> subprocess.CompletedProcess:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (it comes with the 'test' extra)")
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *PATHS], cwd=ROOT, capture_output=True, text=True
    )


def test_ruff_clean():
    """pyflakes, pycodestyle, bugbear and import sorting (`I`)."""
    r = _ruff("check", "--output-format", "concise")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_formatted():
    r = _ruff("format", "--check")
    assert r.returncode == 0, (
        r.stdout + r.stderr + "\nformat with `python -m ruff format " + " ".join(PATHS) + "`"
    )
