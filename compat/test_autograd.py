"""Autograd parity: the same small programs under PyTorch and jtorch give the same answers.

Each scenario takes the module (`torch` or `jtorch`) as its argument, named `torch` so its
body reads as a PyTorch program, and returns plain data: grads, names, flags. A scenario that
raises is compared by exception type (exactly) and message (exactly, or by a key phrase where
the scenario names one). Tensors in results are compared by dtype, shape and values.
"""

from __future__ import annotations

import math
import re
import threading
import warnings

import pytest

TORCH = pytest.importorskip("torch")

import jtorch  # noqa: E402

SCENARIOS: dict = {}


def scenario(fn=None, *, key: str | None = None, xfail: str | None = None):
    """Registers a scenario; `key`: compare exception messages by this phrase only."""
    def register(f):
        SCENARIOS[f.__name__] = (f, key, xfail)
        return f
    return register(fn) if fn is not None else register


# ---------------------------------------------------------------------------
# Running and comparing


def _norm(v):
    """Plain, module-independent data for a scenario's result."""
    if hasattr(v, "detach") and hasattr(v, "dtype") and hasattr(v, "tolist"):
        return ("tensor", str(v.dtype), tuple(v.shape), _norm(v.detach().tolist()))
    if isinstance(v, complex):
        return ("complex", v.real, v.imag)
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if type(v).__name__ == "dtype":
        return str(v)
    return v


def _run(fn, mod):
    try:
        return ("ok", _norm(fn(mod)))
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return ("raises", type(e).__name__, str(e))


def _same(a, b, path="result"):
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), (path, a, b)
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), (path, a, b)
        else:
            assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-5), (path, a, b)
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (path, a, b)
        for k in a:
            _same(a[k], b[k], f"{path}[{k!r}]")
        return
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
        return
    assert a == b, (path, a, b)


def _check(fn, key=None):
    expected = _run(fn, TORCH)
    got = _run(fn, jtorch)
    assert got[0] == expected[0], f"torch: {expected}\njtorch: {got}"
    if expected[0] == "raises":
        assert got[1] == expected[1], f"torch: {expected}\njtorch: {got}"
        if key is None:
            assert got[2] == expected[2], f"torch: {expected}\njtorch: {got}"
        else:
            assert key in expected[2], f"scenario key {key!r} not in torch's {expected[2]!r}"
            assert key in got[2], f"torch: {expected}\njtorch: {got}"
        return
    _same(got[1], expected[1])


def _leaf(torch, data, dtype=None):
    return torch.tensor(data, dtype=dtype, requires_grad=True)


def _seed(torch, out):
    """A fixed, uneven upstream gradient shaped like `out`."""
    vals = [((i * 7) % 5) / 2 - 0.8 for i in range(out.numel())]
    return torch.tensor(vals, dtype=out.dtype).reshape(out.shape)


def _names(fn):
    """A node's name and its next_functions as (name, output_nr) pairs."""
    if fn is None:
        return None
    return [fn.name(), [(n.name() if n is not None else None, nr)
                        for n, nr in fn.next_functions]]


X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
P = [[0.8, 1.7, 0.3], [2.2, 1.1, 0.6]]
W = [[0.1, -0.4], [0.7, 0.2], [-0.3, 0.9]]


def _xpw(torch, dtype=None):
    return _leaf(torch, X, dtype), _leaf(torch, P, dtype), _leaf(torch, W, dtype)


# ---------------------------------------------------------------------------
# One table of ops: each is checked for its node name, its grads, and (some) double grads.
# `x` (2x3, mixed signs), `p` (2x3, positive) and `w` (3x2) are leaves requiring grad.


def _inplace(f):
    """An in-place op applied to a non-leaf copy of x."""
    def op(torch, x, p, w):
        a = x * 1
        f(torch, a, p, w)
        return a
    return op


def _F(torch):
    return torch.nn.functional


