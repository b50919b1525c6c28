"""Shared assertions for the unit tests (expected values come from numpy or mathematics)."""

import socket

import jax
import numpy as np
import pytest

import jtorch as torch


def t(a, dtype=None):
    """A jtorch tensor from nested data, with torch.tensor's dtype inference."""
    return torch.tensor(np.asarray(a).tolist(), dtype=dtype)


def f32(values, dtype=None):
    """A jtorch tensor from numpy data; float64 data becomes float32 unless `dtype` says."""
    arr = np.asarray(values, dtype=dtype)
    if dtype is None and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return torch.from_numpy(arr)


def from_np(a):
    """A jtorch tensor of `np.array(a)`, numpy's dtype kept (float64 data stays float64)."""
    return torch.from_numpy(np.array(a))


def to_np(x):
    """`x`'s values as a numpy array: a tensor detached from autograd; anything else as numpy
    reads it."""
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def same(x, expected, dtype=None):
    """`x` equals `expected` exactly, in shape and values (and dtype when given)."""
    expected = np.asarray(expected)
    assert tuple(x.shape) == expected.shape
    np.testing.assert_array_equal(to_np(x), expected)
    if dtype is not None:
        assert x.dtype == dtype


def _wide(a):
    a = np.asarray(a)
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def close(actual, expected, rtol=1e-5, atol=1e-6, equal_nan=True):
    """`actual` (a tensor, or numpy data) is within tolerance of `expected`, compared in
    float64 (complex128 for complex values)."""
    np.testing.assert_allclose(
        _wide(to_np(actual)), _wide(expected), rtol=rtol, atol=atol, equal_nan=equal_nan
    )


def numpy_mlp(lib, *sizes, seed=0):
    """`Linear-ReLU-...-Linear` over `sizes`, built with `lib` (torch or jtorch), weights from
    numpy with `seed`: the same numbers under both libraries."""
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        if i:
            layers.append(lib.nn.ReLU())
        layers.append(lib.nn.Linear(a, b))
    net = lib.nn.Sequential(*layers)
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
    return net


def free_port() -> int:
    """A TCP port nobody on this host listens on now (for a rendezvous of one test's own)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# CPU tensors on a host with an accelerator stay uncommitted to their device (jtorch/_device.py
# `commit`: jax then moves a CPU scalar, as an optimizer's `step`, into a program on the
# accelerator), so a training step meets its freshly made state uncommitted first and
# committed after, and traces or compiles once more than on a CPU-only host.
ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS = pytest.mark.xfail(
    jax.default_backend() != "cpu",
    reason="an accelerator host's CPU tensors are uncommitted: one more trace (tests/helpers.py)",
    strict=False,
)
