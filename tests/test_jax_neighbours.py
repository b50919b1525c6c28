"""Flax and optax code running in the same process as jtorch.

Importing jtorch switches on jax's x64 mode for the whole process (torch's int64 and float64
need it). A flax + optax training step keeps its float32 parameters, gradients, optimizer
state and outputs when its data are float32 (numpy float32 arrays, or arrays made with an
explicit dtype), as flax examples make them. What changes is jax's *default* dtype: arrays
made without a dtype from Python floats (`jnp.ones(n)`, `jnp.array(1.5)`) are float64, as the
README says.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

import jtorch  # noqa: F401 - the point is to run next to it


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(8, 16, rngs=rngs)
        self.l2 = nnx.Linear(16, 2, rngs=rngs)

    def __call__(self, x):
        return self.l2(jax.nn.relu(self.l1(x)))


def test_flax_optax_step_keeps_float32():
    model = MLP(nnx.Rngs(0))
    opt = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = rng.standard_normal((32, 2)).astype(np.float32)

    @nnx.jit
    def step(model, opt, x, y):
        def loss_fn(m):
            return jnp.mean((m(x) - y) ** 2)

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        opt.update(model, grads)
        return loss, grads

    losses = []
    for _ in range(20):
        loss, grads = step(model, opt, x, y)
        losses.append(float(loss))
    assert loss.dtype == jnp.float32
    leaves = jax.tree_util.tree_leaves(nnx.state(model, nnx.Param))
    assert leaves and all(p.dtype == jnp.float32 for p in leaves)
    assert all(g.dtype == jnp.float32 for g in jax.tree_util.tree_leaves(grads))
    moments = [a for a in jax.tree_util.tree_leaves(nnx.state(opt)) if a.ndim > 0]
    assert moments and all(a.dtype == jnp.float32 for a in moments)
    assert losses[-1] < losses[0]


def test_default_dtypes_are_64_bit_next_to_jtorch():
    # The documented difference: jax's defaults follow x64 mode.
    assert jnp.ones(2).dtype == jnp.float64
    assert jnp.ones(2, jnp.float32).dtype == jnp.float32
