"""Module parity with PyTorch: same constructor, PyTorch's weights, same inputs.

A case builds a module twice (`make(nn)` with `nn` = `torch.nn` and `jtorch.nn`),
copies PyTorch's `state_dict` into jtorch through numpy, and runs both on the
same inputs in train and eval mode. It compares, with PyTorch as the oracle:

- the state-dict keys and shapes, and `repr(module)`;
- outputs (values, dtypes, shapes; nested tuples are flattened);
- gradients of a fixed random projection of the outputs with respect to the
  floating inputs and to every parameter;
- buffers after the forward (e.g. BatchNorm running statistics).

Test files call `check(case)` per case; `RESULTS` feeds the summary line
`compat modules: N/M pass` (compat/conftest.py).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

import jtorch

torch = None  # imported lazily, so that importing this file never needs torch

RESULTS: dict = {}  # case name -> "pass" or the first mismatch


@dataclasses.dataclass
class Case:
    """One module parity case.

    Args:
      name: unique case name (shown in the summary and test ids).
      make: `make(nn) -> module`, called with `torch.nn` and `jtorch.nn`.
      inputs: numpy arrays (or Python values) passed positionally to forward; float
        arrays become tensors that require grad.
      kwargs: keyword arguments to forward (numpy arrays become tensors, no grad).
      modes: which of "train"/"eval" to run.
      grads: compare input and parameter gradients.
      check_repr: compare repr(module).
      rtol/atol: tolerances for values and gradients.
      int_inputs: positions of inputs that are integer tensors (indices, targets).
    """

    name: str
    make: Callable
    inputs: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    modes: tuple = ("train", "eval")
    grads: bool = True
    check_repr: bool = True
    rtol: float = 1e-4
    atol: float = 1e-5
    forward: Callable | None = None  # forward(module, *inputs, **kwargs); default module(...)


def _torch():
    global torch
    if torch is None:
        import torch as _t

        torch = _t
    return torch


def _to(lib, value, requires_grad):
    if isinstance(value, np.ndarray):
        t = lib.tensor(value)
        if requires_grad and value.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    if isinstance(value, (list, tuple)):
        return type(value)(_to(lib, v, requires_grad) for v in value)
    return value


def _flat(out):
    if isinstance(out, (tuple, list)):
        items = []
        for o in out:
            items.extend(_flat(o))
        return items
    if hasattr(out, "data") and hasattr(out, "batch_sizes"):  # PackedSequence
        return _flat(tuple(out))
    return [out]


def _np(t):
    if t is None:
        return None
    if hasattr(t, "detach"):
        t = t.detach()
    if getattr(t, "dtype", None) is not None and str(t.dtype) == "torch.bfloat16":
        t = t.float()
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def _compare(what, a, b, rtol, atol):
    """PyTorch's `a` vs jtorch's `b`; returns an error string or None."""
    if a is None or b is None:
        if (a is None) != (b is None):
            zero = b if a is None else a
            if zero is not None and not np.any(_np(zero)):
                return None  # None and zeros are the same gradient
            return (
                f"{what}: torch {'None' if a is None else 'tensor'}, jtorch "
                f"{'None' if b is None else 'tensor'}"
            )
        return None
    if str(a.dtype) != str(b.dtype):
        return f"{what}: dtype torch {a.dtype} vs jtorch {b.dtype}"
    if tuple(a.shape) != tuple(b.shape):
        return f"{what}: shape torch {tuple(a.shape)} vs jtorch {tuple(b.shape)}"
    x, y = _np(a), _np(b)
    if x.dtype.kind in "fc":
        if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
            err = np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))
            return f"{what}: max abs diff {err:.3g}"
    elif not np.array_equal(x, y):
        return f"{what}: values differ"
    return None


def _run(case: Case, lib, module, mode, seed_weights):
    module.train(mode == "train")
    inputs = tuple(_to(lib, v, case.grads) for v in case.inputs)
    kwargs = {k: _to(lib, v, False) for k, v in case.kwargs.items()}
    out = case.forward(module, *inputs, **kwargs) if case.forward else module(*inputs, **kwargs)
    outs = _flat(out)
    grads = None
    if case.grads:
        diff = [o for o in outs if hasattr(o, "requires_grad") and o.requires_grad]
        if diff:
            loss = 0
            for i, o in enumerate(diff):
                w = (
                    np.random.default_rng(seed_weights + i)
                    .standard_normal(tuple(o.shape))
                    .astype(_np(o).dtype if _np(o).dtype.kind == "f" else np.float32)
                )
                loss = loss + (o * lib.tensor(w).to(o.dtype)).sum()
            loss.backward()
        grads = (
            [getattr(x, "grad", None) for x in _flat(inputs) if hasattr(x, "requires_grad")],
            {n: p.grad for n, p in module.named_parameters()},
        )
    buffers = {n: b for n, b in module.named_buffers()}
    return outs, grads, buffers


def check(case: Case) -> str | None:
    """Runs one case; returns None on parity, else the first mismatch (also recorded)."""
    t = _torch()
    err = _check(case, t)
    RESULTS[case.name] = "pass" if err is None else err
    return err


def _check(case, t):
    t.manual_seed(0)
    tm = case.make(t.nn)
    jm = case.make(jtorch.nn)
    tsd, jsd = tm.state_dict(), jm.state_dict()
    if list(tsd) != list(jsd):
        return f"state_dict keys: torch {list(tsd)} vs jtorch {list(jsd)}"
    for k in tsd:
        if tuple(tsd[k].shape) != tuple(jsd[k].shape):
            return (
                f"state_dict[{k}] shape: torch {tuple(tsd[k].shape)} vs jtorch "
                f"{tuple(jsd[k].shape)}"
            )
    jm.load_state_dict(
        {k: jtorch.tensor(_np(v)).to(getattr(jtorch, str(v.dtype)[6:])) for k, v in tsd.items()}
    )
    if case.check_repr and repr(tm) != repr(jm):
        return f"repr: torch {repr(tm)!r} vs jtorch {repr(jm)!r}"
    for mode in case.modes:
        t_out, t_grads, t_buf = _run(case, t, tm, mode, 1234)
        j_out, j_grads, j_buf = _run(case, jtorch, jm, mode, 1234)
        if len(t_out) != len(j_out):
            return f"{mode}: {len(t_out)} outputs vs {len(j_out)}"
        for i, (a, b) in enumerate(zip(t_out, j_out)):
            if hasattr(a, "dtype"):
                err = _compare(f"{mode} output {i}", a, b, case.rtol, case.atol)
            else:
                err = None if a == b else f"{mode} output {i}: {a!r} vs {b!r}"
            if err:
                return err
        if t_grads is not None:
            for i, (a, b) in enumerate(zip(t_grads[0], j_grads[0])):
                err = _compare(f"{mode} input grad {i}", a, b, case.rtol, case.atol)
                if err:
                    return err
            for n, a in t_grads[1].items():
                err = _compare(f"{mode} grad of {n}", a, j_grads[1].get(n), case.rtol, case.atol)
                if err:
                    return err
        for n, a in t_buf.items():
            err = _compare(f"{mode} buffer {n}", a, j_buf.get(n), case.rtol, case.atol)
            if err:
                return err
        tm.zero_grad()
        jm.zero_grad()
    return None
