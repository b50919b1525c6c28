"""Interop with the safetensors package (PyTorch API) and with jax transforms."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
st_torch = pytest.importorskip("safetensors.torch")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jtorch  # noqa: E402
from jtorch.interop import safetensors as jst  # noqa: E402


def test_safetensors_written_by_the_package_loads(tmp_path):
    src = {
        "w": torch.arange(6.0).reshape(2, 3),
        "i": torch.tensor([1, -2]),
        "h": torch.tensor([0.5], dtype=torch.bfloat16),
        "m": torch.tensor([True, False]),
    }
    st_torch.save_file(src, tmp_path / "a.safetensors", metadata={"format": "pt"})
    out = jst.load_file(tmp_path / "a.safetensors")
    assert set(out) == set(src)
    for k, v in src.items():
        assert str(out[k].dtype) == str(v.dtype) and tuple(out[k].shape) == tuple(v.shape)
        np.testing.assert_array_equal(out[k].float().numpy(), v.float().numpy())
    assert jst.metadata(tmp_path / "a.safetensors") == {"format": "pt"}


def test_safetensors_written_by_jtorch_loads_in_the_package(tmp_path):
    m = jtorch.nn.Linear(3, 2)
    jst.save_file(dict(m.state_dict()), tmp_path / "b.safetensors")
    out = st_torch.load_file(tmp_path / "b.safetensors")
    tm = torch.nn.Linear(3, 2)
    tm.load_state_dict(out)
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(
        tm(torch.tensor(x)).detach().numpy(), m(jtorch.tensor(x)).detach().numpy(), rtol=1e-6
    )


def test_module_as_a_pure_jax_function_matches_torch():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    jm = jtorch.nn.Sequential(jtorch.nn.Linear(3, 4), jtorch.nn.Tanh(), jtorch.nn.Linear(4, 1))
    jm.load_state_dict({k: jtorch.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    params, apply = jtorch.interop.functional(jm)
    x = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    loss = jax.jit(lambda p, x: (apply(p, x) ** 2).sum())
    grads = jax.grad(loss)(params, jnp.asarray(x))
    (tm(torch.tensor(x)) ** 2).sum().backward()
    for name, p in tm.named_parameters():
        np.testing.assert_allclose(np.asarray(grads[name]), p.grad.numpy(), rtol=1e-5, atol=1e-6)
    per_example = jax.vmap(apply, in_axes=(None, 0))(params, jnp.asarray(x)[:, None])
    np.testing.assert_allclose(
        np.asarray(per_example)[:, 0], tm(torch.tensor(x)).detach().numpy(), rtol=1e-5
    )
