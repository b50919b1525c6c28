"""Op kernels' executables kept by jtorch's own key (jtorch/_stored.py).

A second process loads the kernels the first compiled without tracing them, and computes
the same bits; a kernel whose key would not read the same in another process, or that two
ops would share, is not kept; traced calls and calls the executable was not made for go
through the kernel's `jax.jit` wrapper.
"""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jtorch as torch
from jtorch import _disk_cache, _programs, _stored

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SCRIPT = """
import hashlib, json, numpy as np, jtorch as torch
rng = np.random.default_rng(0)
x = torch.from_numpy(rng.standard_normal((5, 7)).astype(np.float32))
h = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float16))
outs = [
    torch.nn.functional.gelu(x) * 1.5 + 2,  # Python numbers beside a tensor
    torch.cat([x, x.exp()], 1).softmax(-1),  # a list of tensors in one slot
    (h @ h.T).float(),  # float16
    x.sum(1, keepdim=True).argmax(0),
    torch.where(x > 0, x, torch.zeros(()) - 1),
]
w = torch.ones(7, 3, requires_grad=True)
loss = (x @ w).tanh().sum()
loss.backward()  # (the kernels' backwards: by jax's key)
v = x.clone()
v[1:4, ::2] = v[1:4, ::2] * 2  # a view's write
outs += [loss.detach(), w.grad, v]
digest = hashlib.sha256(b"".join(o.numpy().tobytes() for o in outs)).hexdigest()
print(json.dumps(dict(torch.compiler.stats(), digest=digest, caches=None)))
"""


def _run(cache, **env):
    # (on the CPU alone: a host with an accelerator has several devices, where nothing is kept)
    base = {k: v for k, v in os.environ.items() if k != "JTORCH_STORED_KERNELS"}
    env = dict(base, JTORCH_CACHE_DIR=str(cache), PYTHONPATH=ROOT, JAX_PLATFORMS="cpu", **env)
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_kernels_untraced_and_computes_the_same(tmp_path):
    first = _run(tmp_path)
    second = _run(tmp_path)
    assert first["compiles"] > 0 and first["stored_hits"] == 0
    # every program comes back from disk, most of them (kernels, views) untraced; the rest
    # (the backwards, helpers of jax's own) by jax's key
    assert second["compiles"] == 0 and second["stored_hits"] > second["disk_hits"] > 0
    assert second["stored_hits"] + second["disk_hits"] == first["compiles"]
    assert second["digest"] == first["digest"]
    kept = [f for f in os.listdir(tmp_path) if f.startswith("jtorch-kernel-")]
    assert len(kept) == second["stored_hits"]
    # with the store off, nothing is loaded by jtorch's key (jax's cache still answers)
    off = _run(tmp_path, JTORCH_STORED_KERNELS="0")
    assert off["stored_hits"] == 0 and off["compiles"] == 0 and off["digest"] == first["digest"]


def test_another_jtorch_setting_is_another_key(tmp_path):
    _run(tmp_path)
    # a JTORCH_* setting may change what a kernel compiles to: it is part of every key
    other = _run(tmp_path, JTORCH_SOME_SETTING="1")
    assert other["stored_hits"] == 0


def _jtorch_impl(a):
    return a


_jtorch_impl.__module__ = "jtorch.test_stored"  # (as if one of jtorch's own ops)


def test_a_users_op_is_not_kept():
    class Op:
        name = "mylib::f"
        impl = staticmethod(lambda a: a)  # defined outside jtorch: may change between runs

    fn = jax.jit(lambda a: a)
    assert _stored.wrap(fn, Op(), ()) is fn


def test_keys_that_name_objects_by_address_are_not_kept():
    class Op:
        name = "test_stored_op"
        impl = staticmethod(_jtorch_impl)

    fn = jax.jit(lambda a: a + 1)
    if not _stored.enabled():
        pytest.skip("the store is off in this run")
    kept = _stored.wrap(fn, Op(), ((1, 2.5, "mean"),))
    assert isinstance(kept, _stored.StoredKernel)
    # an object printed by its address would name another program in another process
    assert _stored.wrap(fn, Op(), ((object(),),)) is fn


