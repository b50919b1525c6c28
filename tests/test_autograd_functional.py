"""`jtorch.autograd.functional` and `gradcheck` on the eager tape (mathematics, numpy)."""

import warnings

import numpy as np
import pytest

import jtorch as torch
from jtorch.autograd import functional as AF
from jtorch.autograd.gradcheck import GradcheckError
from tests.helpers import close

X = np.array([1.0, -2.0, 0.5])
A = np.array([[1.0, 2.0, 0.0], [0.5, 3.0, 1.0], [0.0, -1.0, 2.0]])


def f64(a, requires_grad=False):
    return torch.tensor(
        np.asarray(a, dtype=np.float64).tolist(), dtype=torch.float64, requires_grad=requires_grad
    )


def test_jacobian_single_and_tuple_structures():
    j = AF.jacobian(lambda x: x**2, f64(X))
    close(j, np.diag(2 * X))
    assert not j.requires_grad
    (jx, jy), (kx, ky) = AF.jacobian(lambda x, y: (x * y, (x**2).sum()), (f64(X), f64(X)))
    close(jx, np.diag(X))
    close(jy, np.diag(X))
    close(kx, 2 * X)
    close(ky, np.zeros(3))
    (jx,) = AF.jacobian(lambda x: x.sin(), (f64(X),))
    close(jx, np.diag(np.cos(X)))


def test_jacobian_unused_input_is_zero_or_strict_error():
    (_, jy) = AF.jacobian(lambda x, y: x * 2, (f64(X), f64([1.0, 2.0])))
    close(jy, np.zeros((3, 2)))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda x, y: x * 2, (f64(X), f64([1.0, 2.0])), strict=True)


def test_jacobian_create_graph_is_differentiable():
    x = f64(X, requires_grad=True)
    j = AF.jacobian(lambda x: x**3, x, create_graph=True)  # diag(3 x^2)
    assert j.requires_grad
    (g,) = torch.autograd.grad(j.sum(), x)
    close(g, 6 * X)


def test_jacobian_forward_mode():
    j = AF.jacobian(lambda x: x.exp(), f64(X), vectorize=True, strategy="forward-mode")
    close(j, np.diag(np.exp(X)))
    with pytest.raises(NotImplementedError):
        AF.jacobian(lambda x: x, f64(X), strategy="forward-mode")


def test_hessian_of_quadratic_form():
    a = f64(A)
    close(AF.hessian(lambda x: x @ (a @ x), f64(X)), A + A.T)
    (hxx, hxy), (hyx, hyy) = AF.hessian(lambda x, y: (x * y).sum(), (f64(X), f64(X)))
    close(hxx, np.zeros((3, 3)))
    close(hxy, np.eye(3))
    close(hyx, np.eye(3))
    with pytest.raises(RuntimeError, match="should contain a single element"):
        AF.hessian(lambda x: x, f64(X))


def test_vjp_jvp_hvp_vhp():
    a = f64(A)
    v = np.array([1.0, 0.0, 2.0])
    out, g = AF.vjp(lambda x: a @ x, f64(X), f64(v))
    close(out, A @ X)
    close(g, A.T @ v)
    out, t = AF.jvp(lambda x: a @ x, f64(X), f64(v))
    close(t, A @ v)
    out, t = AF.jvp(lambda x: x.sin(), f64(X), f64(v))
    close(t, np.cos(X) * v)
    cubic = lambda x: (x**3).sum() + x @ (a @ x)  # noqa: E731
    hess = np.diag(6 * X) + A + A.T
    value, hv = AF.hvp(cubic, f64(X), f64(v))
    close(value, (X**3).sum() + X @ A @ X)
    close(hv, hess @ v)
    _, vh = AF.vhp(cubic, f64(X), f64(v))
    close(vh, v @ hess)


def test_functional_errors_as_torch():
    with pytest.raises(RuntimeError, match="v can only be None"):
        AF.vjp(lambda x: x * 2, f64(X))
    with pytest.raises(RuntimeError, match="v has invalid size"):
        AF.vjp(lambda x: x * 2, f64(X), f64([1.0]))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        AF.jacobian(lambda x: x, [f64(X)])
    with pytest.raises(RuntimeError, match="does not require gradients"):
        AF.vjp(lambda x: f64(X), f64(X), f64(X), strict=True)


def test_vjp_create_graph_keeps_history():
    x = f64(X, requires_grad=True)
    _, g = AF.vjp(lambda x: x**3, x, f64(np.ones(3)), create_graph=True)  # 3 x^2
    (gg,) = torch.autograd.grad(g.sum(), x)
    close(gg, 6 * X)


# ---------------------------------------------------------------------------
# gradcheck


class WrongSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # should be 2 x


def test_gradcheck_passes_on_correct_functions():
    x = f64(X, requires_grad=True)
    y = f64([[0.5, 1.0], [2.0, -1.0]], requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: (x**3).sin(), (x,))
    assert torch.autograd.gradcheck(lambda x, y: (y @ y, x.exp().sum()), (x, y))
    assert torch.autograd.gradcheck(lambda x: x * 2, x, check_forward_ad=True)
    assert torch.autograd.gradgradcheck(lambda x: (x**3).sin(), (x,))
    z = torch.tensor([1 + 2j, -0.5 + 1j], dtype=torch.complex128, requires_grad=True)
    assert torch.autograd.gradcheck(lambda z: (z * z.conj() + z**2, z.abs()), (z,))


def test_gradcheck_fails_on_a_wrong_backward():
    x = f64(X, requires_grad=True)
    with pytest.raises(
        GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"
    ):
        torch.autograd.gradcheck(WrongSquare.apply, (x,))
    assert isinstance(GradcheckError("x"), RuntimeError)
    assert torch.autograd.gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False
    # forward mode sees the forward, which is right
    assert torch.autograd.gradcheck(
        WrongSquare.apply, (x,), check_forward_ad=True, check_backward_ad=False
    )


def test_gradcheck_warns_for_single_precision_and_needs_an_input():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.autograd.gradcheck(lambda x: x * 2, (x,), eps=1e-2, atol=1e-2)
    assert any("is not a double precision" in str(m.message) for m in w)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        torch.autograd.gradcheck(lambda x: x, (f64(X),))
