"""The tape is jax-traceable (DESIGN 5): forward, backward() and an update under jax.jit."""

import jax
import jax.numpy as jnp
import numpy as np

import jtorch
import jtorch.nn.functional as F
from jtorch._tensor import wrap


def _mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = F.relu(F.linear(x, w1, b1))
    return F.cross_entropy(F.linear(h, w2, b2), y)


def _sgd_step(param_arrays, x, y, lr=0.1):
    """One training step written the eager way, on tensors over whatever arrays it is given."""
    params = [wrap(a).requires_grad_() for a in param_arrays]
    loss = _mlp_loss(params, wrap(x), wrap(y))
    loss.backward()
    with jtorch.no_grad():
        for p in params:
            p.sub_(lr * p.grad)
    return loss._array, [p._array for p in params]


def _data():
    rng = np.random.default_rng(0)
    params = [
        rng.standard_normal((8, 4)) * 0.5,
        np.zeros(8),
        rng.standard_normal((3, 8)) * 0.5,
        np.zeros(3),
    ]
    params = [jnp.asarray(p, jnp.float32) for p in params]
    x = jnp.asarray(rng.standard_normal((5, 4)), jnp.float32)
    y = jnp.asarray([0, 1, 2, 1, 0])
    return params, x, y


def test_training_step_under_jit_matches_eager():
    params, x, y = _data()
    eager_params, jit_params = params, params
    step = jax.jit(_sgd_step)
    for _ in range(3):
        eager_loss, eager_params = _sgd_step(eager_params, x, y)
        jit_loss, jit_params = step(jit_params, x, y)
        np.testing.assert_allclose(jit_loss, eager_loss, rtol=1e-5, atol=1e-6)
        for a, b in zip(jit_params, eager_params):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert step._cache_size() == 1  # one trace, reused


def test_traced_gradient_is_the_analytic_one():
    # d/dw sum((w*x)^2) = 2 w x^2, computed by backward() inside jax.jit
    def f(w, x):
        wt = wrap(w).requires_grad_()
        ((wt * wrap(x)) ** 2).sum().backward()
        return wt.grad._array

    w = jnp.asarray([1.0, -2.0, 0.5])
    x = jnp.asarray([3.0, 1.0, 2.0])
    np.testing.assert_allclose(jax.jit(f)(w, x), 2 * w * x**2, rtol=1e-6)


def test_jax_grad_through_jtorch_backward():
    # jax can differentiate the tape's own backward: d/dw of (d/dw sum(w^3)) summed is 6w
    def g(w):
        wt = wrap(w).requires_grad_()
        (wt**3).sum().backward()
        return wt.grad._array.sum()

    w = jnp.asarray([1.0, 2.0, -1.0])
    np.testing.assert_allclose(jax.grad(g)(w), 6 * w, rtol=1e-6)
