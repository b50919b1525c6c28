"""Running PyTorch's OpInfo database against jtorch (forward parity).

For every OpInfo in `torch.testing._internal.common_methods_invocations.op_db`,
each sample input is converted to jtorch through numpy, run through the
jtorch op, and compared with PyTorch's output in shape, dtype and values.

An op's status is one of: `pass` (every sample matches), `fail` (the first
mismatch is recorded), `missing` (jtorch has no such function/method),
`skip` (a written reason, in `SKIPS`). Random ops are compared in shape and
dtype only (PyTorch's bit streams are not reproduced, by design).
"""

from __future__ import annotations

import math
import os
import re
import types
import warnings

import numpy as np
import torch

import jtorch
from jtorch._ops import _registry
from jtorch._tensor import wrap

warnings.filterwarnings("ignore")

from torch.testing._internal import common_utils as _common_utils  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.testing._internal.opinfo import core as _opinfo_core  # noqa: E402


def _extract_test_fn():
    """PyTorch's `extract_test_fn` without `inspect.stack()`.

    `sample_inputs` asks, twice per call, for the unittest method running it (to hang
    sample-level skips and tracking on it). PyTorch finds it with `inspect.stack()`, which
    reads every frame's source file and scans `sys.modules`: ~0.35 s a call here, more than
    the op's own test for most ops. Walking the frames answers the same (these tests are
    pytest functions, so it finds no TestCase and returns None, as PyTorch's does)."""
    import sys
    import unittest

    frame = sys._getframe(1)
    while frame is not None:
        self_val = frame.f_locals.get("self")
        if isinstance(self_val, unittest.TestCase):
            *_, cls_name, test_name = self_val.id().rsplit(".", 2)
            if cls_name == type(self_val).__name__ and test_name.startswith("test"):
                return getattr(self_val, test_name).__func__
        frame = frame.f_back
    return None


_common_utils.extract_test_fn = _extract_test_fn
_opinfo_core.extract_test_fn = _extract_test_fn

# Ops that cannot or should not run on jtorch, with the reason.
SKIPS = {
    "jiterator_2inputs_2outputs": "CUDA jiterator: CUDA-only PyTorch codegen, not an API op",
    "jiterator_4inputs_with_extra_args": "CUDA jiterator: CUDA-only PyTorch codegen",
    "jiterator_binary": "CUDA jiterator: CUDA-only PyTorch codegen",
    "jiterator_binary_return_by_ref": "CUDA jiterator: CUDA-only PyTorch codegen",
    "jiterator_unary": "CUDA jiterator: CUDA-only PyTorch codegen",
    "torch._scaled_mm": "float8 scaled matmul: CUDA-only private kernel",
    "torch._scaled_mm_v2": "float8 scaled matmul: CUDA-only private kernel",
    "torch.ops.aten._efficient_attention_forward": "CUDA-only private attention kernel",
    "torch.ops.aten._flash_attention_forward": "CUDA-only private attention kernel",
    "chalf": "complex32 has no jax/XLA dtype",
    "slice": "exists only as torch.ops.aten.slice (an ATen operator, not a torch API)",
    "max_pool2d_with_indices_backward": "exists only as an ATen backward operator "
    "(torch.ops.aten), not a torch API",
}

# Skips of one OpInfo variant (by op id), with the reason.
SKIP_IDS = {
    "as_strided.partial_views": "its samples are views into a larger storage; the numpy "
    "conversion of inputs cannot reproduce another tensor's storage"
}

RANDOM = re.compile(
    r"(rand|bernoulli|normal(?!ize)|multinomial|uniform|exponential|geometric|"
    r"cauchy|dropout|rrelu|fractional_max_pool|^empty|new_empty|empty_like|"
    r"empty_strided|empty_permuted)"
)

# Ops whose outputs are defined only up to the signs (phases) of singular-vector pairs and
# whose random sketch differs from PyTorch's: both outputs pass through the sample's
# `output_process_fn_grad` (PyTorch's own sign-invariant view, here `(U @ V^H, S)`) first.
SIGN_INVARIANT = {
    "svd_lowrank": "randomized, and U, V are unique only up to column signs",
    "pca_lowrank": "randomized, and U, V are unique only up to column signs",
}

# Samples whose PyTorch result itself depends on the random seed: compared in shape and
# dtype only, as random ops are. svd_lowrank with M: A - M has full rank, so a rank-q sketch
# only approximates it, and PyTorch's own U V^H moves by up to 0.7 from seed to seed.
# multi_head_attention_forward in training mode drops attention weights with its positional
# dropout_p (args[9]).
SEED_DEPENDENT_SAMPLES = {
    "svd_lowrank": lambda s: s.kwargs.get("M") is not None,
    "nn.functional.multi_head_attention_forward": lambda s: (
        bool(s.kwargs.get("training", True)) and len(s.args) > 9 and s.args[9] > 0
    ),
}


