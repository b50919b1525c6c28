"""Activations, softmax and dropout (`jtorch/_ops/nn/activation.py`); expected values from numpy."""

import math
import warnings

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F

from .helpers import close, same
from .helpers import f32 as t

X = np.array([-3.0, -1.5, -0.5, 0.0, 0.25, 1.0, 2.5, 30.0], dtype=np.float32)


def erf(v):
    return np.vectorize(math.erf)(v)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def softplus(v, beta=1.0, threshold=20.0):
    return np.where(v * beta > threshold, v, np.log1p(np.exp(np.minimum(v * beta, 50))) / beta)


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

EXPECTED = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "hardtanh": lambda x: np.clip(x, -1, 1),
    "leaky_relu": lambda x: np.where(x > 0, x, 0.01 * x),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "celu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "selu": lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x)),
    "gelu": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
    "silu": lambda x: x * sigmoid(x),
    "mish": lambda x: x * np.tanh(softplus(x)),
    "softplus": softplus,
    "logsigmoid": lambda x: np.log(sigmoid(x)),
    "hardsigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hardswish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hardshrink": lambda x: np.where(np.abs(x) > 0.5, x, 0),
    "softshrink": lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0)),
    "softsign": lambda x: x / (1 + np.abs(x)),
    "tanhshrink": lambda x: x - np.tanh(x),
    "rrelu": lambda x: np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_values_float32(name):
    out = getattr(F, name)(t(X))
    assert out.dtype == torch.float32
    close(out, EXPECTED[name](X.astype(np.float64)), rtol=2e-6, atol=2e-6)


def test_parameters():
    x64 = X.astype(np.float64)
    close(
        F.gelu(t(X), approximate="tanh"),
        0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3))),
    )
    close(F.softplus(t(X), beta=2.0, threshold=1.0), softplus(x64, 2.0, 1.0))
    close(F.elu(t(X), alpha=0.5), np.where(x64 > 0, x64, 0.5 * np.expm1(x64)))
    close(F.celu(t(X), alpha=2.0), np.where(x64 > 0, x64, 2 * np.expm1(x64 / 2)))
    close(F.leaky_relu(t(X), 0.2), np.where(x64 > 0, x64, 0.2 * x64))
    close(F.hardtanh(t(X), -2.0, 0.5), np.clip(x64, -2, 0.5))
    close(F.threshold(t(X), 0.25, -7.0), np.where(x64 > 0.25, x64, -7))
    close(F.hardshrink(t(X), 1.0), np.where(np.abs(x64) > 1, x64, 0))
    close(F.rrelu(t(X), 0.1, 0.3), np.where(x64 >= 0, x64, 0.2 * x64))


def test_glu_and_prelu():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 4 - 1
    close(F.glu(t(a)), a[:, :2] * sigmoid(a[:, 2:]))
    b = a.reshape(2, 6)
    close(F.glu(t(b), 0), b[:1] * sigmoid(b[1:]))
    w = np.array([0.5, 0.1, 2.0], dtype=np.float32)
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(2, 3, 2)
    close(F.prelu(t(x), t(w)), np.where(x > 0, x, w[None, :, None] * x))
    close(torch.prelu(t(x), t([0.25])), np.where(x > 0, x, 0.25 * x))
    close(t(x).prelu(t([0.25])), np.where(x > 0, x, 0.25 * x))


def test_integer_and_bool_inputs():
    i = t([-2, 0, 3, 9], np.int64)
    assert F.relu(i).dtype == torch.int64 and F.relu(i).tolist() == [0, 0, 3, 9]
    assert F.relu6(i).tolist() == [0, 0, 3, 6]
    assert F.hardtanh(i).tolist() == [-1, 0, 1, 1]
    assert F.threshold(i, 1, 5).tolist() == [5, 5, 3, 9]
    assert F.softsign(i).dtype == torch.float32
    with pytest.raises(NotImplementedError, match="\"elu_cpu\" not implemented for 'Long'"):
        F.elu(i)
    with pytest.raises(NotImplementedError, match="GeluKernelImpl"):
        F.gelu(i)
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        F.relu(t([True, False]))


