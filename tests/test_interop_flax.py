"""Flax NNX bridges: nnx modules inside jtorch models, jtorch modules as nnx modules."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

nnx = pytest.importorskip("flax.nnx")

import jtorch  # noqa: E402
from jtorch.interop.flax import FlaxModule, from_flax_params, to_flax, to_flax_params  # noqa: E402


class _Net(nnx.Module):
    def __init__(self, rngs):
        self.lin = nnx.Linear(3, 4, rngs=rngs)
        self.bn = nnx.BatchNorm(4, rngs=rngs)
        self.out = nnx.Linear(4, 2, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.relu(self.bn(self.lin(x))))


def test_nnx_module_trains_inside_a_jtorch_model():
    net = _Net(nnx.Rngs(0))
    m = FlaxModule(net)
    names = [n for n, _ in m.named_parameters()]
    assert "lin.kernel" in names and "bn.scale" in names
    assert {n for n, _ in m.named_buffers()} == {"bn.mean", "bn.var"}
    x = jtorch.tensor(np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32))
    # the gradient the tape gives equals jax's gradient of the same nnx module
    loss = m(x).pow(2).sum()
    loss.backward()
    g = nnx.grad(lambda mod: (mod(jnp.asarray(x.numpy())) ** 2).sum())(_Net(nnx.Rngs(0)))
    np.testing.assert_allclose(
        m.get_parameter("lin.kernel").grad.numpy(),
        np.asarray(g.lin.kernel[...]),
        rtol=1e-5,
        atol=1e-6,
    )
    # running statistics were updated in train mode (they start at 0 and 1)
    assert not np.allclose(m.get_buffer("bn.mean").numpy(), 0)
    opt = jtorch.optim.SGD(m.parameters(), lr=0.1)
    before = m(x).pow(2).sum().item()
    for _ in range(5):
        opt.zero_grad()
        m(x).pow(2).sum().backward()
        opt.step()
    assert m(x).pow(2).sum().item() < before


def test_jtorch_module_as_an_nnx_module():
    lin = jtorch.nn.Linear(3, 2)
    fm = to_flax(lin)
    x = jnp.ones((4, 3), jnp.float32)
    np.testing.assert_allclose(fm(x), lin(jtorch.from_jax(x)).detach().numpy(), rtol=1e-6)
    # d/dW sum(W x + b) over a batch of ones: every entry is the batch size
    grads = nnx.grad(lambda m: m(x).sum())(fm)
    np.testing.assert_allclose(grads.params["weight"][...], np.full((2, 3), 4.0))
    out = jax.jit(lambda x: fm(x))(x)
    assert out.shape == (4, 2)


def test_layer_parameters_convert_both_ways():
    lin = jtorch.nn.Linear(3, 2)
    flax_lin = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    p = to_flax_params(lin)
    flax_lin.kernel[...] = p["kernel"]
    flax_lin.bias[...] = p["bias"]
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(
        flax_lin(jnp.asarray(x)), lin(jtorch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-7
    )
    back = from_flax_params(
        jtorch.nn.Linear(3, 2), {"kernel": flax_lin.kernel[...], "bias": flax_lin.bias[...]}
    )
    np.testing.assert_array_equal(back.weight.detach().numpy(), lin.weight.detach().numpy())
    emb = jtorch.nn.Embedding(5, 2) if hasattr(jtorch.nn, "Embedding") else None
    if emb is not None:
        assert to_flax_params(emb)["embedding"].shape == (5, 2)
