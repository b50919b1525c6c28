"""`torch.utils.checkpoint`: same gradients as without it, one recomputing node, RNG kept."""

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn as nn
from jtorch.utils.checkpoint import checkpoint, checkpoint_sequential


def _grads(params):
    out = [p.grad.numpy().copy() for p in params]
    for p in params:
        p.grad = None
    return out


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Dropout(0.5), nn.Linear(8, 2))


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_module_grads_equal_plain_run_with_dropout(use_reentrant):
    model = _model()
    x = torch.randn(4, 3, requires_grad=True)
    params = list(model.parameters()) + [x]
    torch.manual_seed(7)
    expected_out = model(x)
    (expected_out**2).sum().backward()
    expected = _grads(params)
    torch.manual_seed(7)
    out = checkpoint(model, x, use_reentrant=use_reentrant)
    # One node stands for the whole function: nothing inside it was recorded.
    assert out.grad_fn.name() == "CheckpointFunctionBackward"
    inner = {type(f).__name__ for f, _ in out.grad_fn.next_functions if f is not None}
    assert inner == {"AccumulateGrad"}
    np.testing.assert_allclose(out.detach().numpy(), expected_out.detach().numpy(), rtol=1e-6)
    (out**2).sum().backward()
    for e, a in zip(expected, _grads(params)):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


def test_parameters_get_grads_when_no_input_requires_grad():
    lin = nn.Linear(3, 2)
    w = torch.randn(2, 2, requires_grad=True)
    x = torch.randn(5, 3)

    def f(inp, scale=1.0):
        h = lin(inp)
        return h @ w * scale, h.sum()

    a, b = f(x, scale=2.0)
    (a.sum() + b).backward()
    expected = _grads([lin.weight, lin.bias, w])
    a, b = checkpoint(f, x, use_reentrant=False, scale=2.0)
    (a.sum() + b).backward()
    for e, g in zip(expected, _grads([lin.weight, lin.bias, w])):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    # By hand: d/db of sum(2 (x W^T + b) w) + sum(x W^T + b) over 5 rows.
    np.testing.assert_allclose(expected[1], 5 * (2 * w.detach().numpy().sum(1) + 1), rtol=1e-5)


def test_checkpoint_sequential_matches():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(6, 3, requires_grad=True)
    params = list(model.parameters()) + [x]
    model(x).sum().backward()
    expected = _grads(params)
    out = checkpoint_sequential(model, 2, x, use_reentrant=False)
    out.sum().backward()
    for e, a in zip(expected, _grads(params)):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


def test_no_grad_mode_just_calls():
    lin = nn.Linear(2, 2)
    with torch.no_grad():
        out = checkpoint(lin, torch.ones(1, 2), use_reentrant=False)
    assert out.grad_fn is None and not out.requires_grad
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(lin, torch.ones(1, 2))