def test_half_precision_keeps_dtype():
    h = t(X).half()
    out = F.gelu(h)
    assert out.dtype == torch.float16
    close(out, EXPECTED["gelu"](X.astype(np.float64)), rtol=2e-3, atol=2e-3)
    assert F.silu(t(X).to(torch.bfloat16)).dtype == torch.bfloat16


def test_inplace_forms():
    x = t(X)
    y = F.relu(x, inplace=True)
    assert y is x
    close(x, np.maximum(X, 0))
    x = t(X)
    assert torch.relu_(x) is x and x.tolist() == np.maximum(X, 0).tolist()
    x = t(X)
    assert x.relu_() is x and x.min().item() == 0
    for fn, ref in (
        (F.elu_, EXPECTED["elu"]),
        (F.selu_, EXPECTED["selu"]),
        (torch.selu_, EXPECTED["selu"]),
        (torch.celu_, EXPECTED["celu"]),
        (F.leaky_relu_, EXPECTED["leaky_relu"]),
        (F.hardtanh_, EXPECTED["hardtanh"]),
        (F.rrelu_, EXPECTED["rrelu"]),
    ):
        x = t(X)
        assert fn(x) is x
        close(x, ref(X.astype(np.float64)))
    x = t(X)
    torch.threshold_(x, 0.0, 9.0)
    close(x, np.where(X > 0, X, 9))
    for name in ("silu", "mish", "hardswish", "hardsigmoid", "elu", "leaky_relu"):
        x = t(X)
        out = getattr(F, name)(x, inplace=True)
        assert out is x
        close(x, EXPECTED[name](X.astype(np.float64)), rtol=2e-6, atol=2e-6)
    # An integer tensor cannot hold a float result: error, tensor unchanged.
    i = t([-1, 2], np.int64)
    with pytest.raises(NotImplementedError):
        F.elu(i, inplace=True)
    assert i.tolist() == [-1, 2]


def test_names_follow_torch():
    assert hasattr(torch.Tensor, "relu") and hasattr(torch.Tensor, "relu_")
    assert hasattr(torch.Tensor, "hardshrink") and hasattr(torch.Tensor, "softmax")
    assert not hasattr(torch.Tensor, "gelu") and not hasattr(torch.Tensor, "elu_")
    assert not hasattr(torch, "gelu") and hasattr(torch, "selu") and hasattr(torch, "celu_")


