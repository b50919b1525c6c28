"""OpInfo gradient parity: jtorch's backward against PyTorch's, on PyTorch's own samples.

For every OpInfo with `supports_autograd`, each float32 sample (built with
`requires_grad=True`) runs in PyTorch and in jtorch on the same values. The
differentiable outputs are reduced to one scalar, `sum_i sum(out_i * w_i)` with
fixed random weights `w_i` (the same in both), and the gradients of that scalar
with respect to every input that requires grad are compared: dtype and shape
exactly, values within `GRAD_TOL`. A `None` gradient on one side and zeros on the
other count as equal (which inputs an engine reports as unused is not a numeric
difference). As PyTorch's own gradient tests do, the op is called through the
OpInfo's `gradcheck_wrapper` and the outputs go through the sample's
`output_process_fn_grad` (which, e.g., removes the sign ambiguity of
eigenvectors).

The backward node name of the first differentiable output (`grad_fn.name()`)
is compared too and counted apart: a name mismatch does not fail an op.

An op's status: `pass` (every sample's gradients match), `fail` (first failure
recorded; a sample whose forward raises in jtorch fails too, since its gradient
cannot match), `skip` (written reason: not in float32, random, or skipped by the
forward sweep), `missing` (no jtorch callable).

Knobs (environment variables):
  JTORCH_GRADS=<regex>         only OpInfos whose id (name[.variant]) matches
  JTORCH_GRADS_FULL=1          every sample (the recorded run); otherwise the
                               `_CI_SAMPLES` smallest samples per op, which keeps a
                               cold-cache run within minutes (each shape compiles)
  JTORCH_GRADS_MAX_SAMPLES=n   at most n samples per op (the smallest ones)
  JTORCH_GRADS_LOOP=n           how many samples per op also run in loop form (below);
                               every checked sample with JTORCH_GRADS_FULL=1
  JTORCH_GRADS_UPDATE=1        write this run's results into compat/grads_status.json

Loop form: a training loop calls `backward()` on the same graph again and again, and
from the second time on jtorch runs it as one fused, compiled program
(jtorch/autograd/_fused.py), which `autograd.grad` never does. In loop form a sample
builds its graph and calls `loss.backward()` four times: the first node by node for
reference, the next three as a loop runs them (the first of those node by node, the
graph seen once; the others fused, compiled on the calling thread). Each step's `.grad`s are
compared with PyTorch's as above, and the fused steps' with the node-by-node step's bit
for bit. The record's "loop" entry per op counts samples, passing samples, fused steps and
fused steps equal bit for bit; the summary line adds them. (The fused path checks its first
result against the engine's and declines a graph whose bits differ: the record's "declined"
names the first such sample, whose steps then run node by node and are not counted fused.)

The committed record `compat/grads_status.json` makes regressions fail: an op
recorded as passing must still pass. Ops not yet passing xfail with their first
failure. The summary line (`compat grads: K/N pass (names M/N)`) is printed by
conftest.
"""

import json
import os
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import jtorch  # noqa: E402
from compat import opinfo  # noqa: E402
from jtorch._tensor import SparseOperand  # noqa: E402
from jtorch.autograd import _fused  # noqa: E402

RECORD = os.path.join(os.path.dirname(__file__), "grads_status.json")
_recorded = json.load(open(RECORD)) if os.path.exists(RECORD) else {}
_FULL = os.environ.get("JTORCH_GRADS_FULL") == "1"
_CI_SAMPLES = 2
_max_samples = int(os.environ.get("JTORCH_GRADS_MAX_SAMPLES", 0)) or (
    None if _FULL else _CI_SAMPLES
)
_CI_LOOP_SAMPLES = 1
_loop_samples = int(os.environ.get("JTORCH_GRADS_LOOP", -1))
if _loop_samples < 0:
    _loop_samples = 10**9 if _FULL else _CI_LOOP_SAMPLES
LOOP_STEPS = 4  # one node by node for reference, then three as a loop runs them