OPS = {
    "add": lambda torch, x, p, w: x + p,
    "add_scalar": lambda torch, x, p, w: x + 2,
    "add_alpha": lambda torch, x, p, w: torch.add(x, p, alpha=3),
    "sub": lambda torch, x, p, w: x - p,
    "rsub_scalar": lambda torch, x, p, w: 1 - x,
    "rsub": lambda torch, x, p, w: torch.rsub(x, p),
    "neg": lambda torch, x, p, w: -x,
    "mul": lambda torch, x, p, w: x * p,
    "mul_scalar": lambda torch, x, p, w: x * 3,
    "div": lambda torch, x, p, w: x / p,
    "div_scalar": lambda torch, x, p, w: x / 4,
    "rdiv": lambda torch, x, p, w: 2 / p,
    "mm": lambda torch, x, p, w: x.mm(w),
    "matmul": lambda torch, x, p, w: x @ w,
    "mv": lambda torch, x, p, w: torch.mv(x, p[1]),
    "dot": lambda torch, x, p, w: x[0].dot(p[0]),
    "bmm": lambda torch, x, p, w: torch.bmm(x.view(1, 2, 3), w.view(1, 3, 2)),
    "sum": lambda torch, x, p, w: x.sum(),
    "sum_dim": lambda torch, x, p, w: x.sum(1),
    "sum_keepdim": lambda torch, x, p, w: x.sum(0, keepdim=True),
    "mean": lambda torch, x, p, w: x.mean(),
    "mean_dim": lambda torch, x, p, w: x.mean(0),
    "view": lambda torch, x, p, w: x.view(3, 2),
    "reshape": lambda torch, x, p, w: x.reshape(6),
    "reshape_noncontiguous": lambda torch, x, p, w: x.t().reshape(6),
    "flatten": lambda torch, x, p, w: x.flatten(),
    "t": lambda torch, x, p, w: x.t(),
    "transpose": lambda torch, x, p, w: x.transpose(0, 1),
    "permute": lambda torch, x, p, w: x.permute(1, 0),
    "select": lambda torch, x, p, w: x[1],
    "select_method": lambda torch, x, p, w: x.select(1, 2),
    "slice": lambda torch, x, p, w: x[:, 1:],
    "slice_step": lambda torch, x, p, w: x[:, ::2],
    "narrow": lambda torch, x, p, w: x.narrow(1, 0, 2),
    "index_list": lambda torch, x, p, w: x[[1, 0, 1]],
    "index_mask": lambda torch, x, p, w: x[x > 0],
    "index_select": lambda torch, x, p, w: x.index_select(1, torch.tensor([2, 0])),
    "gather": lambda torch, x, p, w: x.gather(1, torch.tensor([[0, 0], [2, 1]])),
    "expand": lambda torch, x, p, w: x[0].expand(4, 3),
    "unsqueeze": lambda torch, x, p, w: x.unsqueeze(0),
    "squeeze_dim": lambda torch, x, p, w: x.view(1, 2, 3).squeeze(0),
    "squeeze": lambda torch, x, p, w: x.view(1, 2, 3).squeeze(),
    "relu": lambda torch, x, p, w: x.relu(),
    "F_relu": lambda torch, x, p, w: _F(torch).relu(x),
    "sigmoid": lambda torch, x, p, w: x.sigmoid(),
    "tanh": lambda torch, x, p, w: torch.tanh(x),
    "exp": lambda torch, x, p, w: x.exp(),
    "log": lambda torch, x, p, w: p.log(),
    "sqrt": lambda torch, x, p, w: p.sqrt(),
    "rsqrt": lambda torch, x, p, w: p.rsqrt(),
    "reciprocal": lambda torch, x, p, w: p.reciprocal(),
    "abs": lambda torch, x, p, w: x.abs(),
    "sin": lambda torch, x, p, w: x.sin(),
    "cos": lambda torch, x, p, w: x.cos(),
    "erf": lambda torch, x, p, w: x.erf(),
    "log1p": lambda torch, x, p, w: p.log1p(),
    "pow_scalar": lambda torch, x, p, w: x ** 2,
    "pow_float": lambda torch, x, p, w: p.pow(1.5),
    "pow_tensor": lambda torch, x, p, w: p ** x,
    "pow_scalar_base": lambda torch, x, p, w: 2 ** x,
    "square": lambda torch, x, p, w: x.square(),
    "clamp": lambda torch, x, p, w: x.clamp(-0.5, 1.0),
    "clamp_min": lambda torch, x, p, w: x.clamp(min=0),
    "where": lambda torch, x, p, w: torch.where(x > 0, x, p),
    "masked_fill": lambda torch, x, p, w: x.masked_fill(x < 0, 0.0),
    "cat": lambda torch, x, p, w: torch.cat([x, p]),
    "stack": lambda torch, x, p, w: torch.stack([x, p], 1),
    "split": lambda torch, x, p, w: x.split(2, 1),
    "chunk": lambda torch, x, p, w: x.chunk(3, 1),
    "unbind": lambda torch, x, p, w: x.unbind(0),
    "clone": lambda torch, x, p, w: x.clone(),
    "contiguous": lambda torch, x, p, w: x.t().contiguous(),
    "double": lambda torch, x, p, w: x.double(),
    "to_dtype": lambda torch, x, p, w: x.to(torch.float64),
    "float_noop": lambda torch, x, p, w: x.float(),
    "max": lambda torch, x, p, w: x.max(),
    "max_dim": lambda torch, x, p, w: x.max(1).values,
    "max_binary": lambda torch, x, p, w: torch.max(x, p),
    "min": lambda torch, x, p, w: x.min(),
    "min_dim": lambda torch, x, p, w: x.min(0)[0],
    "amax": lambda torch, x, p, w: x.amax(1),
    "softmax": lambda torch, x, p, w: x.softmax(1),
    "F_softmax": lambda torch, x, p, w: _F(torch).softmax(x, dim=0),
    "log_softmax": lambda torch, x, p, w: _F(torch).log_softmax(x, dim=1),
    "cross_entropy": lambda torch, x, p, w: _F(torch).cross_entropy(x, torch.tensor([2, 0])),
    "nll_loss": lambda torch, x, p, w: _F(torch).nll_loss(x, torch.tensor([1, 2])),
    "linear": lambda torch, x, p, w: _F(torch).linear(x, w.t(), p[0, :2]),
    "linear_nobias": lambda torch, x, p, w: _F(torch).linear(x, w.t()),
    "linear_3d": lambda torch, x, p, w: _F(torch).linear(x.view(1, 2, 3), w.t(), p[0, :2]),
    "mse_loss": lambda torch, x, p, w: _F(torch).mse_loss(x, p),
    "l1_loss": lambda torch, x, p, w: _F(torch).l1_loss(x, p),
    "bce_with_logits": lambda torch, x, p, w: _F(torch).binary_cross_entropy_with_logits(
        x, p / 3),
    "layer_norm": lambda torch, x, p, w: _F(torch).layer_norm(x, (3,), p[0], p[1]),
    "conv2d": lambda torch, x, p, w: _F(torch).conv2d(x.view(1, 1, 2, 3),
                                                      w.view(1, 1, 3, 2)[:, :, :2]),
    "gelu": lambda torch, x, p, w: _F(torch).gelu(x),
    "silu": lambda torch, x, p, w: _F(torch).silu(x),
    "softplus": lambda torch, x, p, w: _F(torch).softplus(x),
    "leaky_relu": lambda torch, x, p, w: _F(torch).leaky_relu(x, 0.1),
    "elu": lambda torch, x, p, w: _F(torch).elu(x),
    "embedding": lambda torch, x, p, w: _F(torch).embedding(torch.tensor([1, 0, 1]), w),
    "prod": lambda torch, x, p, w: x.prod(1),
    "norm": lambda torch, x, p, w: x.norm(),
    "var": lambda torch, x, p, w: x.var(1),
    "std": lambda torch, x, p, w: x.std(),
    "cumsum": lambda torch, x, p, w: x.cumsum(1),
    "sort": lambda torch, x, p, w: x.sort(1).values,
    "topk": lambda torch, x, p, w: x.topk(2, 1).values,
    "flip": lambda torch, x, p, w: x.flip(0),
    "roll": lambda torch, x, p, w: x.roll(1, 1),
    "repeat": lambda torch, x, p, w: x.repeat(2, 1),
    "tril": lambda torch, x, p, w: x.tril(),
    "diagonal": lambda torch, x, p, w: x.diagonal(),
    "trace": lambda torch, x, p, w: x[:, :2].trace(),
    "einsum": lambda torch, x, p, w: torch.einsum("ij,jk->ik", x, w),
    "outer": lambda torch, x, p, w: torch.outer(x[0], p[1]),
    "addcmul": lambda torch, x, p, w: torch.addcmul(x, p, x, value=0.5),
    "logsumexp": lambda torch, x, p, w: x.logsumexp(1),
    "atan2": lambda torch, x, p, w: torch.atan2(x, p),
    "lerp": lambda torch, x, p, w: torch.lerp(x, p, 0.25),
    "sign": lambda torch, x, p, w: x.sign(),
    "round": lambda torch, x, p, w: x.round(),
    # in place, on a non-leaf copy of x
    "add_": _inplace(lambda torch, a, p, w: a.add_(p)),
    "mul_": _inplace(lambda torch, a, p, w: a.mul_(2)),
    "mul_tensor_": _inplace(lambda torch, a, p, w: a.mul_(p)),
    "div_": _inplace(lambda torch, a, p, w: a.div_(p)),
    "setitem_scalar": _inplace(lambda torch, a, p, w: a.__setitem__(0, 5.0)),
    "setitem_tensor": _inplace(lambda torch, a, p, w: a.__setitem__((slice(None), 1), p[1, :2])),
    "zero_": _inplace(lambda torch, a, p, w: a.zero_()),
    "fill_": _inplace(lambda torch, a, p, w: a.fill_(2.0)),
    "copy_": _inplace(lambda torch, a, p, w: a.copy_(p)),
    "clamp_": _inplace(lambda torch, a, p, w: a.clamp_(min=0)),
    "sigmoid_": _inplace(lambda torch, a, p, w: a.sigmoid_()),
    "exp_": _inplace(lambda torch, a, p, w: a.exp_()),
    "relu_": _inplace(lambda torch, a, p, w: a.relu_()),
    "t_": _inplace(lambda torch, a, p, w: a.t_()),
    "unsqueeze_": _inplace(lambda torch, a, p, w: a.unsqueeze_(0)),
    "masked_fill_": _inplace(lambda torch, a, p, w: a.masked_fill_(a < 0, 1.5)),
    "view_add_": _inplace(lambda torch, a, p, w: a.view(-1).add_(p.view(-1))),
    "slice_mul_": _inplace(lambda torch, a, p, w: a[:, 1].mul_(3)),
    "t_view_mul_": _inplace(lambda torch, a, p, w: a.t()[0].mul_(p[0, :2])),
    "index_put_": _inplace(lambda torch, a, p, w: a.index_put_((torch.tensor([1, 0]),),
                                                               p[0])),
    "scatter_": _inplace(lambda torch, a, p, w: a.scatter_(1, torch.tensor([[2], [0]]),
                                                           p[:, :1])),
}

