"""`jtorch.func`: transforms on jax's, checked against mathematics and numpy."""

import warnings

import numpy as np
import pytest

import jtorch as torch
from jtorch import func, nn
from tests.helpers import close

X = np.array([1.0, -2.0, 0.5])


def f64(a):
    return torch.tensor(np.asarray(a, dtype=np.float64).tolist(), dtype=torch.float64)


# ---------------------------------------------------------------------------
# grad and friends


def test_grad_of_cubic_sum():
    g = func.grad(lambda x: (x**3).sum())(f64(X))
    close(g, 3 * X**2)
    assert g.dtype == torch.float64 and not g.requires_grad


def test_grad_argnums_pytrees_and_aux():
    def f(p, x):
        out = (p["w"] * x).sum() + p["b"][0] ** 2
        return out, {"n": 3, "y": x * 2}

    p = {"w": f64([1.0, 2.0, 3.0]), "b": [f64(2.0)]}
    g, aux = func.grad(f, argnums=0, has_aux=True)(p, f64(X))
    close(g["w"], X)
    close(g["b"][0], 4.0)
    assert aux["n"] == 3
    close(aux["y"], 2 * X)
    gp, gx = func.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(f64(X), f64(2 * X))
    close(gp, 2 * X)
    close(gx, X)


def test_grad_and_value_and_nesting():
    g, v = func.grad_and_value(lambda x: (x**3).sum())(f64(X))
    close(v, (X**3).sum())
    close(g, 3 * X**2)
    # d2/dx2 of x^4 is 12 x^2, through two nested jax.grad
    x = f64(1.5)
    close(func.grad(func.grad(lambda x: x**4))(x), 12 * 1.5**2)


def test_grad_errors_as_torch():
    x = f64(X)
    with pytest.raises(
        RuntimeError,
        match="Expected f\\(\\*args\\) to return a scalar Tensor, got tensor with 1 dims",
    ):
        func.grad(lambda x: x)(x)
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        func.grad(lambda x: x.sum(), has_aux=True)(x)
    with pytest.raises(RuntimeError, match="floating point"):
        func.grad(lambda x: x.sum())(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Got argnums=2"):
        func.grad(lambda x: x.sum(), argnums=2)(x)


def test_grad_complex_input_is_conjugate_of_jax():
    # PyTorch: the gradient of |z|^2 is 2 z (jax's convention gives 2 conj(z)).
    z = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex128)
    g = func.grad(lambda z: (z.abs() ** 2).sum())(z)
    np.testing.assert_allclose(g.numpy(), 2 * np.array([1 + 2j, 3 - 1j]))


def test_grad_of_function_using_the_tape_inside():
    def f(x):
        y = x.clone().requires_grad_()
        (g,) = torch.autograd.grad((y**2).sum(), y, create_graph=True)
        return (g * x).sum()  # 2 x^2, differentiated through both `g` and `x`

    close(func.grad(f)(f64(X)), 4 * X)


def test_grad_outputs_stay_on_the_tape():
    x = f64(X).requires_grad_()
    g = func.grad(lambda x: (x**3).sum())(x)  # 3 x^2
    assert g.requires_grad
    g.sum().backward()
    close(x.grad, 6 * X)


# ---------------------------------------------------------------------------
# vjp / jvp / jacobians / hessian


def test_vjp_and_jvp():
    A = np.array([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0]])
    a = f64(A)
    out, vjp_fn = func.vjp(lambda x: a @ x, f64(X))
    close(out, A @ X)
    (g,) = vjp_fn(f64([1.0, 2.0]))
    close(g, A.T @ [1.0, 2.0])
    out, t = func.jvp(lambda x: a @ x, (f64(X),), (f64([0.0, 1.0, 0.0]),))
    close(out, A @ X)
    close(t, A[:, 1])
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        func.jvp(lambda x: x, f64(X), f64(X))