# Gradients are compared more loosely than forward values (opinfo.TOLERANCES: rtol 1.3e-5,
# atol 1e-5 in float32): a gradient chains a few formulas (each a few ulp apart between ATen
# and XLA, whose transcendental approximations and fused multiply-adds differ) and sums over
# the weighted output, in a different order in each library. rtol 1e-4 absorbs those ~10 ulp;
# the absolute part scales with the largest expected entry, because accumulation error is
# relative to the terms summed, not to the (possibly cancelled) entry itself.
GRAD_RTOL, GRAD_ATOL = 1e-4, 1e-5

# Ops whose PyTorch gradient is not the reference to match, with the reason.
GRAD_SKIPS = {
    "as_strided_scatter": "PyTorch's own backward is wrong here (an expected failure of its "
    "TestBwdGradients.test_fn_grad): it passes the gradient to the input "
    "elements that src overwrites"
}

RESULTS: dict = {}  # op id -> status record, read by the summary hook in conftest


class Mismatch(Exception):
    pass


class ValueMismatch(Mismatch):
    """Same dtype and shape, different values: worth a float64 second opinion."""


# ---------------------------------------------------------------------------
# Inputs


def _grad_leaves(x, found):
    """Torch tensors in a sample (nested in tuples/lists/dicts) that require grad, in order."""
    if isinstance(x, torch.Tensor):
        if (
            x.requires_grad
            and (x.is_floating_point() or x.is_complex())
            and all(x is not f for f in found)
        ):
            found.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _grad_leaves(v, found)
    elif isinstance(x, dict):
        for v in x.values():
            _grad_leaves(v, found)
    return found


def _converter(leaves):
    """`to_jtorch` that turns each grad leaf into one jtorch leaf requiring grad."""
    twins = {}

    def convert(v):
        if isinstance(v, torch.Tensor):
            for i, leaf in enumerate(leaves):
                if v is leaf:
                    if i not in twins:
                        twins[i] = opinfo.to_jtorch(v).requires_grad_(True)
                    return twins[i]
            return opinfo.to_jtorch(v)
        if isinstance(v, list):
            return [convert(x) for x in v]
        if isinstance(v, tuple):
            return tuple(convert(x) for x in v)
        if isinstance(v, dict):
            return {k: convert(x) for k, x in v.items()}
        return opinfo.to_jtorch(v)

    return convert, twins


def _sample_size(s) -> int:
    leaves = []
    for x in (s.input, s.args, s.kwargs):
        _all_tensors(x, leaves)
    return sum(t.numel() for t in leaves)


def _all_tensors(x, out):
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _all_tensors(v, out)
    elif isinstance(x, dict):
        for v in x.values():
            _all_tensors(v, out)


# ---------------------------------------------------------------------------
# Outputs


def _flatten(out, acc):
    if isinstance(out, (list, tuple)):
        for o in out:
            _flatten(o, acc)
    else:
        acc.append(out)
    return acc


def _diff_positions(flat):
    return [
        i
        for i, o in enumerate(flat)
        if isinstance(o, torch.Tensor)
        and o.requires_grad
        and (o.is_floating_point() or o.is_complex())
    ]


def _weights(flat, positions, seed):
    rng = np.random.RandomState(seed)
    ws = {}
    for i in positions:
        shape = tuple(flat[i].shape)
        w = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
        wi = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32) if flat[i].is_complex() else None
        ws[i] = (w, wi)
    return ws


def _loss(lib, flat, ws):
    """sum_i sum(out_i * w_i); complex outputs weigh real and imaginary parts apart.

    A sparse output goes through `to_dense()` first, as PyTorch's gradcheck asks ("Sparse
    output is not supported at gradcheck yet. Please call to_dense(masked_grad=...)"): its
    gradient is then the masked one, on the output's sparsity pattern."""
    total = None
    for i, (w, wi) in ws.items():
        o = flat[i]
        if not isinstance(o, lib.Tensor):
            raise Mismatch(f"out[{i}]: expected a Tensor, got {type(o).__name__}")
        if str(o.layout) != "torch.strided":
            o = o.to_dense()
        if wi is not None:
            term = (o.real * lib.tensor(w)).sum() + (o.imag * lib.tensor(wi)).sum()
        else:
            term = (o * lib.tensor(w, dtype=o.dtype)).sum()
        total = term if total is None else total + term
    return total