def never(sample) -> bool:
    return False


# Ops compared with a tolerance relative to the largest entry of PyTorch's result, not
# entrywise: their float32 results carry rounding error proportional to the whole matrix.
NORM_RELATIVE = {
    # float32 exp of a matrix of 1-norm ~27 has entries up to ~1e5; PyTorch's and jax's
    # Pade/Taylor scaling-and-squaring each differ from the float64 result by ~5e-7 of the
    # largest entry (0.05 absolute), so they differ from each other by that much too.
    "matrix_exp": "float32 scaling-and-squaring error scales with the largest entry"
}

TOLERANCES = {  # (rtol, atol) per torch dtype name
    "float64": (1e-7, 1e-7),
    "complex128": (1e-7, 1e-7),
    "float32": (1.3e-5, 1e-5),
    "complex64": (1.3e-5, 1e-5),
    "float16": (1e-2, 1e-2),
    "bfloat16": (1.6e-2, 1e-2),
}


def op_id(op) -> str:
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def _lookup_dotted(name: str):
    obj = jtorch
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is not None:
        return obj
    ns, _, short = name.rpartition(".")
    return _registry.NAMESPACES.get(ns, {}).get(short)


_PROPERTIES = {"T", "H", "mT", "mH", "real", "imag"}


def _rebound(fn):
    """An OpInfo wrapper (a lambda or def in torch.testing) with `torch` meaning jtorch.

    Many OpInfos wrap the op (`lambda x, n: torch.polygamma(n, x)`,
    `lambda t, *a: t.cauchy_(*a)`); calling the same wrapper with jtorch as its
    `torch` tests exactly what PyTorch's own sample was meant to exercise.
    """
    if not (
        isinstance(fn, types.FunctionType) and (fn.__module__ or "").startswith("torch.testing")
    ):
        return None
    g = dict(fn.__globals__)
    g["torch"] = jtorch
    if "F" in g:
        g["F"] = jtorch.nn.functional
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def resolve(op):
    """The jtorch callable for an OpInfo, or None when jtorch lacks it."""
    name = op.name
    rebound = _rebound(op.op)
    if rebound is not None:
        return rebound
    if name in _PROPERTIES:
        return lambda x: getattr(x, name)
    if name.startswith("__"):
        meth = getattr(jtorch.Tensor, name, None)
        return None if meth is None else (lambda x, *a, **k: getattr(x, name)(*a, **k))
    if name.startswith("torch.ops.aten."):
        # an aten operator (`torch.ops.aten._safe_softmax.default`): jtorch publishes the
        # private ops PyTorch's OpInfos test as `jtorch.<name>`, all overloads in one
        name = name[len("torch.ops.aten.") :].split(".")[0]
    fn = _lookup_dotted(name)
    if fn is not None and callable(fn):
        return fn
    if op.method_variant is not None and hasattr(jtorch.Tensor, name):
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    return None


# ---------------------------------------------------------------------------
# Conversion


def to_jtorch(v):
    if isinstance(v, torch.Tensor) and v.layout == torch.sparse_coo:
        return jtorch.sparse_coo_tensor(
            to_jtorch(v._indices()),
            to_jtorch(v._values()),
            tuple(v.shape),
            is_coalesced=v.is_coalesced(),
        )
    if isinstance(v, torch.Tensor) and v.layout == torch.sparse_csr:
        return jtorch.sparse_csr_tensor(
            to_jtorch(v.crow_indices()),
            to_jtorch(v.col_indices()),
            to_jtorch(v.values()),
            tuple(v.shape),
        )
    if isinstance(v, torch.Tensor):
        t = v.detach().cpu().resolve_conj().resolve_neg()
        if t.dtype == torch.bfloat16:
            return wrap(jtorch.tensor(t.float().numpy())._array.astype(jtorch.bfloat16.np))
        return wrap(jtorch.from_numpy(t.numpy())._array)
    if isinstance(v, torch.dtype):
        return getattr(jtorch, str(v).split(".")[1])
    if isinstance(v, torch.device):
        return jtorch.device(str(v))
    if isinstance(v, torch.Size):
        return tuple(v)
    if isinstance(v, torch.memory_format):
        return getattr(jtorch, str(v).split(".")[1], None)
    if isinstance(v, list):
        return [to_jtorch(x) for x in v]
    if isinstance(v, tuple):
        return tuple(to_jtorch(x) for x in v)
    if isinstance(v, dict):
        return {k: to_jtorch(x) for k, x in v.items()}
    if isinstance(v, torch.nn.Module):
        return _module_twin(v)
    if callable(v) and (getattr(v, "__module__", None) or "").startswith("torch"):
        # a torch function passed as an argument (e.g. distance_function=): its jtorch twin
        name = getattr(v, "__name__", "")
        for ns in (jtorch.nn.functional, jtorch):
            twin = getattr(ns, name, None)
            if twin is not None:
                return twin
    return v