def test_two_ops_of_one_name_keep_neither():
    if not _stored.enabled():
        pytest.skip("the store is off in this run")

    class Op:
        name = "test_stored_twins"

        def __init__(self):
            self.impl = _jtorch_impl

    a, b = Op(), Op()
    fn = jax.jit(lambda v: v)
    assert isinstance(_stored.wrap(fn, a, ()), _stored.StoredKernel)
    assert _stored.wrap(fn, b, ()) is fn
    assert _stored.wrap(fn, a, ()) is fn  # once shared, not kept for either


def test_traced_and_other_calls_go_through_the_jit_wrapper(tmp_path, monkeypatch):
    monkeypatch.setitem(_disk_cache._state, "store", _disk_cache.AtomicStore(str(tmp_path), 10**9))
    monkeypatch.setitem(_stored._state, "off", False)
    if not _stored.enabled():
        pytest.skip("several devices: the store is off")
    calls = []

    def body(a, b):
        calls.append(1)  # counts traces
        return a * b + 1

    class Op:
        name = "test_stored_calls"
        impl = staticmethod(_jtorch_impl)

    kernel = _stored.wrap(jax.jit(body), Op(), ())
    x = jnp.arange(4.0)
    np.testing.assert_array_equal(kernel(x, 2.0), np.arange(4.0) * 2 + 1)
    assert kernel.call is not None and len(calls) == 1
    np.testing.assert_array_equal(kernel(x, 3.0), np.arange(4.0) * 3 + 1)
    assert len(calls) == 1  # the executable ran: no new trace
    # under a trace, and for arguments of another shape, it is the jax.jit wrapper
    np.testing.assert_array_equal(jax.jit(lambda v: kernel(v, 2.0))(x), np.arange(4.0) * 2 + 1)
    np.testing.assert_array_equal(kernel(jnp.ones(3), 2.0), np.full(3, 3.0))
    grad = jax.grad(lambda v: kernel(v, 5.0).sum())(x)
    np.testing.assert_array_equal(grad, np.full(4, 5.0))


def test_a_kept_kernel_backs_a_tensor_op_with_its_gradient():
    # whatever the store holds, an op's values and gradients are the mathematics'
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x.exp() * 3.0).sum()
    y.backward()
    np.testing.assert_allclose(y.item(), 3 * np.exp([0.5, -1.0, 2.0]).sum(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp([0.5, -1.0, 2.0]), rtol=1e-6)


def test_an_entry_that_lost_its_code_is_forgotten_and_the_call_compiles(tmp_path, monkeypatch):
    store = _disk_cache.AtomicStore(str(tmp_path), 10**9)
    monkeypatch.setitem(_disk_cache._state, "store", store)
    monkeypatch.setitem(_stored._state, "off", False)
    if not _stored.enabled() or not jax.config.jax_compilation_cache_dir:
        pytest.skip("needs the store and jax's persistent cache")

    def body(a):
        return jnp.sin(a) * 3 + a

    class Op:
        name = "test_stored_lost"
        impl = staticmethod(_jtorch_impl)

    x = jnp.linspace(0.0, 1.0, 8, dtype=jnp.float32)
    jax.jit(body).lower(x).compile()  # in jax's cache now
    jax.clear_caches()
    hits = _programs.disk_hits()
    again = jax.jit(body).lower(x).compile()  # read from it
    assert _programs.disk_hits() == hits + 1
    kernel = _stored.wrap(jax.jit(body), Op(), ())
    digest = _stored._digest(kernel.key, *_stored._signature((x,)))
    # serialized again, an executable jax read from its cache loses its code: such an
    # entry is written here on purpose, where the kernel will look
    _stored._write(digest, again)
    assert os.path.exists(tmp_path / (_stored._PREFIX + digest + "-cache"))
    np.testing.assert_allclose(kernel(x), np.sin(np.asarray(x)) * 3 + np.asarray(x), rtol=1e-6)
    assert not os.path.exists(tmp_path / (_stored._PREFIX + digest + "-cache"))  # forgotten