def _first_named(flat, positions):
    """(position, name) of the first output in `positions` with a grad_fn, or None."""
    for i in positions:
        fn = getattr(flat[i], "grad_fn", None)
        if fn is not None:
            return i, fn.name()
    return None


# ---------------------------------------------------------------------------
# Comparison


def compare_grad(expected, actual, path) -> None:
    """Raises Mismatch when jtorch's gradient differs from PyTorch's."""
    if expected is None and actual is None:
        return
    if expected is None or actual is None:
        other = actual if expected is None else expected
        if isinstance(other, jtorch.Tensor):
            arr = _host(other)
        elif other._is_zerotensor():
            arr = np.zeros(1)
        else:
            arr = other.detach().to_dense().numpy()
        if np.all(arr == 0):
            return
        side = "torch" if expected is None else "jtorch"
        raise Mismatch(f"{path}: {side} gives no gradient, the other a nonzero one")
    if not isinstance(actual, jtorch.Tensor):
        raise Mismatch(f"{path}: expected a Tensor, got {type(actual).__name__}")
    if str(actual.layout) != str(expected.layout):
        raise Mismatch(f"{path}: layout {actual.layout} != torch {expected.layout}")
    if expected.layout != torch.strided:  # a sparse gradient: its layout, then its values
        expected, actual = expected.to_dense(), actual.to_dense()
    if tuple(expected.shape) != tuple(actual.shape):
        raise Mismatch(f"{path}: shape {tuple(actual.shape)} != torch {tuple(expected.shape)}")
    edt = str(expected.dtype).split(".")[1]
    if edt != actual.dtype._name:
        raise Mismatch(f"{path}: dtype {actual.dtype} != torch {expected.dtype}")
    if expected.numel() == 0:
        return
    if expected._is_zerotensor():  # e.g. sgn's gradient on real input
        expected = torch.zeros(expected.shape, dtype=expected.dtype)
    e = expected.detach().resolve_conj().resolve_neg().numpy()
    a = np.asarray(actual._array)
    finite = np.isfinite(e)
    scale = float(np.max(np.abs(e[finite]))) if finite.any() else 1.0
    atol = GRAD_ATOL * max(1.0, scale)
    if not np.allclose(a, e, rtol=GRAD_RTOL, atol=atol, equal_nan=True):
        with np.errstate(all="ignore"):
            diff = np.nanmax(np.abs(a - e))
        nan_note = ""
        if np.isnan(a).any() != np.isnan(e).any():
            nan_note = " (nan in " + ("jtorch" if np.isnan(a).any() else "torch") + ")"
        raise ValueMismatch(
            f"{path}: values differ (max abs diff {diff:.3g}, scale {scale:.3g}){nan_note}"
        )


# ---------------------------------------------------------------------------
# Running one op


def _rebound_or(fn, default):
    r = opinfo._rebound(fn) if fn is not None else None
    return r if r is not None else default


def _torch_output_mask(op, s):
    """The mask PyTorch's masked gradcheck wrappers apply to the output, or None."""
    name = getattr(op.gradcheck_wrapper, "__name__", "")
    if name == "gradcheck_wrapper_masked_operation" and s.kwargs.get("mask") is not None:
        return torch.masked._output_mask(op.op, s.input, *s.args, **s.kwargs)
    if name == "gradcheck_wrapper_masked_pointwise_operation":
        input_mask, other_mask = s.kwargs.get("input_mask"), s.kwargs.get("other_mask")
        if input_mask is not None and other_mask is not None:
            kwargs = dict(mask=torch.logical_and(input_mask, other_mask), **s.kwargs)
            return torch.masked._input_mask(s.input, *s.args, **kwargs)
    return None