def _module_twin(module):
    """The jtorch twin of a parameter-free torch module passed as an argument (e.g.
    `distance_function=nn.PairwiseDistance()`): same class name, same public attributes."""
    cls = getattr(jtorch.nn, type(module).__name__, None)
    if cls is None or any(True for _ in module.parameters()) or any(True for _ in module.buffers()):
        raise TypeError(f"no jtorch twin for the torch module {module!r} in a sample")
    twin = cls.__new__(cls)
    jtorch.nn.Module.__init__(twin)
    for k, x in vars(module).items():
        if not k.startswith("_") and k != "training":
            setattr(twin, k, to_jtorch(x))
    return twin.train(module.training)


class Mismatch(Exception):
    pass


# Ops whose index output PyTorch leaves unspecified among equal values: `sort(stable=False)`
# (PyTorch's CPU introsort reorders ties on long inputs), `topk`, `kthvalue` and `mode`
# (partial selection). jtorch breaks ties stably; where PyTorch's indices differ, jtorch's
# must still be a valid answer: the same values, and indices that select them.
# Each entry binds the sample's arguments to (dim, keepdim).
TIE_ORDER = {
    "sort": lambda dim=-1, descending=False, stable=False: (dim, True),
    "argsort": lambda dim=-1, descending=False, stable=False: (dim, True),
    "topk": lambda k, dim=-1, largest=True, sorted=True: (dim, True),
    "kthvalue": lambda k, dim=-1, keepdim=False: (dim, keepdim),
    "mode": lambda dim=-1, keepdim=False: (dim, keepdim),
}


def check_tie_order(name, sample, expected, actual) -> None:
    """Raises Mismatch unless jtorch's indices are a valid answer (see `TIE_ORDER`)."""
    dim, keepdim = TIE_ORDER[name](*sample.args, **sample.kwargs)
    x = sample.input.detach().cpu().numpy()
    x = x.reshape(1) if x.ndim == 0 else x
    dim = dim % x.ndim
    if name == "argsort":
        e_idx, a_idx, values = expected, actual, None
    else:
        compare(expected[0], actual[0], False, "out[0]")
        e_idx, a_idx, values = expected[1], actual[1], expected[0]
    compare(e_idx, a_idx, True, "indices")  # shape and dtype
    idx = np.asarray(a_idx._array).astype(np.int64)
    idx = idx.reshape(1) if idx.ndim == 0 and x.ndim == 1 else idx
    if not keepdim and idx.ndim < x.ndim:
        idx = np.expand_dims(idx, dim)
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[dim]):
        raise Mismatch("indices: out of range")
    picked = np.take_along_axis(x, idx, axis=dim)
    if values is None:  # argsort: the values jtorch's order selects are PyTorch's
        e = np.asarray(e_idx.numpy()).reshape(idx.shape)
        want = np.take_along_axis(x, e, axis=dim)
    else:
        want = values.detach().cpu().numpy().reshape(picked.shape)
    if not np.array_equal(picked, want, equal_nan=picked.dtype.kind == "f"):
        raise Mismatch("indices: do not select the values")
    if name in ("sort", "argsort", "topk"):
        distinct = np.sort(idx, axis=dim)
        if idx.shape[dim] > 1 and (np.diff(distinct, axis=dim) == 0).any():
            raise Mismatch("indices: repeated along the sorted dim")