# Ops whose second derivative is worth checking (create_graph=True through them).
DOUBLE = ["mul", "div", "mm", "matmul", "sum_dim", "mean", "view", "t", "select", "slice",
          "index_list", "expand", "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "sin",
          "pow_scalar", "pow_tensor", "pow_scalar_base", "where", "cat", "stack", "split",
          "max_dim", "softmax", "log_softmax", "cross_entropy", "linear", "mse_loss",
          "layer_norm", "conv2d", "gelu", "prod", "norm", "cumsum", "logsumexp", "add_",
          "mul_tensor_", "setitem_tensor", "sigmoid_", "view_add_", "slice_mul_"]

# Node names jtorch does not get right yet (owned by jtorch/autograd/_names.py).
NAME_XFAIL: dict = {}
GRAD_XFAIL: dict = {}
DOUBLE_XFAIL: dict = {}


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _op_name(op):
    def run(torch):
        x, p, w = _xpw(torch)
        outs = _outputs(OPS[op](torch, x, p, w))
        return [_names(o.grad_fn) for o in outs], [o.is_leaf for o in outs], \
            [o.requires_grad for o in outs]
    return run


def _op_grad(op):
    def run(torch):
        x, p, w = _xpw(torch)
        outs = _outputs(OPS[op](torch, x, p, w))
        diff = [o for o in outs if o.requires_grad]
        if diff:
            torch.autograd.backward(diff, [_seed(torch, o) for o in diff])
        return outs, x.grad, p.grad, w.grad
    return run