def _jtorch_wrapper(op, s):
    """The OpInfo's gradcheck wrapper for the jtorch call.

    PyTorch's masked wrappers zero the outputs their mask leaves undefined, with masks
    computed by private `torch.masked` helpers; jtorch gets the mask PyTorch computes
    (it depends only on the sample's masks and shapes) and applies it the same way.
    """
    name = getattr(op.gradcheck_wrapper, "__name__", "")
    if name.startswith("gradcheck_wrapper_masked"):
        mask = _torch_output_mask(op, s)

        def masked(fn, *args, **kwargs):
            out = fn(*args, **kwargs)
            if mask is None:
                return out
            return jtorch.where(opinfo.to_jtorch(mask), out, out.new_zeros([]))

        return masked
    return _rebound_or(op.gradcheck_wrapper, op.gradcheck_wrapper)


def _skip_reason(op):
    oid = opinfo.op_id(op)
    if op.name in opinfo.SKIPS or oid in opinfo.SKIP_IDS:
        return opinfo.SKIPS.get(op.name) or opinfo.SKIP_IDS[oid]
    if oid in GRAD_SKIPS:
        return GRAD_SKIPS[oid]
    if not op.supports_autograd:
        return "not differentiable in PyTorch (supports_autograd=False)"
    if opinfo.RANDOM.search(op.name):
        return "random op: PyTorch's bit streams are not reproduced, so gradients differ"
    if torch.float32 not in op.supported_backward_dtypes("cpu"):
        return "PyTorch has no float32 backward for this op"
    return None


def run_grads(op, max_samples=None, loop_samples=0) -> dict:
    """Runs the gradient check over an op's float32 samples; returns a status record.

    The first `loop_samples` samples checked also run in loop form; the record's "loop"
    entry counts them."""
    reason = _skip_reason(op)
    if reason:
        return {"name": op.name, "status": "skip", "reason": reason}
    fn = opinfo.resolve(op)
    if fn is None:
        return {"name": op.name, "status": "missing"}
    try:
        torch.manual_seed(0)
        samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=True))
    except Exception as e:  # noqa: BLE001 — torch's own sample generation failing
        return {
            "name": op.name,
            "status": "skip",
            "reason": f"torch sample generation failed: {e!r}"[:200],
        }
    indexed = list(enumerate(samples))
    if max_samples is not None:
        indexed = sorted(indexed, key=lambda p: (_sample_size(p[1]), p[0]))[:max_samples]
        indexed.sort()
    n_total = n_ok = 0
    first_failure = name_mismatch = None
    loop = {"samples": 0, "samples_ok": 0, "fused": 0, "bitwise": 0}
    for i, s in indexed:
        outcome = _run_sample(op, fn, s, seed=i, loop=loop["samples"] < loop_samples)
        if outcome is None:
            continue
        if outcome[0] is not None and _NO_ATTR.search(outcome[0]):
            # the OpInfo's wrapper calls a function jtorch lacks
            return {"name": op.name, "status": "missing", "reason": outcome[0]}
        n_total += 1
        err, names, lp = outcome
        if lp is not None or (err is not None and loop["samples"] < loop_samples):
            _count_loop(loop, lp, i, err)
        if err is None:
            n_ok += 1
        elif first_failure is None:
            first_failure = f"sample {i}: {err}"[:400]
        if names is not None and names[0] != names[1] and name_mismatch is None:
            name_mismatch = f"torch {names[0]}, jtorch {names[1]}"
    if n_total == 0:
        return {
            "name": op.name,
            "status": "skip",
            "reason": "PyTorch produced no differentiable, deterministic sample",
        }
    rec = {
        "name": op.name,
        "status": "pass" if n_ok == n_total else "fail",
        "samples": n_total,
        "samples_ok": n_ok,
    }
    if first_failure:
        rec["first_failure"] = first_failure
    if name_mismatch:
        rec["name_mismatch"] = name_mismatch
    if loop["samples"]:
        loop["status"] = "pass" if loop["samples_ok"] == loop["samples"] else "fail"
        rec["loop"] = loop
    return rec