def compare(expected, actual, random: bool, path: str = "out", norm_relative: bool = False) -> None:
    """Raises Mismatch when jtorch's `actual` differs from PyTorch's `expected`.

    `norm_relative` scales the absolute tolerance by the largest entry of `expected`.
    """
    if isinstance(expected, torch.Tensor) and expected.layout != torch.strided:
        # a sparse result: the same layout, pattern and coalesced flag, then the parts
        if str(actual.layout) != str(expected.layout):
            raise Mismatch(f"{path}: layout {actual.layout} != torch {expected.layout}")
        if expected.layout == torch.sparse_csr:
            parts = [
                (expected.crow_indices(), actual.crow_indices()),
                (expected.col_indices(), actual.col_indices()),
                (expected.values(), actual.values()),
            ]
        else:
            if expected.is_coalesced() != actual.is_coalesced():
                raise Mismatch(
                    f"{path}: coalesced {actual.is_coalesced()} != torch {expected.is_coalesced()}"
                )
            parts = [
                (expected._indices(), actual._indices()),
                (expected._values(), actual._values()),
            ]
        if tuple(expected.shape) != tuple(actual.shape):
            raise Mismatch(f"{path}: shape {tuple(actual.shape)} != torch {tuple(expected.shape)}")
        for k, (e, a) in enumerate(parts):
            compare(e, a, random, f"{path}.part{k}", norm_relative)
        return
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, jtorch.Tensor):
            raise Mismatch(f"{path}: expected a Tensor, got {type(actual).__name__}")
        if tuple(expected.shape) != tuple(actual.shape):
            raise Mismatch(f"{path}: shape {tuple(actual.shape)} != torch {tuple(expected.shape)}")
        edt = str(expected.dtype).split(".")[1]
        if edt != actual.dtype._name:
            raise Mismatch(f"{path}: dtype {actual.dtype} != torch {expected.dtype}")
        if random or expected.numel() == 0:
            return
        e = expected.detach().cpu().resolve_conj().resolve_neg()
        e = (e.float() if e.dtype == torch.bfloat16 else e).numpy()
        a = np.asarray(actual._array)
        if a.dtype == jtorch.bfloat16.np:
            a = a.astype(np.float32)
        if e.dtype.kind in "fc":
            rtol, atol = TOLERANCES.get(edt, (1e-5, 1e-5))
            if norm_relative and e.size:
                atol = max(atol, rtol * float(np.nanmax(np.abs(e))))
            if not np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
                with np.errstate(all="ignore"):
                    diff = np.nanmax(np.abs(a - e)) if a.size else 0
                raise Mismatch(f"{path}: values differ (max abs diff {diff:.3g})")
        elif not np.array_equal(a, e):
            raise Mismatch(f"{path}: values differ")
        return
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise Mismatch(
                f"{path}: expected a sequence of {len(expected)}, got {type(actual).__name__}"
            )
        for i, (e, a) in enumerate(zip(expected, actual)):
            compare(e, a, random, f"{path}[{i}]", norm_relative)
        return
    if isinstance(expected, torch.dtype):
        if str(expected) != repr(actual):
            raise Mismatch(f"{path}: {actual!r} != {expected}")
        return
    if isinstance(expected, (bool, int, float, complex)):
        if isinstance(actual, jtorch.Tensor):
            raise Mismatch(f"{path}: expected a Python scalar, got a Tensor")
        if random:
            return
        if isinstance(expected, float) and math.isnan(expected):
            if not (isinstance(actual, float) and math.isnan(actual)):
                raise Mismatch(f"{path}: {actual} != nan")
        elif not np.isclose(actual, expected, rtol=1e-5, atol=1e-6):
            raise Mismatch(f"{path}: {actual} != {expected}")
        return
    if expected is None and actual is not None:
        raise Mismatch(f"{path}: expected None")


def _tensors(x, out):
    if isinstance(x, (torch.Tensor, jtorch.Tensor)):
        out.append(x)
    elif isinstance(x, (tuple, list)):
        for v in x:
            _tensors(v, out)
    return out


def as_close_as_torch(op, s, expected, actual) -> bool:
    """Whether jtorch's float32 result is about as close to PyTorch's float64 result as
    PyTorch's own float32 one is (within twice its error: two libraries summing in different
    orders are each a few ulp off), or within 4 float32 ulps of the result's largest value (a
    recurrence rounded with and without fused multiply-adds, as XLA's code at different
    optimization levels does, lands a few ulps of its scale apart). For samples that cost
    float32 digits in any library
    (softmax of logits in the thousands, long accumulations), float64 arbitrates, as in the
    gradient sweep."""

    def up(v):
        if isinstance(v, torch.Tensor):
            return v.double() if v.dtype == torch.float32 else v
        if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
            return type(v)(up(x) for x in v)
        if isinstance(v, dict):
            return {k: up(x) for k, x in v.items()}
        return v

    e32 = _tensors(expected, [])
    if not any(t.dtype == torch.float32 for t in e32):
        return False
    try:
        torch.manual_seed(0)
        e64 = _tensors(op(up(s.input), *up(tuple(s.args)), **up(dict(s.kwargs))), [])
    except Exception:  # noqa: BLE001 — no float64 opinion to be had
        return False
    a = _tensors(actual, [])
    if not len(e32) == len(e64) == len(a):
        return False
    rtol, atol = TOLERANCES["float32"]
    for t32, t64, j in zip(e32, e64, a):
        if t32.dtype != torch.float32 or t64.dtype != torch.float64:
            continue
        e, f = t64.detach().numpy(), t32.detach().numpy().astype(np.float64)
        aj = np.asarray(j._array).astype(np.float64)
        if aj.shape != e.shape:
            return False
        if np.allclose(aj, f, rtol=rtol, atol=atol, equal_nan=True):
            continue
        with np.errstate(all="ignore"):
            err_torch = np.nanmax(np.abs(f - e), initial=0.0)
            err_jt = np.nanmax(np.abs(aj - e), initial=0.0)
            scale = np.nanmax(np.abs(e), initial=1.0)
        # Only where PyTorch's float32 result is itself right to 1e-3 of its scale: a
        # float32 / float64 disagreement beyond that (eigenvector signs) is no arbiter.
        if err_torch > 1e-3 * scale:
            return False
        if not np.array_equal(np.isnan(e), np.isnan(aj)):
            return False
        if not (err_jt <= 2 * err_torch or err_jt <= 4 * np.finfo(np.float32).eps * scale):
            return False
    return True