def _op_double(op):
    def run(torch):
        x, p, w = _xpw(torch)
        leaves = [x, p, w]
        outs = [o for o in _outputs(OPS[op](torch, x, p, w)) if o.requires_grad]
        gs = torch.autograd.grad(outs, leaves, [_seed(torch, o) for o in outs],
                                 create_graph=True, allow_unused=True)
        total = sum((g * g.detach().sin()).sum() for g in gs if g is not None and
                    g.requires_grad)
        if not isinstance(total, int):
            total.backward()
        return gs, [t.grad for t in leaves]
    return run


@pytest.mark.parametrize("op", [pytest.param(k, marks=pytest.mark.xfail(
    strict=True, reason=NAME_XFAIL[k])) if k in NAME_XFAIL else k for k in OPS])
def test_op_node_name(op):
    _check(_op_name(op))


@pytest.mark.parametrize("op", [pytest.param(k, marks=pytest.mark.xfail(
    strict=True, reason=GRAD_XFAIL[k])) if k in GRAD_XFAIL else k for k in OPS])
def test_op_grad(op):
    _check(_op_grad(op))


@pytest.mark.parametrize("op", [pytest.param(k, marks=pytest.mark.xfail(
    strict=True, reason=DOUBLE_XFAIL[k])) if k in DOUBLE_XFAIL else k for k in DOUBLE])
def test_op_double_grad(op):
    _check(_op_double(op))
