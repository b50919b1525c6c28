"""Compat-suite set-up: the per-area summary lines (XLA options and the compilation cache are
set up by the repository's root `conftest.py`)."""

import json
import os
import sys

_HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.dirname(_HERE))


def _unqueued_accelerator_seeds() -> None:
    """`torch.manual_seed` without queueing seeds for accelerators this process lacks.

    PyTorch's `manual_seed` also seeds CUDA, XPU and MTIA; with none present each of them
    queues the seed for a device initialisation that never comes, and records
    `traceback.format_stack()` with it (for the error message of that initialisation). The
    compat tests seed before every sample, so those three stack dumps were ~20% of the
    OpInfo sweeps' time. Without the device the queued seed is never read, so skipping it
    changes no result: the CPU generator is seeded as before."""
    try:
        import torch
    except ImportError:
        return
    for name in ("cuda", "xpu", "mtia"):
        mod = getattr(torch, name, None)
        if mod is not None and not mod.is_available():
            mod.manual_seed_all = lambda seed: None


_unqueued_accelerator_seeds()


def _write_record(terminalreporter, results, filename, label):
    """Merges this run's results into the committed record `compat/<filename>`."""
    path = os.path.join(_HERE, filename)
    old = json.load(open(path)) if os.path.exists(path) else {}
    old.update(results)
    with open(path, "w") as f:
        json.dump(dict(sorted(old.items())), f, indent=1, sort_keys=True)
        f.write("\n")
    terminalreporter.write_line(f"compat {label}: record written to {path}")


def _opinfo_summary(terminalreporter):
    mod = sys.modules.get("compat.test_opinfo")
    if mod is None or not mod.RESULTS:
        return
    results = mod.RESULTS
    from compat.opinfo import op_db

    n_all = len(op_db) if not os.environ.get("JTORCH_OPINFO") else len(results)
    passed = sum(1 for r in results.values() if r["status"] == "pass")
    samples = sum(r.get("samples", 0) for r in results.values())
    ok = sum(r.get("samples_ok", 0) for r in results.values())
    counts = {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    line = (
        f"compat ops: {passed}/{n_all} pass, {100.0 * ok / max(samples, 1):.1f}% of samples "
        f"({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})"
    )
    terminalreporter.write_line(line)
    if os.environ.get("JTORCH_OPINFO_UPDATE") == "1":
        _write_record(terminalreporter, results, "ops_status.json", "ops")


def _grads_summary(terminalreporter):
    mod = sys.modules.get("compat.test_grads")
    if mod is None or not mod.RESULTS:
        return
    results = mod.RESULTS
    implemented = [r for r in results.values() if r["status"] in ("pass", "fail")]
    passed = sum(1 for r in implemented if r["status"] == "pass")
    named = sum(1 for r in implemented if "name_mismatch" not in r)
    n = len(implemented)
    samples = sum(r.get("samples", 0) for r in implemented)
    ok = sum(r.get("samples_ok", 0) for r in implemented)
    line = (
        f"compat grads: {passed}/{n} pass, {100.0 * ok / max(samples, 1):.1f}% of "
        f"{samples} samples (names {named}/{n})"
    )
    loops = [r["loop"] for r in implemented if "loop" in r]
    if loops:
        l_pass = sum(1 for r in loops if r["status"] == "pass")
        l_samples = sum(r["samples"] for r in loops)
        l_ok = sum(r["samples_ok"] for r in loops)
        fused = sum(r["fused"] for r in loops)
        bitwise = sum(r["bitwise"] for r in loops)
        line += (
            f"; loop form: {l_pass}/{len(loops)} pass, {100.0 * l_ok / max(l_samples, 1):.1f}%"
            f" of {l_samples} samples, {fused} fused backwards, {bitwise} bit-equal to "
            "node by node"
        )
    terminalreporter.write_line(line)
    if os.environ.get("JTORCH_GRADS_UPDATE") == "1":
        _write_record(terminalreporter, results, "grads_status.json", "grads")


def _pass_summary(terminalreporter, module, label):
    """`compat <label>: passed/total pass` for RESULTS mapping case -> "pass" or an error."""
    mod = sys.modules.get(module)
    if mod is None or not mod.RESULTS:
        return
    passed = sum(1 for r in mod.RESULTS.values() if r == "pass")
    terminalreporter.write_line(f"compat {label}: {passed}/{len(mod.RESULTS)} pass")


def _corpus_summary(terminalreporter, module, label, knob):
    """`compat scripts: K/N run, M/N match`; `compat ecosystem: M/N pass (K/N run)`."""
    mod = sys.modules.get(module)
    if mod is None or not mod.RESULTS:
        return
    results = mod.RESULTS
    n = len(results)
    ran = sum(1 for r in results.values() if r["status"] in ("match", "mismatch"))
    matched = sum(1 for r in results.values() if r["status"] == "match")
    if label == "scripts":
        terminalreporter.write_line(f"compat scripts: {ran}/{n} run, {matched}/{n} match")
    else:
        terminalreporter.write_line(f"compat {label}: {matched}/{n} pass ({ran}/{n} run)")
    if os.environ.get(f"{knob}_UPDATE") == "1":
        _write_record(terminalreporter, results, f"{label}_status.json", label)


# Modules whose RESULTS feed the summary lines. Under pytest-xdist (`-n 2`) tests run in
# worker processes: each worker leaves its RESULTS in a file, and the controller merges them
# before printing.
_RESULT_MODULES = (
    "compat.test_opinfo",
    "compat.test_grads",
    "compat.module_parity",
    "compat.test_optim",
    "compat.test_scripts",
    "compat.test_distributions",
    "compat.test_ecosystem",
)


def _results_dir():
    return os.environ.get("JTORCH_COMPAT_RESULTS")


def pytest_configure(config):
    if not hasattr(config, "workerinput") and "JTORCH_COMPAT_RESULTS" not in os.environ:
        import tempfile

        os.environ["JTORCH_COMPAT_RESULTS"] = tempfile.mkdtemp(prefix="jtorch-compat-")


def pytest_sessionfinish(session, exitstatus):
    worker = getattr(session.config, "workerinput", None)
    if worker is None or not _results_dir():
        return
    out = {
        name: sys.modules[name].RESULTS
        for name in _RESULT_MODULES
        if name in sys.modules and getattr(sys.modules[name], "RESULTS", None)
    }
    path = os.path.join(_results_dir(), f"{worker['workerid']}.json")
    with open(path, "w") as f:
        json.dump(out, f)


def _merge_worker_results():
    import glob
    import importlib

    for path in glob.glob(os.path.join(_results_dir() or "/nonexistent", "*.json")):
        for name, results in json.load(open(path)).items():
            importlib.import_module(name).RESULTS.update(results)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not hasattr(config, "workerinput"):
        _merge_worker_results()
    _opinfo_summary(terminalreporter)
    _grads_summary(terminalreporter)
    _pass_summary(terminalreporter, "compat.module_parity", "modules")
    _pass_summary(terminalreporter, "compat.test_optim", "optim")
    _pass_summary(terminalreporter, "compat.test_distributions", "distributions")
    _corpus_summary(terminalreporter, "compat.test_scripts", "scripts", "JTORCH_SCRIPTS")
    _corpus_summary(terminalreporter, "compat.test_ecosystem", "ecosystem", "JTORCH_ECOSYSTEM")