# ---------------------------------------------------------------------------
# Running one op


_FALLBACK_DTYPES = (
    torch.int64,
    torch.bool,
    torch.float64,
    torch.int32,
    torch.uint8,
    torch.complex64,
)


def dtypes_for(op, wanted):
    """The wanted dtypes the op supports; else the first it supports (integer-only ops)."""
    supported = op.supported_dtypes("cpu")
    chosen = [d for d in wanted if d in supported]
    if not chosen:
        chosen = [d for d in _FALLBACK_DTYPES if d in supported][:1]
    return chosen


def run_op(op, dtypes=(torch.float32,), max_samples: int | None = None) -> dict:
    """Runs every sample of `op` in the given dtypes; returns a status record."""
    return {"name": op.name, **_run_op(op, dtypes, max_samples)}


def _run_op(op, dtypes, max_samples):
    oid = op_id(op)
    if op.name in SKIPS or oid in SKIP_IDS:
        return {"status": "skip", "reason": SKIPS.get(op.name) or SKIP_IDS[oid]}
    fn = resolve(op)
    if fn is None:
        return {"status": "missing"}
    random = bool(RANDOM.search(op.name))
    n_ok = n_total = 0
    first_failure = None
    for dtype in dtypes_for(op, dtypes):
        try:
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
        except Exception as e:  # noqa: BLE001 — torch's own sample generation failing
            return {"status": "skip", "reason": f"torch sample generation failed: {e!r}"[:200]}
        if max_samples is not None:
            samples = samples[:max_samples]
        for i, s in enumerate(samples):
            torch.manual_seed(0)
            try:
                expected = op(s.input, *s.args, **s.kwargs)
            except Exception:  # noqa: BLE001 — a sample PyTorch itself rejects is not counted
                continue
            n_total += 1
            try:
                args = to_jtorch((s.input,) + tuple(s.args))
                kwargs = to_jtorch(dict(s.kwargs))
                actual = fn(*args, **kwargs)
                if op.name in SIGN_INVARIANT:
                    expected = s.output_process_fn_grad(expected)
                    actual = s.output_process_fn_grad(actual)
                # attention with dropout is random per sample, whatever the op's name
                sample_random = (
                    random
                    or s.kwargs.get("dropout_p", 0) > 0
                    or SEED_DEPENDENT_SAMPLES.get(op.name, never)(s)
                )
                try:
                    compare(expected, actual, sample_random, norm_relative=op.name in NORM_RELATIVE)
                except Mismatch:
                    if op.name in TIE_ORDER:
                        check_tie_order(op.name, s, expected, actual)
                    elif sample_random or not as_close_as_torch(op, s, expected, actual):
                        raise
                n_ok += 1
            except Exception as e:  # noqa: BLE001 — any jtorch error is a failed sample
                if first_failure is None:
                    first_failure = (
                        f"{str(dtype).split('.')[1]} sample {i}: {type(e).__name__}: {str(e)[:300]}"
                    )
    if n_total == 0:
        return {"status": "skip", "reason": "PyTorch produced no runnable sample"}
    status = "pass" if n_ok == n_total else "fail"
    rec = {"status": status, "samples": n_total, "samples_ok": n_ok}
    if first_failure:
        rec["first_failure"] = first_failure
    return rec


def selected_ops():
    pattern = os.environ.get("JTORCH_OPINFO")
    ops = list(op_db)
    if pattern:
        ops = [o for o in ops if re.search(pattern, op_id(o))]
    return ops
