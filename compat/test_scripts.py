"""The script corpus: unmodified PyTorch programs under `python -m jtorch` vs under PyTorch.

Every `compat/scripts/*.py`, and every `examples/*.py` with a `# compat:` header (the
README's examples are corpus programs too, named `examples/<file>`), runs twice in
subprocesses, from its own directory and with the same environment: `python script.py`
(real PyTorch, the oracle) and `python -m jtorch script.py`. A script *runs* when it exits
with status 0 under jtorch, and *matches* when its stdout equals PyTorch's line by line,
where numbers written with a decimal point or an exponent may differ within the script's
tolerance and everything else (text, integers, shapes, dtypes, reprs, booleans) must be
equal. The tolerance comes from a header comment:

    # compat: rtol=0.25 atol=0.05 [timeout=300]

(default `rtol=1e-4 atol=1e-5`). Scripts make their data with their own formulas or numpy
(jtorch's random streams are not PyTorch's); where a random initialisation reaches the
printed numbers the tolerance is loose, where nothing random does it is tight.

Knobs (environment variables):
  JTORCH_SCRIPTS=<regex>        only scripts whose name matches
  JTORCH_SCRIPTS_UPDATE=1       write this run's results into compat/scripts_status.json
  JTORCH_SCRIPTS_WORKERS=n      scripts run ahead in parallel, two processes each (default 2;
                                under pytest-xdist each test runs its own script, no look-ahead)
  JTORCH_SCRIPTS_TORCH_CACHE=0  rerun PyTorch instead of reusing its recorded output
                                (committed in compat/scripts_torch_outputs/, or kept in
                                .jax_cache/torch_script_outputs, keyed by the script's text
                                and the torch version: an edited script or another torch
                                version reruns PyTorch)

The record `compat/scripts_status.json` makes regressions fail: a script recorded as
matching must still match, one recorded as running must still run. The others xfail with
their first difference. The summary line `compat scripts: K/N run, M/N match` is printed
by conftest.
"""

import concurrent.futures
import glob
import hashlib
import itertools
import json
import math
import os
import queue
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPT_DIR = os.path.join(HERE, "scripts")
RECORD = os.path.join(HERE, "scripts_status.json")
CACHE = os.path.abspath(os.environ.get("JTORCH_TEST_CACHE", os.path.join(ROOT, ".jax_cache")))
TORCH_OUT = os.path.join(CACHE, "torch_script_outputs")
# PyTorch's own runs of the corpus, committed so CI does not rerun the oracle for unchanged
# scripts (copy new files here from TORCH_OUT after adding or editing a script).
TORCH_RECORDED = os.path.join(HERE, "scripts_torch_outputs")
_XDIST = os.environ.get("PYTEST_XDIST_WORKER")
_WORKERS = 1 if _XDIST else int(os.environ.get("JTORCH_SCRIPTS_WORKERS", 2))
# Each jtorch run that may overlap another gets a jax compilation cache directory of its own
# (jax's cache files are not safe to read while another process writes them).
_CACHE_SLOTS = queue.Queue()
for _i in range(_WORKERS):
    _CACHE_SLOTS.put(os.path.join(CACHE, f"{_XDIST or 'main'}-scripts{_i}"))
_recorded = json.load(open(RECORD)) if os.path.exists(RECORD) else {}
_pattern = os.environ.get("JTORCH_SCRIPTS")
_HEADER = re.compile(r"^#\s*compat:(.*)$", re.M)


def _corpus() -> list:
    names = [os.path.basename(p) for p in glob.glob(os.path.join(SCRIPT_DIR, "*.py"))]
    names += ["examples/" + os.path.basename(p)
              for p in glob.glob(os.path.join(ROOT, "examples", "*.py"))
              if _HEADER.search(open(p).read())]
    return sorted(n for n in names if not _pattern or re.search(_pattern, n))


def path_of(name: str) -> str:
    """The file of a corpus entry: `examples/<file>` or a file in compat/scripts."""
    return os.path.join(ROOT, name) if name.startswith("examples/") else \
        os.path.join(SCRIPT_DIR, name)


SCRIPTS = _corpus()

RESULTS: dict = {}  # script -> status record, read by the summary hook in conftest
N_SCRIPTS = len(SCRIPTS)

# A number not glued to a name (`fc1`, `conv2d`); floats have a '.' or an exponent.
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+|nan|inf)(?![\w])")


def options(path: str) -> dict:
    """Reads `# compat: key=value ...` from a script's header."""
    opts = {"rtol": 1e-4, "atol": 1e-5, "timeout": 300.0}
    m = _HEADER.search(open(path).read())
    if m:
        for item in m.group(1).split():
            key, _, value = item.partition("=")
            opts[key] = float(value)
    return opts


def _env(cache_dir: str) -> dict:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p]),
        JAX_PLATFORMS="cpu", PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
        JAX_COMPILATION_CACHE_DIR=cache_dir, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
    return env


