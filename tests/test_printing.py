"""Tensor printing (`jtorch/_tensor_str.py`), checked against strings PyTorch 2.13 printed.

Every expected string below was produced once by real PyTorch from the same
values; this file itself needs no torch.
"""

import math

import jax
import ml_dtypes
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp

from jtorch import _device, _dtype, _tensor_str
from jtorch._tensor import Tensor, wrap

nan, inf = math.nan, math.inf


def t(values, dtype=None):
    """A jtorch tensor over `np.array(values, dtype)` (float lists default to float32)."""
    arr = np.array(values, dtype=dtype)
    if dtype is None and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return wrap(jnp.asarray(arr))


@pytest.fixture(autouse=True)
def _reset_print_options():
    yield
    _tensor_str.set_printoptions(profile="default")
    _dtype.set_default_dtype(_dtype.float32)


# (name, tensor factory, what PyTorch printed)
CASES = [
    ("int_valued_floats", lambda: t([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    ("fixed_point", lambda: t([1.5, -2.25, 3.0]), "tensor([ 1.5000, -2.2500,  3.0000])"),
    ("scalar_float", lambda: t(3.0), "tensor(3.)"),
    ("scalar_fraction", lambda: t(-0.125), "tensor(-0.1250)"),
    ("scalar_int", lambda: t(7), "tensor(7)"),
    ("sci_large", lambda: t([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),
    ("sci_small", lambda: t([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    ("sci_ratio", lambda: t([0.5, 600.5]), "tensor([5.0000e-01, 6.0050e+02])"),
    (
        "nonfinite",
        lambda: t([nan, inf, -inf, -0.0, 1.5]),
        "tensor([   nan,    inf,   -inf, -0.0000, 1.5000])",
    ),
    ("nonfinite_int_mode", lambda: t([nan, 2.0, -inf]), "tensor([nan, 2., -inf])"),
    ("negative_zero", lambda: t([-0.0]), "tensor([-0.])"),
    ("int64", lambda: t(np.arange(10)), "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"),
    (
        "int32",
        lambda: t(np.arange(-3, 3), np.int32),
        "tensor([-3, -2, -1,  0,  1,  2], dtype=torch.int32)",
    ),
    ("bool", lambda: t([True, False, True]), "tensor([ True, False,  True])"),
    (
        "complex64",
        lambda: t([1 + 2j, -0.5 - 1.5j, 3j], np.complex64),
        "tensor([ 1.0000+2.0000j, -0.5000-1.5000j,  0.0000+3.0000j])",
    ),
    (
        "complex128",
        lambda: t([1 + 2j, 0.25 - 1e-6j]),
        "tensor([1.0000+2.0000e+00j, 0.2500-1.0000e-06j], dtype=torch.complex128)",
    ),
    ("empty", lambda: t([]), "tensor([])"),
    ("empty_2d", lambda: t(np.zeros((0, 3))), "tensor([], size=(0, 3))"),
    ("empty_int", lambda: t(np.zeros(0, np.int64)), "tensor([], dtype=torch.int64)"),
    (
        "empty_bool_3d",
        lambda: t(np.zeros((2, 0, 1), bool)),
        "tensor([], size=(2, 0, 1), dtype=torch.bool)",
    ),
    (
        "matrix",
        lambda: t(np.arange(-6, 6).reshape(3, 4)),
        ("tensor([[-6, -5, -4, -3],\n        [-2, -1,  0,  1],\n        [ 2,  3,  4,  5]])"),
    ),
    (
        "tensor3d",
        lambda: t((np.arange(12.0) / 4).reshape(2, 2, 3)),
        (
            "tensor([[[0.0000, 0.2500, 0.5000],\n"
            "         [0.7500, 1.0000, 1.2500]],\n"
            "\n"
            "        [[1.5000, 1.7500, 2.0000],\n"
            "         [2.2500, 2.5000, 2.7500]]])"
        ),
    ),
    (
        "wrap",
        lambda: t(np.arange(30.0, dtype=np.float32) / np.float32(7)),
        (
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
            "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
            "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
            "        3.8571, 4.0000, 4.1429])"
        ),
    ),
    (
        "summarize_1d",
        lambda: t(np.arange(2000)),
        "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])",
    ),
    (
        "summarize_2d",
        lambda: t((np.arange(2000.0, dtype=np.float32) / np.float32(3)).reshape(40, 50)),
        (
            "tensor([[0.0000e+00, 3.3333e-01, 6.6667e-01,  ..., 1.5667e+01, 1.6000e+01,\n"
            "         1.6333e+01],\n"
            "        [1.6667e+01, 1.7000e+01, 1.7333e+01,  ..., 3.2333e+01, 3.2667e+01,\n"
            "         3.3000e+01],\n"
            "        [3.3333e+01, 3.3667e+01, 3.4000e+01,  ..., 4.9000e+01, 4.9333e+01,\n"
            "         4.9667e+01],\n"
            "        ...,\n"
            "        [6.1667e+02, 6.1700e+02, 6.1733e+02,  ..., 6.3233e+02, 6.3267e+02,\n"
            "         6.3300e+02],\n"
            "        [6.3333e+02, 6.3367e+02, 6.3400e+02,  ..., 6.4900e+02, 6.4933e+02,\n"
            "         6.4967e+02],\n"
            "        [6.5000e+02, 6.5033e+02, 6.5067e+02,  ..., 6.6567e+02, 6.6600e+02,\n"
            "         6.6633e+02]])"
        ),
    ),
    (
        "float64",
        lambda: t([1.25, 2.5], np.float64),
        "tensor([1.2500, 2.5000], dtype=torch.float64)",
    ),
    (
        "float16",
        lambda: t([1.5, 65504.0, -2.0], np.float16),
        "tensor([ 1.5000e+00,  6.5504e+04, -2.0000e+00], dtype=torch.float16)",
    ),
    (
        "bfloat16",
        lambda: t([1.5, 3.140625, -2.0], ml_dtypes.bfloat16),
        "tensor([ 1.5000,  3.1406, -2.0000], dtype=torch.bfloat16)",
    ),
    (
        "suffix_new_line",
        lambda: t([1.2345] * 8, np.float64),
        (
            "tensor([1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345],\n"
            "       dtype=torch.float64)"
        ),
    ),
]


@pytest.mark.parametrize("name, make, expected", CASES, ids=[c[0] for c in CASES])
def test_repr(name, make, expected):
    tensor = make()
    assert repr(tensor) == expected
    assert str(tensor) == expected


def test_requires_grad():
    x = t([1.0, 2.0])
    x.requires_grad = True
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"


class _Node:
    """Stands in for an autograd node: the repr asks it for its name."""

    def name(self):
        return "AddBackward0"


class MulBackward0:
    """A node without `name()`: its class name is printed."""


def test_grad_fn():
    y = t([2.0, 3.0])
    y.requires_grad = True
    y.grad_fn = _Node()
    assert repr(y) == "tensor([2., 3.], grad_fn=<AddBackward0>)"
    y.grad_fn = MulBackward0()
    assert repr(y) == "tensor([2., 3.], grad_fn=<MulBackward0>)"


class Parameter(Tensor):
    """Named like `nn.Parameter`, which is what the repr looks for."""


def test_parameter():
    p = Tensor._make_subclass(Parameter, t([1.0, 1.0]), True)
    assert repr(p) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"


class _CudaTensor(Tensor):
    @property
    def device(self):
        return _device.device("cuda", 0)


def test_device_suffix_comes_first():
    # PyTorch: device, then dtype, then requires_grad, as in its `_str_intern`.
    x = Tensor._make_subclass(_CudaTensor, t([1.0, 2.0], np.float64), True)
    _CudaTensor.__name__ = "Tensor"  # print as a plain tensor
    try:
        assert (
            repr(x) == "tensor([1., 2.], device='cuda:0', dtype=torch.float64, requires_grad=True)"
        )
    finally:
        _CudaTensor.__name__ = "_CudaTensor"


def test_subclass_prints_its_name():
    x = Tensor._make_subclass(_CudaTensor, t(1.5))
    assert repr(x) == "_CudaTensor(1.5000, device='cuda:0')"


def test_default_dtype_float64():
    _dtype.set_default_dtype(_dtype.float64)
    assert repr(t([1.5, 2.0], np.float64)) == "tensor([1.5000, 2.0000])"
    assert repr(t([1.5, 2.0], np.float32)) == "tensor([1.5000, 2.0000], dtype=torch.float32)"
    assert repr(t([1j], np.complex128)) == "tensor([0.+1.j])"
    assert repr(t([1j], np.complex64)) == "tensor([0.+1.j], dtype=torch.complex64)"
    assert repr(t(np.zeros(0), np.float64)) == "tensor([])"


OPTION_CASES = [
    ("precision_2", {"precision": 2}, lambda: t([1.12345, 2.5]), "tensor([1.12, 2.50])"),
    (
        "sci_off",
        {"sci_mode": False},
        lambda: t([1e10, 1.5]),
        "tensor([10000000000.0000,           1.5000])",
    ),
    ("sci_on", {"sci_mode": True}, lambda: t([1.0, 2.5]), "tensor([1.0000e+00, 2.5000e+00])"),
    ("threshold_5", {"threshold": 5}, lambda: t(np.arange(10)), "tensor([0, 1, 2,  ..., 7, 8, 9])"),
    (
        "edgeitems_1",
        {"threshold": 5, "edgeitems": 1},
        lambda: t(np.arange(24.0).reshape(4, 6)),
        ("tensor([[ 0.,  ...,  5.],\n        ...,\n        [18.,  ..., 23.]])"),
    ),
    (
        "edgeitems_0",
        {"threshold": 5, "edgeitems": 0},
        lambda: t(np.arange(24.0).reshape(4, 6)),
        "tensor([...], size=(4, 6))",
    ),
    (
        "linewidth_30",
        {"linewidth": 30},
        lambda: t(np.arange(20)),
        (
            "tensor([ 0,  1,  2,  3,  4,\n"
            "         5,  6,  7,  8,  9,\n"
            "        10, 11, 12, 13, 14,\n"
            "        15, 16, 17, 18, 19])"
        ),
    ),
    (
        "short",
        {"profile": "short"},
        lambda: t(np.arange(2000.0) / 3),
        "tensor([0.00e+00, 3.33e-01,  ..., 6.66e+02, 6.66e+02])",
    ),
]


@pytest.mark.parametrize(
    "name, options, make, expected", OPTION_CASES, ids=[c[0] for c in OPTION_CASES]
)
def test_print_options(name, options, make, expected):
    _tensor_str.set_printoptions(**options)
    assert repr(make()) == expected


def test_full_profile_prints_everything():
    _tensor_str.set_printoptions(profile="full")
    text = repr(t(np.arange(1001)))
    assert "..." not in text
    assert text.startswith("tensor([   0,    1,    2,    3,    4,    5,    6,    7,    8")
    assert text.endswith(",\n         996,  997,  998,  999, 1000])")
    assert text.count("\n") == 83


def test_get_printoptions():
    assert _tensor_str.get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }
    _tensor_str.set_printoptions(profile="full", precision=6, sci_mode=True)
    assert _tensor_str.get_printoptions() == {
        "precision": 6,
        "threshold": inf,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": True,
    }
    # As in PyTorch, a call without sci_mode puts it back to automatic.
    _tensor_str.set_printoptions(precision=2)
    assert _tensor_str.get_printoptions()["sci_mode"] is None


def test_printoptions_context_restores():
    with _tensor_str.printoptions(precision=1):
        assert repr(t([1.25])) == "tensor([1.2])"
    assert repr(t([1.25])) == "tensor([1.2500])"