def test_vjp_multiple_outputs_and_aux():
    out, vjp_fn, aux = func.vjp(
        lambda x, y: ((x * y, x + y), y.sum()), f64(X), f64(2 * X), has_aux=True
    )
    close(aux, 2 * X.sum())
    gx, gy = vjp_fn((f64([1.0, 1.0, 1.0]), f64([1.0, 0.0, 0.0])))
    close(gx, 2 * X + [1, 0, 0])
    close(gy, X + [1, 0, 0])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        vjp_fn((f64([1.0]), f64(X)))


def test_jacrev_jacfwd_match_the_analytic_jacobian():
    def f(x):
        return torch.stack([x[0] * x[1], x[1].sin(), x[2] ** 2])

    expected = np.array([[X[1], X[0], 0], [0, np.cos(X[1]), 0], [0, 0, 2 * X[2]]])
    close(func.jacrev(f)(f64(X)), expected)
    close(func.jacfwd(f)(f64(X)), expected)
    close(func.jacrev(f, chunk_size=1)(f64(X)), expected)
    close(func.jacrev(f, chunk_size=2)(f64(X)), expected)


def test_jacobian_structure_for_many_inputs_and_outputs():
    def f(x, y):
        return x * y.sum(), (x**2).sum()

    x, y = f64(X), f64([1.0, 2.0])
    for jac in (func.jacrev, func.jacfwd):
        (j0x, j0y), (j1x, j1y) = jac(f, argnums=(0, 1))(x, y)
        assert tuple(j0x.shape) == (3, 3) and tuple(j0y.shape) == (3, 2)
        assert tuple(j1x.shape) == (3,) and tuple(j1y.shape) == (2,)
        close(j0x, 3.0 * np.eye(3))
        close(j0y, np.stack([X, X], 1))
        close(j1x, 2 * X)
        close(j1y, [0.0, 0.0])


def test_hessian_of_quadratic_form():
    A = np.array([[1.0, 2.0, 0.0], [0.5, 3.0, 1.0], [0.0, -1.0, 2.0]])
    a = f64(A)
    h = func.hessian(lambda x: x @ (a @ x))(f64(X))
    close(h, A + A.T)


def test_linearize():
    out, jvp_fn = func.linearize(lambda x: x.sin(), f64(X))
    close(out, np.sin(X))
    close(jvp_fn(f64([1.0, 0.0, 2.0])), np.cos(X) * [1.0, 0.0, 2.0])


def test_jacrev_rejects_complex():
    with pytest.raises(RuntimeError, match="Expected all inputs to be real"):
        func.jacrev(lambda z: z * 2)(torch.tensor([1j]))


# ---------------------------------------------------------------------------
# vmap


def test_vmap_dot_is_batched_matvec():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    out = func.vmap(torch.dot)(f64(A), f64(B))
    close(out, np.einsum("bi,bi->b", A, B))
    M = rng.standard_normal((2, 3))
    out = func.vmap(lambda m, v: m @ v, in_dims=(None, 0))(f64(M), f64(A))
    close(out, A @ M.T)


def test_vmap_in_dims_out_dims_nested_and_chunks():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 5))
    pair = {"a": f64(A), "b": (f64(A.T), 2.0)}

    def f(d):
        return d["a"] * d["b"][0] * d["b"][1], d["a"].sum()

    for chunk in (None, 2):
        out, s = func.vmap(
            f, in_dims=({"a": 1, "b": (0, None)},), out_dims=(1, 0), chunk_size=chunk
        )(pair)
        close(out, 2 * A * A)
        close(s, A.sum(0))


def test_vmap_nested_and_with_grad_per_sample():
    rng = np.random.default_rng(2)
    W, xs = rng.standard_normal((3,)), rng.standard_normal((4, 3))

    def loss(w, x):
        return (w * x).sum() ** 2

    g = func.vmap(func.grad(loss), in_dims=(None, 0))(f64(W), f64(xs))
    close(g, 2 * (xs @ W)[:, None] * xs)
    outer = func.vmap(func.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))
    close(outer(f64(W), f64(W)), np.outer(W, W))


