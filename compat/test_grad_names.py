"""Double backward's node names against real PyTorch.

Under `create_graph=True` PyTorch's backward runs its derivatives.yaml formulas on ordinary
ops, so a gradient's `grad_fn` is named after the formula's last op (`x ** 2`:
`grad * (2 * x)`, a MulBackward0). jtorch records each node's backward as one node and
names it so (autograd/_names.py). Each case compares, as (requires_grad, name) pairs, the
first-order gradient of every input, then the second-order gradients of every input of
each first-order gradient (None where PyTorch's has no path to that input).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

_X = np.random.default_rng(0).uniform(0.5, 1.5, (3, 3)).astype(np.float32)
_Y = np.random.default_rng(1).uniform(0.5, 1.5, (3, 3)).astype(np.float32)
F = "nn.functional"


def _f(path):
    def get(L):
        obj = L
        for p in path.split("."):
            obj = getattr(obj, p)
        return obj

    return get


# name -> (fn(lib, *inputs), number of inputs, compare the second order too)
CASES = {
    "pow2": (lambda L, x: x**2, 1, True),
    "pow3": (lambda L, x: x.pow(3), 1, True),
    "square": (lambda L, x: x.square(), 1, True),
    "pow_tensor": (lambda L, x, y: x**y, 2, True),
    "rpow": (lambda L, x: 2**x, 1, True),
    "mul": (lambda L, x, y: x * y, 2, True),
    "div": (lambda L, x, y: x / y, 2, True),
    "exp": (lambda L, x: x.exp(), 1, True),
    "exp2": (lambda L, x: x.exp2(), 1, True),
    "expm1": (lambda L, x: x.expm1(), 1, True),
    "log": (lambda L, x: x.log(), 1, True),
    "log2": (lambda L, x: x.log2(), 1, True),
    "log1p": (lambda L, x: x.log1p(), 1, True),
    "sqrt": (lambda L, x: x.sqrt(), 1, True),
    "rsqrt": (lambda L, x: x.rsqrt(), 1, True),
    "reciprocal": (lambda L, x: x.reciprocal(), 1, True),
    "sin": (lambda L, x: x.sin(), 1, True),
    "cos": (lambda L, x: x.cos(), 1, True),
    "tan": (lambda L, x: x.tan(), 1, True),
    "atan": (lambda L, x: x.atan(), 1, True),
    "erf": (lambda L, x: x.erf(), 1, True),
    "tanh": (lambda L, x: x.tanh(), 1, True),
    "sigmoid": (lambda L, x: x.sigmoid(), 1, True),
    "abs": (lambda L, x: x.abs(), 1, True),
    "relu": (lambda L, x: x.relu(), 1, True),
    "hardtanh": (lambda L, x: _f(F + ".hardtanh")(L)(x, 0.7, 1.2), 1, True),
    "leaky_relu": (lambda L, x: _f(F + ".leaky_relu")(L)(x, 0.1), 1, True),
    "hardswish": (lambda L, x: _f(F + ".hardswish")(L)(x), 1, True),
    "logsigmoid": (lambda L, x: _f(F + ".logsigmoid")(L)(x), 1, True),
    "gelu": (lambda L, x: _f(F + ".gelu")(L)(x), 1, True),
    "elu": (lambda L, x: _f(F + ".elu")(L)(x), 1, True),
    "softplus": (lambda L, x: _f(F + ".softplus")(L)(x), 1, True),
    "silu": (lambda L, x: _f(F + ".silu")(L)(x), 1, True),
    "mish": (lambda L, x: _f(F + ".mish")(L)(x), 1, True),
    "softmax": (lambda L, x: x.softmax(-1), 1, True),
    "log_softmax": (lambda L, x: x.log_softmax(-1), 1, True),
    "cross_entropy": (lambda L, x: _f(F + ".cross_entropy")(L)(x, L.tensor([0, 1, 2])), 1, True),
    "nll_loss": (lambda L, x: _f(F + ".nll_loss")(L)(x, L.tensor([0, 1, 2])), 1, True),
    "nll_loss_2d": (
        lambda L, x: _f(F + ".nll_loss")(L)(x[None, :, :, None], L.tensor([[[0], [1], [2]]])),
        1,
        True,
    ),
    "cross_entropy_2d": (
        lambda L, x: _f(F + ".cross_entropy")(L)(x[None, :, :, None], L.tensor([[[0], [1], [2]]])),
        1,
        True,
    ),
    "mse_loss": (lambda L, x, y: _f(F + ".mse_loss")(L)(x, y), 2, True),
    "l1_loss": (lambda L, x, y: _f(F + ".l1_loss")(L)(x, y), 2, True),
    "smooth_l1_loss": (lambda L, x, y: _f(F + ".smooth_l1_loss")(L)(x, y), 2, True),
    "huber_loss": (lambda L, x, y: _f(F + ".huber_loss")(L)(x, y), 2, True),
    "layer_norm": (lambda L, x: _f(F + ".layer_norm")(L)(x, (3,)), 1, True),
    "mm": (lambda L, x, y: L.mm(x, y), 2, True),
    "matmul": (lambda L, x, y: x @ y, 2, True),
    "linear": (lambda L, x, y: _f(F + ".linear")(L)(x, y), 2, True),
    "addmm": (lambda L, x, y: L.addmm(x, x, y), 2, True),
    "addcmul": (lambda L, x, y: L.addcmul(x, x, y), 2, True),
    "norm": (lambda L, x: x.norm(), 1, True),
    "dist": (lambda L, x, y: L.dist(x, y), 2, True),
    "prod": (lambda L, x: x.prod(-1), 1, True),
    "prod_all": (lambda L, x: x.prod(), 1, True),
    "var": (lambda L, x: x.var(-1), 1, True),
    "std": (lambda L, x: x.std(), 1, True),
    "var_mean": (lambda L, x: L.var_mean(x, -1)[0], 1, True),
    "std_mean": (lambda L, x: L.std_mean(x, -1)[0], 1, True),
    "logsumexp": (lambda L, x: x.logsumexp(-1), 1, True),
    "atan2": (lambda L, x, y: L.atan2(x, y), 2, True),
    "hypot": (lambda L, x, y: L.hypot(x, y), 2, True),
    # gradients that read the input only through a mask or indices: no history in it
    "clamp": (lambda L, x: x.clamp(0.7, 1.2), 1, True),
    "clamp_min": (lambda L, x: x.clamp_min(0.9), 1, True),
    "max": (lambda L, x: x.max(), 1, True),
    "max_dim": (lambda L, x: x.max(-1)[0], 1, True),
    "amax": (lambda L, x: x.amax(-1), 1, True),
    "maximum": (lambda L, x, y: L.maximum(x, y), 2, True),
    "median": (lambda L, x: x.median(), 1, True),
    "sort": (lambda L, x: x.sort(-1)[0], 1, True),
    "sort_stable": (lambda L, x: x.sort(dim=-1, stable=True)[0], 1, True),
    "median_dim": (lambda L, x: x.median(-1)[0], 1, True),
    "div_floor": (lambda L, x, y: x.div(y, rounding_mode="floor"), 2, True),
    "topk": (lambda L, x: x.topk(2)[0], 1, True),
    "cummax": (lambda L, x: x.cummax(-1)[0], 1, True),
}


def _pair(t):
    return None if t is None else (t.requires_grad, None if t.grad_fn is None else t.grad_fn.name())


def _names(lib, fn, n, second):
    xs = [lib.tensor(a, requires_grad=True) for a in (_X, _Y)[:n]]
    out = fn(lib, *xs)
    w = lib.tensor(np.random.default_rng(2).uniform(-1, 1, tuple(out.shape)).astype(np.float32))
    g = lib.autograd.grad((out * w).sum(), xs, create_graph=True)
    chain = [tuple(_pair(t) for t in g)]
    if second:
        for t in g:
            if t.requires_grad:
                gg = lib.autograd.grad((t * t).sum(), xs, create_graph=True, allow_unused=True)
                chain.append(tuple(_pair(u) for u in gg))
    return chain, [t.detach() for t in g]


@pytest.mark.parametrize("case", sorted(CASES))
def test_double_backward_names(case):
    fn, n, second = CASES[case]
    expected, t_grads = _names(torch, fn, n, second)
    actual, j_grads = _names(jtorch, fn, n, second)
    assert actual == expected
    for e, a in zip(t_grads, j_grads):  # the split per name keeps the values
        # compat/test_grads.py's gradient tolerance (layer_norm's rows of three cancel digits)
        np.testing.assert_allclose(np.asarray(a._array), e.numpy(), rtol=1e-4, atol=1e-4)


def test_linear_weight_only():
    """A layer's weight (the input not requiring grad): PyTorch's ends in t()."""
    names = []
    for lib in (torch, jtorch):
        x, w = lib.tensor(_X), lib.tensor(_Y, requires_grad=True)
        (g,) = lib.autograd.grad(_f(F + ".linear")(lib)(x, w).pow(2).sum(), [w], create_graph=True)
        names.append(g.grad_fn.name())
    assert names[1] == names[0]