def _count_loop(loop: dict, lp, i: int, err) -> None:
    """Adds one sample's loop outcome (None: the single form failed first) to `loop`."""
    loop["samples"] += 1
    if lp is None:
        loop.setdefault("first_failure", f"sample {i}: single form: {err}"[:300])
        return
    if lp["error"] is None:
        loop["samples_ok"] += 1
    else:
        loop.setdefault("first_failure", f"sample {i}: {lp['error']}")
    loop["fused"] += lp["fused"]
    loop["bitwise"] += lp["bitwise"]
    if lp["fused"] > lp["bitwise"]:
        loop.setdefault("fused_differs", f"sample {i}")
    if lp["declined"]:
        loop.setdefault("declined", f"sample {i}: {lp['declined']}")


_NO_ATTR = re.compile(r"^forward: AttributeError: module 'jtorch[.\w]*' has no attribute")


def _as_close(actual, expected32, expected64) -> bool:
    """jtorch's gradient is within tolerance of float64's, or no further than PyTorch's."""
    e64 = expected64.detach().numpy()
    a = np.asarray(actual._array).astype(np.float64)
    with np.errstate(all="ignore"):
        err_torch = np.nanmax(np.abs(expected32.detach().numpy().astype(np.float64) - e64))
        finite = np.isfinite(e64)
        scale = float(np.max(np.abs(e64[finite]))) if finite.any() else 1.0
        if np.allclose(a, e64, rtol=GRAD_RTOL, atol=GRAD_ATOL * max(1.0, scale), equal_nan=True):
            return True
        if not np.array_equal(np.isnan(a), np.isnan(e64)):
            return False
        return bool(np.nanmax(np.abs(a - e64)) <= err_torch)


def _float64_grads(op, s, ws):
    """PyTorch's gradients of the same sample and weights computed in float64, or None."""
    leaves = _grad_leaves([s.input, list(s.args), s.kwargs], [])
    twins = {}

    def up(v):
        if isinstance(v, torch.Tensor):
            if v.dtype != torch.float32:
                return v
            for i, leaf in enumerate(leaves):
                if v is leaf:
                    if i not in twins:
                        twins[i] = v.detach().double().requires_grad_(True)
                    return twins[i]
            return v.detach().double()
        if isinstance(v, (list, tuple)):
            return type(v)(up(x) for x in v) if not hasattr(v, "_fields") else v
        if isinstance(v, dict):
            return {k: up(x) for k, x in v.items()}
        return v

    try:
        args, kwargs = up((s.input,) + tuple(s.args)), up(dict(s.kwargs))
        torch.manual_seed(0)
        raw = op.gradcheck_wrapper(op.op, *args, **kwargs)
        flat = _flatten(s.output_process_fn_grad(raw), [])
        loss = _loss(torch, flat, ws)
        return torch.autograd.grad(loss, [twins[i] for i in range(len(leaves))], allow_unused=True)
    except Exception:  # noqa: BLE001 — no float64 opinion to be had
        return None


def _random_sample(op, s) -> bool:
    """Attention with dropout is random, whatever the op's name; so are the samples whose
    PyTorch result depends on the seed (`opinfo.SEED_DEPENDENT_SAMPLES`)."""
    if s.kwargs.get("dropout_p", 0) > 0:
        return True
    return opinfo.SEED_DEPENDENT_SAMPLES.get(op.name, opinfo.never)(s)


def _check_grads(op, s, ws, expected, actual) -> None:
    """Raises Mismatch unless each of jtorch's gradients matches PyTorch's."""
    for k, (e, a) in enumerate(zip(expected, actual)):
        try:
            compare_grad(e, a, f"grad[{k}]")
        except ValueMismatch:
            # Some samples cost float32 digits whatever the library (logcumsumexp at
            # 1e4, ill-conditioned solves): PyTorch's float64 gradient arbitrates, and
            # jtorch passes when it is as close to it as PyTorch's float32 one is.
            e64 = _float64_grads(op, s, ws)
            if e64 is None or e64[k] is None or not _as_close(a, e, e64[k]):
                raise


