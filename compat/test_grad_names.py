"""Double backward's node names against real PyTorch.

Under `create_graph=True` PyTorch's backward runs its derivatives.yaml formulas on ordinary
ops, so a gradient's `grad_fn` is named after the formula's last op (`x ** 2`:
`grad * (2 * x)`, a MulBackward0). jtorch records each node's backward as one node and
names it so (autograd/_names.py). Each case compares the chain of names: the first-order
gradient of every input, then the second-order gradient of the first input.
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
    "pow2": (lambda L, x: x ** 2, 1, True),
    "pow3": (lambda L, x: x.pow(3), 1, True),
    "square": (lambda L, x: x.square(), 1, True),
    "pow_tensor": (lambda L, x, y: x ** y, 2, False),
    "rpow": (lambda L, x: 2 ** x, 1, True),
    "mul": (lambda L, x, y: x * y, 2, False),
    "div": (lambda L, x, y: x / y, 2, False),
    "exp": (lambda L, x: x.exp(), 1, True),
    "expm1": (lambda L, x: x.expm1(), 1, True),
    "log": (lambda L, x: x.log(), 1, False),
    "sqrt": (lambda L, x: x.sqrt(), 1, True),
    "rsqrt": (lambda L, x: x.rsqrt(), 1, True),
    "reciprocal": (lambda L, x: x.reciprocal(), 1, True),
    "sin": (lambda L, x: x.sin(), 1, True),
    "cos": (lambda L, x: x.cos(), 1, True),
    "tan": (lambda L, x: x.tan(), 1, True),
    "erf": (lambda L, x: x.erf(), 1, True),
    "tanh": (lambda L, x: x.tanh(), 1, True),
    "sigmoid": (lambda L, x: x.sigmoid(), 1, True),
    "relu": (lambda L, x: x.relu(), 1, True),
    "gelu": (lambda L, x: _f(F + ".gelu")(L)(x), 1, True),
    "elu": (lambda L, x: _f(F + ".elu")(L)(x), 1, True),
    "softplus": (lambda L, x: _f(F + ".softplus")(L)(x), 1, True),
    "silu": (lambda L, x: _f(F + ".silu")(L)(x), 1, False),
    "softmax": (lambda L, x: x.softmax(-1), 1, True),
    "log_softmax": (lambda L, x: x.log_softmax(-1), 1, True),
    "cross_entropy": (lambda L, x: _f(F + ".cross_entropy")(L)(x, L.tensor([0, 1, 2])), 1,
                      True),
    "mse_loss": (lambda L, x, y: _f(F + ".mse_loss")(L)(x, y), 2, False),
    "layer_norm": (lambda L, x: _f(F + ".layer_norm")(L)(x, (3,)), 1, False),
    "mm": (lambda L, x, y: L.mm(x, y), 2, False),
    "matmul": (lambda L, x, y: x @ y, 2, False),
    "linear": (lambda L, x, y: _f(F + ".linear")(L)(x, y), 2, False),
    "addmm": (lambda L, x, y: L.addmm(x, x, y), 2, False),
    "norm": (lambda L, x: x.norm(), 1, False),
    "logsumexp": (lambda L, x: x.logsumexp(-1), 1, False),
    "atan2": (lambda L, x, y: L.atan2(x, y), 2, False),
    "hypot": (lambda L, x, y: L.hypot(x, y), 2, False),
}


def _names(lib, fn, n, second):
    xs = [lib.tensor(a, requires_grad=True) for a in (_X, _Y)[:n]]
    out = fn(lib, *xs)
    w = lib.tensor(np.random.default_rng(2).uniform(-1, 1, tuple(out.shape)).astype(np.float32))
    g = lib.autograd.grad((out * w).sum(), xs, create_graph=True)
    chain = [tuple(None if t.grad_fn is None else t.grad_fn.name() for t in g)]
    if second:
        (gg,) = lib.autograd.grad((g[0] * g[0]).sum(), xs[:1], create_graph=True)
        chain.append(gg.grad_fn.name())
    return chain, [t.detach() for t in g]


@pytest.mark.parametrize("case", sorted(CASES))
def test_double_backward_names(case):
    fn, n, second = CASES[case]
    expected, t_grads = _names(torch, fn, n, second)
    actual, j_grads = _names(jtorch, fn, n, second)
    assert actual == expected
    for e, a in zip(t_grads, j_grads):   # the split per name keeps the values
        # compat/test_grads.py's gradient tolerance (layer_norm's rows of three cancel digits)
        np.testing.assert_allclose(np.asarray(a._array), e.numpy(), rtol=1e-4, atol=1e-4)


def test_linear_weight_only():
    """A layer's weight (the input not requiring grad): PyTorch's ends in t()."""
    names = []
    for lib in (torch, jtorch):
        x, w = lib.tensor(_X), lib.tensor(_Y, requires_grad=True)
        (g,) = lib.autograd.grad(_f(F + ".linear")(lib)(x, w).pow(2).sum(), [w],
                                 create_graph=True)
        names.append(g.grad_fn.name())
    assert names[1] == names[0]
