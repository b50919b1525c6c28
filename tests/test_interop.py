"""Bridges to JAX: zero-copy arrays, pytrees, pure functions of modules, safetensors."""

import jax
import jax.numpy as jnp
import numpy as np

import jtorch
from jtorch.interop import safetensors as jst


def test_from_jax_and_back_share_the_array():
    a = jnp.arange(4.0)
    t = jtorch.from_jax(a)
    assert t.jax() is a and jtorch.interop.to_jax(t) is a


def test_tensors_are_pytrees():
    p = jtorch.nn.Parameter(jtorch.ones(2))
    leaves, tree = jax.tree_util.tree_flatten({"t": jtorch.zeros(3), "p": p})
    assert len(leaves) == 2
    back = jax.tree_util.tree_unflatten(tree, leaves)
    assert isinstance(back["p"], jtorch.nn.Parameter) and back["p"].requires_grad
    doubled = jax.jit(lambda d: {k: v * 2 for k, v in d.items()})({"x": jtorch.ones(2)})
    assert isinstance(doubled["x"], jtorch.Tensor) and doubled["x"].tolist() == [2.0, 2.0]


def test_module_as_pure_function_under_grad_and_vmap():
    lin = jtorch.nn.Linear(2, 1)
    params, apply = jtorch.interop.functional(lin)
    x = jnp.asarray([[1.0, 2.0], [3.0, -1.0]], jnp.float32)
    # d/dW sum(W x + b) = sum of the rows of x; d/db = batch size
    g = jax.grad(lambda p: apply(p, x).sum())(params)
    np.testing.assert_allclose(g["weight"], [[4.0, 1.0]])
    np.testing.assert_allclose(g["bias"], [2.0])
    ys = jax.vmap(apply, in_axes=(None, 0))(params, x)
    np.testing.assert_allclose(ys, apply(params, x), rtol=1e-6)


def test_safetensors_round_trip(tmp_path):
    src = {
        "a": jtorch.arange(6.0).reshape(2, 3),
        "b": jtorch.tensor([1, 2]),
        "c": jtorch.ones(2, dtype=jtorch.bfloat16),
    }
    jst.save_file(src, tmp_path / "x.safetensors", metadata={"k": "v"})
    raw = (tmp_path / "x.safetensors").read_bytes()
    n = int.from_bytes(raw[:8], "little")
    assert (8 + n) % 8 == 0  # data starts aligned
    back = jst.load_file(tmp_path / "x.safetensors")
    assert back["a"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert back["b"].dtype == jtorch.int64 and back["c"].dtype == jtorch.bfloat16
    assert jst.metadata(tmp_path / "x.safetensors") == {"k": "v"}


def test_dlpack_exchange_with_numpy():
    from jtorch.utils import dlpack

    t = jtorch.arange(4.0)
    np.testing.assert_array_equal(np.from_dlpack(t), [0.0, 1.0, 2.0, 3.0])
    back = dlpack.from_dlpack(np.arange(3, dtype=np.int32))
    assert back.dtype == jtorch.int32 and back.tolist() == [0, 1, 2]
    assert dlpack.from_dlpack(dlpack.to_dlpack(t)).tolist() == [0.0, 1.0, 2.0, 3.0]
