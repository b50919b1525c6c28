"""Shared assertions for the unit tests (expected values come from numpy or mathematics)."""

import numpy as np

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


def same(x, expected, dtype=None):
    """`x` equals `expected` exactly, in shape and values (and dtype when given)."""
    expected = np.asarray(expected)
    assert tuple(x.shape) == expected.shape
    np.testing.assert_array_equal(np.asarray(x), expected)
    if dtype is not None:
        assert x.dtype == dtype


def close(actual, expected, rtol=1e-5, atol=1e-6):
    """`actual` is within tolerance of `expected`, compared in float64."""
    np.testing.assert_allclose(
        np.asarray(actual.numpy(), dtype=np.float64),
        np.asarray(expected, dtype=np.float64),
        rtol=rtol,
        atol=atol,
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