def _run_sample(op, fn, s, seed, loop=False):
    """(error or None, (torch name, jtorch name) or None, loop outcome or None); None when
    PyTorch rejects the sample. With `loop`, the loop form runs too (see `_loop_form`)."""
    leaves = _grad_leaves([s.input, list(s.args), s.kwargs], [])
    if not leaves or _random_sample(op, s):
        return None
    process = s.output_process_fn_grad
    j_process = _rebound_or(process, process)
    try:
        torch.manual_seed(0)
        raw = op.gradcheck_wrapper(op.op, s.input, *s.args, **s.kwargs)
        flat = _flatten(process(raw), [])
        positions = _diff_positions(flat)
        if not positions:
            return None
        ws = _weights(flat, positions, seed)
        expected = torch.autograd.grad(_loss(torch, flat, ws), leaves, allow_unused=True)
        # (an output may be an input leaf itself: atleast_2d of a matrix)
        t_named = _first_named(_flatten(raw, []), _diff_positions(_flatten(raw, [])))
    except Exception:  # noqa: BLE001 — a sample PyTorch itself rejects is not counted
        return None
    convert, twins = _converter(leaves)
    names = None
    try:
        args = convert((s.input,) + tuple(s.args))
        kwargs = convert(dict(s.kwargs))
        inputs = [twins[k] for k in range(len(leaves)) if k in twins]
        if len(inputs) != len(leaves):
            raise Mismatch("a grad input did not reach the call")

        def forward():
            """jtorch's call and weighted loss: (raw output, loss)."""
            # Seeded as PyTorch's call is above: an op that draws (pca_lowrank's random
            # projection; PyTorch's `wrapper_set_seed` seeds torch's generator, not jtorch's)
            # then builds the same graph at every step of the loop form.
            jtorch.manual_seed(0)
            try:
                j_raw = _jtorch_wrapper(op, s)(fn, *args, **kwargs)
            except Exception as e:  # noqa: BLE001
                raise Mismatch(f"forward: {type(e).__name__}: {str(e)[:200]}") from None
            j_flat = _flatten(j_process(j_raw), [])
            if len(j_flat) != len(flat):
                raise Mismatch(f"{len(j_flat)} outputs, torch {len(flat)}")
            return j_raw, _loss(jtorch, j_flat, ws)

        j_raw, loss = forward()
        j_flat_raw = _flatten(j_raw, [])
        if t_named is not None:
            pos, t_name = t_named
            j_name = None
            if pos < len(j_flat_raw):
                gfn = getattr(j_flat_raw[pos], "grad_fn", None)
                j_name = gfn.name() if gfn is not None else None
            names = (t_name, j_name)
        if not loss.requires_grad:
            raise Mismatch("no output requires grad")
        actual = jtorch.autograd.grad(loss, inputs, allow_unused=True)
        _check_grads(op, s, ws, expected, actual)
    except Exception as e:  # noqa: BLE001 — any jtorch error is a failed sample
        msg = str(e) if isinstance(e, Mismatch) else f"{type(e).__name__}: {e}"
        return msg[:300], names, None
    lp = (
        _loop_form(lambda: forward()[1], inputs, lambda a: _check_grads(op, s, ws, expected, a))
        if loop
        else None
    )
    return None, names, lp


# ---------------------------------------------------------------------------
# Loop form: a training loop's repeated backward() goes through the fused whole-graph
# backward (jtorch/autograd/_fused.py) from the second identical graph on, a path that
# `autograd.grad` above never takes.


