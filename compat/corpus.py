"""Running a corpus of programs under PyTorch and under `python -m jtorch`, and comparing them.

A corpus is a set of Python files. Each runs twice in subprocesses, from its own directory
and with the same environment: `python file.py` (real PyTorch, the oracle) and
`python -m jtorch file.py`. A program *runs* when it exits with status 0 under jtorch, and
*matches* when its stdout equals PyTorch's line by line, where numbers written with a decimal
point or an exponent may differ within the program's tolerance and everything else (text,
integers, shapes, dtypes, reprs, booleans) must be equal. Options come from a header comment:

    # compat: rtol=0.25 atol=0.05 [timeout=300] [requires=transformers,safetensors] [slow]

(default `rtol=1e-4 atol=1e-5 timeout=300`). `requires` names modules that must import in
the test process (the PyTorch side), or the program is skipped; `slow` marks programs a
corpus runs only when asked (see `Corpus`).

PyTorch's outputs are reused while the program's text, the torch version and the versions of
the required libraries are unchanged: committed in the corpus's `recorded` directory, or kept
in `.jax_cache/<corpus>_torch_outputs`.

The record (a committed JSON file) makes regressions fail: a program recorded as matching
must still match, one recorded as running must still run. The others xfail with their first
difference.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import importlib.metadata
import importlib.util
import itertools
import json
import math
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.abspath(os.environ.get("JTORCH_TEST_CACHE", os.path.join(ROOT, ".jax_cache")))
_XDIST = os.environ.get("PYTEST_XDIST_WORKER")
_HEADER = re.compile(r"^#\s*compat:(.*)$", re.M)

# A number not glued to a name (`fc1`, `conv2d`); floats have a '.' or an exponent.
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+|nan|inf)(?![\w])"
)


def has_header(path: str) -> bool:
    return bool(_HEADER.search(open(path).read()))


def options(path: str) -> dict:
    """Reads `# compat: key=value ... [slow]` from a program's header."""
    opts = {"rtol": 1e-4, "atol": 1e-5, "timeout": 300.0, "requires": [], "slow": False}
    m = _HEADER.search(open(path).read())
    if m:
        for item in m.group(1).split():
            key, _, value = item.partition("=")
            if key == "requires":
                opts["requires"] = [v for v in value.split(",") if v]
            elif key == "slow":
                opts["slow"] = True
            else:
                opts[key] = float(value)
    return opts


def _version(module: str) -> str:
    try:
        return importlib.metadata.version(module.replace("_", "-"))
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _env() -> dict:
    # (JTORCH_CACHE_DIR comes along: conftest.py points every process at one cache)
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p]),
        JAX_PLATFORMS="cpu",
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
        # The ecosystem libraries must never reach the network.
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        TRANSFORMERS_VERBOSITY="error",
        DISABLE_TQDM="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    return env