def test_errors():
    x = t(X)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(x, approximate="fast")
    with pytest.raises(
        RuntimeError, match="Halving dimension must be even, but dimension 0 is size 3"
    ):
        F.glu(t([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(t(1.0))
    with pytest.raises(
        RuntimeError,
        match=r"lambda must be in range \[0, 3.40282e\+38\] for "
        "input dtype Float, but found -1",
    ):
        F.softshrink(x, -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(RuntimeError, match="Found parameter numbers = 3 and channel size = 4"):
        F.prelu(t(np.zeros((2, 4), np.float32)), t([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="scalar or 1D tensor, but got: ndim = 2"):
        F.prelu(t(np.zeros((2, 4), np.float32)), t(np.ones((1, 4), np.float32)))


def test_softmax_family():
    a = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 50.0]], dtype=np.float32)
    e = np.exp(a - a.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    close(torch.softmax(t(a), 1), sm)
    close(t(a).softmax(-1), sm)
    close(F.softmax(t(a), dim=1), sm)
    close(torch.log_softmax(t(a), 1), np.log(sm), atol=1e-5)
    close(t(a).log_softmax(1), np.log(sm), atol=1e-5)
    em = np.exp(-a - (-a).max(1, keepdims=True))
    close(F.softmin(t(a), 1), em / em.sum(1, keepdims=True))
    out = torch.softmax(t([1, 2], np.int64), 0, dtype=torch.float64)
    assert out.dtype == torch.float64
    close(out, [1 / (1 + math.e), math.e / (1 + math.e)])
    assert torch.softmax(t(3.0), 0).item() == 1.0
    assert torch.softmax(t(a).half(), 1).dtype == torch.float16
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        close(F.softmax(t(a)), sm)  # implicit dim 1 for 2-D input
    assert any("Implicit dimension choice for softmax" in str(x.message) for x in w)
    with pytest.raises(NotImplementedError, match="softmax_lastdim_kernel_impl"):
        torch.softmax(t([1, 2], np.int64), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.softmax(t([1.0, 2.0]), 1)
    outt = torch.empty(2, 3)
    torch.softmax(t(a), 1, out=outt)
    close(outt, sm)


def test_dropout():
    torch.manual_seed(0)
    x = torch.ones(4000)
    y = F.dropout(x, 0.25)
    vals = np.unique(y.numpy())
    assert set(vals.tolist()) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y.numpy() == 0).mean() - 0.25) < 0.04
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert (F.dropout(x, 1.0).numpy() == 0).all()
    z = torch.ones(100)
    assert F.dropout(z, 0.5, inplace=True) is z and (z.numpy() == 0).any()
    with pytest.raises(
        ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"
    ):
        F.dropout(x, 1.5)
    # Channel dropout zeroes whole channels.
    f = F.dropout2d(torch.ones(8, 16, 3, 3), 0.5).numpy().reshape(8, 16, 9)
    assert ((f == 0).all(-1) | (f == 2).all(-1)).all()
    f = F.dropout1d(torch.ones(16, 5), 0.5).numpy()
    assert ((f == 0).all(-1) | (f == 2).all(-1)).all()
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(torch.ones(3))


def test_alpha_dropout_keeps_moments():
    torch.manual_seed(1)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal(20000).astype(np.float32))
    y = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    assert F.alpha_dropout(x, 0.2) is x  # training defaults to False
    out, mask = torch.native_dropout(torch.ones(10), 0.5, True)
    assert mask.dtype == torch.bool and np.array_equal(out.numpy() != 0, mask.numpy())


def test_rrelu_training_slopes_in_range():
    torch.manual_seed(0)
    x = -torch.ones(1000)
    y = F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert (y <= -0.1).all() and (y >= -0.3).all() and y.std() > 0.01


def test_dropout_function_variants():
    x = torch.ones(4, 50)
    # train=False leaves every variant the identity
    for fn in (
        torch.alpha_dropout_,
        torch.dropout_,
        torch.feature_alpha_dropout,
        torch.feature_dropout,
        torch.feature_dropout_,
        torch.feature_alpha_dropout_,
    ):
        assert fn(x.clone(), 0.5, False).tolist() == x.tolist()
    torch.manual_seed(0)
    y = x.clone()
    r = torch.dropout_(y, 0.5, True)
    vals = set(np.unique(np.asarray(y)).tolist())
    assert r is y and vals <= {0.0, 2.0} and vals == {0.0, 2.0}  # kept values scaled by 1/(1-p)
    f = torch.feature_dropout(torch.ones(4, 50, 3), 0.5, True)
    per_channel = np.asarray(f).reshape(4, 50, 3)
    # feature dropout zeroes whole channels: each (n, c) slice is all 0 or all 2
    assert all(len(set(per_channel[n, c].tolist())) == 1 for n in range(4) for c in range(50))


# ---------------------------------------------------------------------------
# The aten backward kernels PyTorch's OpInfo tests: _softmax_backward_data,
# native_dropout_backward


def test_softmax_backward_data():
    x = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    y = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    g = np.array([[1.0, -2.0, 0.5], [0.3, 0.0, 1.0]])
    r = torch._softmax_backward_data(torch.tensor(g), torch.tensor(y), 1, torch.float64)
    close(r, y * (g - (g * y).sum(1, keepdims=True)), rtol=1e-12)
    assert r.dtype is torch.float64
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        torch._softmax_backward_data(torch.tensor(g), torch.tensor(y).float(), 1, torch.float64)


def test_native_dropout_backward():
    mask = torch.tensor([True, False, True])
    same(
        torch.native_dropout_backward(torch.tensor([1.0, 2.0, 3.0]), mask, 2.0),
        [2, 0, 6],
        torch.float32,
    )
    # integer gradients promote with the float scale to the default float dtype
    assert torch.native_dropout_backward(torch.tensor([1, 2, 3]), mask, 2.0).dtype is torch.float32