class _FusedCalls:
    """Replaces `_fused.run` for a while: records whether each backward ran fused, or (with
    `off`) keeps every backward on the node-by-node engine."""

    def __init__(self, off=False):
        self.off = off
        self.ran = []

    def __call__(self, *args):
        ran = False if self.off else self.run(*args)
        self.ran.append(ran)
        return ran

    def __enter__(self):
        self.run, self.background, self.after = _fused.run, _fused._BACKGROUND, _fused._AFTER
        _fused.run = self
        # compile on this thread from the second sighting: the second step's backward is
        # fused, not still compiling (a script's loop fuses after `_AFTER` steps)
        _fused._BACKGROUND = False
        _fused._AFTER = 2
        return self

    def __exit__(self, *exc):
        _fused.run, _fused._BACKGROUND, _fused._AFTER = self.run, self.background, self.after


def _host(g):
    """A gradient's values as a numpy array (a sparse gradient's dense form), or None."""
    if g is None:
        return None
    try:
        return np.asarray(g._array)
    except SparseOperand:
        return np.asarray(g.to_dense()._array)


def _loop_form(build_loss, inputs, check) -> dict:
    """`build_loss().backward()` `LOOP_STEPS` times, as a training loop runs it.

    The first backward runs node by node (the fused path kept off, whatever it has seen
    before); the others as they come (fused once the graph has come back).
    Each step's `.grad`s are checked against PyTorch's by `check`; the fused steps'
    gradients are also compared bit for bit with the node-by-node step's.
    Returns {"error": first failure or None, "fused": fused steps, "bitwise": fused steps
    equal to the node-by-node one bit for bit, "declined": why the fused path declined}.
    """
    out = {"error": None, "fused": 0, "bitwise": 0, "declined": None}
    steps = []
    try:
        for k in range(LOOP_STEPS):
            with _FusedCalls(off=k == 0) as calls:
                for t in inputs:
                    t.grad = None
                _fused.last_failure[0] = None
                build_loss().backward()
            grads = [t.grad for t in inputs]
            check(grads)
            steps.append((calls.ran == [True], [_host(g) for g in grads]))
            if _fused.last_failure[0] is not None:
                out["declined"] = _fused.last_failure[0][:200]
    except Exception as e:  # noqa: BLE001 — any jtorch error is a failed sample
        msg = str(e) if isinstance(e, Mismatch) else f"{type(e).__name__}: {e}"
        out["error"] = f"step {len(steps)}: {msg}"[:300]
        return out
    engine = steps[0][1]
    for fused, grads in steps[1:]:
        if fused:
            out["fused"] += 1
            out["bitwise"] += all(
                (a is None and b is None)
                or (a is not None and b is not None and np.array_equal(a, b, equal_nan=True))
                for a, b in zip(grads, engine)
            )
    return out


# ---------------------------------------------------------------------------
# The test


def selected_ops():
    pattern = os.environ.get("JTORCH_GRADS")
    ops = [o for o in opinfo.op_db if o.supports_autograd]
    if pattern:
        ops = [o for o in ops if re.search(pattern, opinfo.op_id(o))]
    return ops


_ops = selected_ops()


@pytest.mark.parametrize("op", _ops, ids=[opinfo.op_id(o) for o in _ops])
def test_opinfo_grads(op):
    oid = opinfo.op_id(op)
    rec = run_grads(op, _max_samples, _loop_samples)
    RESULTS[oid] = rec
    status = rec["status"]
    before = _recorded.get(oid, {})
    loop = rec.get("loop", {})
    if status == "pass" and loop.get("status", "pass") == "pass":
        return
    if before.get("status") == "pass" and status != "pass":
        pytest.fail(f"regression: {oid} passed before, now {status}: {rec.get('first_failure')}")
    if before.get("loop", {}).get("status") == "pass" and loop.get("status") == "fail":
        pytest.fail(
            f"regression: {oid} passed in loop form before, now fails: {loop.get('first_failure')}"
        )
    if status == "skip":
        pytest.skip(rec["reason"])
    if status == "pass":
        pytest.xfail(f"loop form: {loop.get('first_failure', '')}")
    pytest.xfail(f"{status}: {rec.get('first_failure', '')}")