def _run(args: list, timeout: float, cwd: str) -> dict:
    try:
        r = subprocess.run(
            [sys.executable] + args,
            capture_output=True,
            text=True,
            env=_env(),
            cwd=cwd,
            timeout=timeout,
        )
        return {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return {"rc": None, "stdout": out, "stderr": f"timed out after {timeout:.0f} s"}


def _is_float(token: str) -> bool:
    return any(c in token for c in ".eEna")


def _close(a: str, b: str, rtol: float, atol: float) -> bool:
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= atol + rtol * abs(y)


def line_matches(actual: str, expected: str, rtol: float, atol: float) -> bool:
    """Equal text and integers; floats (tokens with '.', an exponent, nan, inf) within tolerance.

    Whitespace between tokens may differ: tensor printing pads columns to the widest value
    and leaves room for a sign, so values within tolerance can print at other widths.
    """
    if actual == expected:
        return True
    ta = ["".join(t.split()) for t in _NUMBER.split(actual)]
    te = ["".join(t.split()) for t in _NUMBER.split(expected)]
    na, ne = _NUMBER.findall(actual), _NUMBER.findall(expected)
    if ta != te or len(na) != len(ne):
        return False
    for a, e in zip(na, ne):
        if a == e:
            continue
        if not (_is_float(a) and _is_float(e) and _close(a, e, rtol, atol)):
            return False
    return True


def differences(actual: str, expected: str, rtol: float, atol: float):
    """(line number, jtorch line, PyTorch line) for each line that does not match."""
    la, le = actual.splitlines(), expected.splitlines()
    for i in range(max(len(la), len(le))):
        a = la[i] if i < len(la) else "<missing>"
        e = le[i] if i < len(le) else "<missing>"
        if i >= len(la) or i >= len(le) or not line_matches(a, e, rtol, atol):
            yield i + 1, a, e


def first_difference(actual: str, expected: str, rtol: float, atol: float):
    """The first of `differences`, or None."""
    return next(differences(actual, expected, rtol, atol), None)


def _tail(text: str, n: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


class Corpus:
    """One corpus: its programs, PyTorch's recorded outputs, its record and this run's results.

    Args:
        label: the summary line's area (`compat <label>: ...`) and the cache's name.
        entries: the programs: name (the test id and record key) -> path.
        record: the committed record (JSON) of which programs match and run.
        recorded: the directory of PyTorch's committed outputs.
        knob: prefix of the environment variables that steer the corpus:
            `<knob>=<regex>` runs only the programs whose name matches (and then `slow` ones
            too), `<knob>=all` runs every program, `<knob>_UPDATE=1` writes the record,
            `<knob>_WORKERS=n` runs n programs ahead in parallel (two processes each; under
            pytest-xdist each test runs its own program), `<knob>_TORCH_CACHE=0` reruns
            PyTorch instead of reusing its recorded output.
    """

    def __init__(self, label: str, entries: dict, record: str, recorded: str, knob: str):
        self.label, self.record, self.recorded, self.knob = label, record, recorded, knob
        self.paths = dict(entries)
        self.torch_out = os.path.join(CACHE, f"{label}_torch_outputs")
        pattern = os.environ.get(knob)
        run_all = pattern == "all"
        chosen = []
        for name in sorted(entries):
            if pattern and not run_all and not re.search(pattern, name):
                continue
            if options(self.path_of(name))["slow"] and not pattern:
                continue
            chosen.append(name)
        self.names = chosen
        self.results: dict = {}
        self.recorded_status = json.load(open(record)) if os.path.exists(record) else {}
        self.workers = 1 if _XDIST else int(os.environ.get(f"{knob}_WORKERS", 2))
        self._pool = None
        self._futures: dict = {}

    def path_of(self, name: str) -> str:
        return self.paths[name]

    def _jtorch_output(self, name: str, timeout: float) -> dict:
        path = self.path_of(name)
        return _run(["-m", "jtorch", os.path.basename(path)], timeout, os.path.dirname(path))

    def _torch_output(self, name: str, timeout: float) -> dict:
        """PyTorch's run, reused while the program and the library versions are unchanged."""
        import torch

        script = self.path_of(name)
        text = open(script, "rb").read()
        versions = torch.__version__ + "".join(
            f";{m}={_version(m)}" for m in options(script)["requires"]
        )
        key = hashlib.sha256(text + versions.encode()).hexdigest()[:16]
        filename = f"{name[:-3].replace('/', '_')}-{key}.json"
        path = os.path.join(self.torch_out, filename)
        use_cache = os.environ.get(f"{self.knob}_TORCH_CACHE", "1") != "0"
        for known in (os.path.join(self.recorded, filename), path):
            if use_cache and os.path.exists(known):
                return json.load(open(known))
        res = _run([os.path.basename(script)], timeout, os.path.dirname(script))
        if use_cache and res["rc"] == 0:
            os.makedirs(self.torch_out, exist_ok=True)
            with open(path + ".tmp", "w") as f:
                json.dump(res, f)
            os.replace(path + ".tmp", path)
        return res

    def _both(self, name: str) -> tuple:
        timeout = options(self.path_of(name))["timeout"]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            expected = pool.submit(self._torch_output, name, timeout)
            actual = pool.submit(self._jtorch_output, name, timeout)
            return expected.result(), actual.result()

    def _result(self, name: str) -> tuple:
        """Starts every chosen program on a small pool at the first call; waits for `name`."""
        if _XDIST:  # which tests this process gets is decided as it goes: no look-ahead
            return self._both(name)
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self.workers)
            for s in self.names:
                if not self.missing(s):
                    self._futures[s] = self._pool.submit(self._both, s)
        return self._futures[name].result()

    def missing(self, name: str) -> list:
        """The required modules that the test process cannot import."""
        return [
            m
            for m in options(self.path_of(name))["requires"]
            if importlib.util.find_spec(m) is None
        ]

    def check(self, name: str) -> dict:
        opts = options(self.path_of(name))
        expected, actual = self._result(name)
        if expected["rc"] != 0:
            return {"status": "oracle_error", "detail": _tail(expected["stderr"])}
        if actual["rc"] != 0:
            detail = _tail(actual["stderr"]) or f"exit status {actual['rc']}"
            diff = first_difference(
                actual["stdout"], expected["stdout"], opts["rtol"], opts["atol"]
            )
            return {
                "status": "error",
                "detail": detail,
                "stdout_lines_ok": (diff[0] - 1) if diff else len(actual["stdout"].splitlines()),
            }
        diffs = list(
            itertools.islice(
                differences(actual["stdout"], expected["stdout"], opts["rtol"], opts["atol"]), 3
            )
        )
        if not diffs:
            return {"status": "match"}
        detail = "\n".join(f"line {line}:\n  jtorch:  {a}\n  pytorch: {e}" for line, a, e in diffs)
        return {"status": "mismatch", "detail": detail}

    def run_test(self, name: str) -> None:
        """The body of a corpus test: skip, pass, fail on a regression, or xfail."""
        missing = self.missing(name)
        if missing:
            pytest.skip(f"{name} needs {', '.join(missing)}")
        rec = self.check(name)
        self.results[name] = rec
        status = rec["status"]
        before = self.recorded_status.get(name, {}).get("status")
        if status == "match":
            return
        if status == "oracle_error":
            pytest.fail(f"{name} fails under PyTorch itself:\n{rec['detail']}")
        if before == "match" or (before == "mismatch" and status == "error"):
            pytest.fail(
                f"regression: {name} was recorded as {before}, now {status}:\n{rec['detail']}"
            )
        pytest.xfail(f"{status}: {rec['detail']}")