def test_vmap_errors_as_torch():
    x = f64(X)
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        func.vmap(lambda x, y: x + y)(x, 1.0)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        func.vmap(lambda x, y: x + y)(x, torch.ones(2))
    with pytest.raises(ValueError, match="expected in_dim to satisfy -1 <= in_dim < 1"):
        func.vmap(lambda x: x, in_dims=3)(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        func.vmap(lambda x: 1)(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        func.vmap(lambda x: torch.rand(2) + x)(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        func.vmap(lambda x: x if x > 0 else -x)(x)


def test_vmap_of_inplace_and_view_writes():
    def f(x):
        y = x.clone()
        y[0] = 5.0
        y.view(-1).mul_(2)
        return y

    xs = np.arange(6.0).reshape(2, 3)
    expected = xs * 2
    expected[:, 0] = 10.0
    close(func.vmap(f)(f64(xs)), expected)


def test_vmap_randomness_same_and_different():
    x = torch.zeros(4, 1)
    same = func.vmap(lambda x: torch.rand(1) + x, randomness="same")(x)
    assert np.unique(same.numpy()).size == 1
    diff = func.vmap(lambda x: torch.rand(1) + x, randomness="different")(x)
    assert np.unique(diff.numpy()).size == 4


# ---------------------------------------------------------------------------
# functional_call / stack_module_state (duck-typed modules)


class Affine:
    def __init__(self, w, b, tied=False):
        self.training = True
        self.weight = f64(w)
        self.bias = f64(b)
        self.scale = f64(1.0)
        self.tied = self.weight if tied else None

    def named_parameters(self):
        out = [("weight", self.weight), ("bias", self.bias)]
        return out + ([("tied", self.tied)] if self.tied is not None else [])

    def named_buffers(self):
        return [("scale", self.scale)]

    def __call__(self, x):
        y = (self.weight @ x + self.bias) * self.scale
        return y if self.tied is None else y + self.tied.sum()


def test_functional_call_swaps_and_restores():
    m = Affine(np.eye(2), [1.0, 1.0])
    w = f64([[2.0, 0.0], [0.0, 3.0]])
    out = func.functional_call(m, {"weight": w}, (f64([1.0, 1.0]),))
    close(out, [3.0, 4.0])
    out = func.functional_call(m, ({"weight": w}, {"scale": f64(2.0)}), f64([1.0, 1.0]))
    close(out, [6.0, 8.0])
    assert m.weight.numpy()[0, 0] == 1.0 and float(m.scale) == 1.0
    with pytest.raises(RuntimeError, match="Missing key"):
        func.functional_call(m, {"weight": w}, (f64([1.0, 1.0]),), strict=True)


def test_functional_call_ties_weights():
    m = Affine(np.eye(2), [0.0, 0.0], tied=True)
    w = f64([[2.0, 0.0], [0.0, 3.0]])
    close(func.functional_call(m, {"weight": w}, (f64([1.0, 1.0]),)), [7.0, 8.0])
    close(func.functional_call(m, {"weight": w}, (f64([1.0, 1.0]),), tie_weights=False), [4.0, 5.0])


def test_stack_module_state_ensemble_with_vmap():
    models = [Affine(np.eye(2) * k, [k, -k]) for k in (1.0, 2.0, 3.0)]
    params, buffers = func.stack_module_state(models)
    assert tuple(params["weight"].shape) == (3, 2, 2) and params["weight"].is_leaf
    assert tuple(buffers["scale"].shape) == (3,)

    def run(p, b, x):
        return func.functional_call(models[0], (p, b), (x,))

    out = func.vmap(run, in_dims=(0, 0, None))(params, buffers, f64([1.0, 2.0]))
    close(out, [[k + k, 2 * k - k] for k in (1.0, 2.0, 3.0)])
    with pytest.raises(RuntimeError, match="at least one model"):
        func.stack_module_state([])


# ---------------------------------------------------------------------------
# replace_all_batch_norm_modules_


def test_replace_all_batch_norm_modules_():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert torch.func.replace_all_batch_norm_modules_(m) is m
    bn = m[1]
    assert not bn.track_running_stats and bn.running_mean is None and bn.running_var is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = m.eval()(torch.tensor([[1.0, 2.0], [3.0, 6.0]]))  # batch statistics in eval
    assert np.allclose(out.sum(0).detach().numpy(), 2 * bn.bias.detach().numpy(), atol=1e-5)