def _run(args: list, timeout: float, cache_dir: str = CACHE, cwd: str = SCRIPT_DIR) -> dict:
    try:
        r = subprocess.run([sys.executable] + args, capture_output=True, text=True,
                           env=_env(cache_dir), cwd=cwd, timeout=timeout)
        return {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return {"rc": None, "stdout": out, "stderr": f"timed out after {timeout:.0f} s"}


def _jtorch_output(name: str, timeout: float) -> dict:
    slot = _CACHE_SLOTS.get()
    try:
        path = path_of(name)
        return _run(["-m", "jtorch", os.path.basename(path)], timeout, slot,
                    os.path.dirname(path))
    finally:
        _CACHE_SLOTS.put(slot)


def _torch_output(name: str, timeout: float) -> dict:
    """PyTorch's run of a script, reused while the script and the torch version are unchanged."""
    script = path_of(name)
    text = open(script, "rb").read()
    key = hashlib.sha256(text + torch.__version__.encode()).hexdigest()[:16]
    filename = f"{name[:-3].replace('/', '_')}-{key}.json"
    path = os.path.join(TORCH_OUT, filename)
    use_cache = os.environ.get("JTORCH_SCRIPTS_TORCH_CACHE", "1") != "0"
    for known in (os.path.join(TORCH_RECORDED, filename), path):
        if use_cache and os.path.exists(known):
            return json.load(open(known))
    res = _run([os.path.basename(script)], timeout, CACHE, os.path.dirname(script))
    if use_cache and res["rc"] == 0:
        os.makedirs(TORCH_OUT, exist_ok=True)
        with open(path + ".tmp", "w") as f:
            json.dump(res, f)
        os.replace(path + ".tmp", path)
    return res


def _both(name: str) -> tuple:
    timeout = options(path_of(name))["timeout"]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        expected = pool.submit(_torch_output, name, timeout)
        actual = pool.submit(_jtorch_output, name, timeout)
        return expected.result(), actual.result()


_pool = None
_futures: dict = {}


def _result(name: str) -> tuple:
    """Starts every selected script on a small pool at the first call; waits for `name`."""
    global _pool
    if _XDIST:   # which tests this process gets is decided as it goes: no look-ahead
        return _both(name)
    if _pool is None:
        _pool = concurrent.futures.ThreadPoolExecutor(_WORKERS)
        for s in SCRIPTS:
            _futures[s] = _pool.submit(_both, s)
    return _futures[name].result()


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


def check_script(name: str) -> dict:
    opts = options(path_of(name))
    expected, actual = _result(name)
    if expected["rc"] != 0:
        return {"status": "oracle_error", "detail": _tail(expected["stderr"])}
    if actual["rc"] != 0:
        detail = _tail(actual["stderr"]) or f"exit status {actual['rc']}"
        diff = first_difference(actual["stdout"], expected["stdout"], opts["rtol"], opts["atol"])
        return {"status": "error", "detail": detail,
                "stdout_lines_ok": (diff[0] - 1) if diff else len(actual["stdout"].splitlines())}
    diffs = list(itertools.islice(
        differences(actual["stdout"], expected["stdout"], opts["rtol"], opts["atol"]), 3))
    if not diffs:
        return {"status": "match"}
    detail = "\n".join(f"line {line}:\n  jtorch:  {a}\n  pytorch: {e}" for line, a, e in diffs)
    return {"status": "mismatch", "detail": detail}


@pytest.mark.parametrize("name", SCRIPTS)
def test_script(name):
    rec = check_script(name)
    RESULTS[name] = rec
    status = rec["status"]
    before = _recorded.get(name, {}).get("status")
    if status == "match":
        return
    if status == "oracle_error":
        pytest.fail(f"{name} fails under PyTorch itself:\n{rec['detail']}")
    if before == "match" or (before == "mismatch" and status == "error"):
        pytest.fail(f"regression: {name} was recorded as {before}, now {status}:\n"
                    f"{rec['detail']}")
    pytest.xfail(f"{status}: {rec['detail']}")


def test_line_matching():
    """The comparison itself: tolerance for floats only, exact text and integers."""
    assert line_matches("loss 0.512 step 3", "loss 0.500 step 3", 0.05, 0)
    assert not line_matches("loss 0.512 step 4", "loss 0.500 step 3", 0.05, 0)
    assert not line_matches("loss 0.6", "loss 0.5", 0.05, 0)
    assert not line_matches("acc: False", "acc: True", 1, 1)
    assert line_matches("tensor([-0.0000,  1.0000])", "tensor([ 0.0000,  1.0001])", 1e-3, 1e-5)
    assert not line_matches("torch.Size([3, 4])", "torch.Size([3, 5])", 1, 1)
    assert line_matches("fc1.weight 2.69e-03", "fc1.weight 2.70e-03", 0.01, 0)
    assert not line_matches("a 1", "a 1.0", 1, 1)
    assert first_difference("a\nb\n", "a\nc\nd\n", 0, 0) == (2, "b", "c")
    assert first_difference("a\n", "a\nd\n", 0, 0) == (2, "<missing>", "d")
