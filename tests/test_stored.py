"""Op kernels' executables kept by jtorch's own key (jtorch/_stored.py).

A second process loads the kernels the first compiled without tracing them, and computes
the same bits; a kernel whose key would not read the same in another process, or that two
ops would share, is not kept; traced calls and calls the executable was not made for go
through the kernel's `jax.jit` wrapper.
"""

import json
import os
import pickle
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
loss.backward()  # (the kernels' backwards are kept too)
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
    # every program comes back from disk, most of them (kernels, their backwards, views)
    # untraced; the rest (helpers of jax's own) by jax's key
    assert second["compiles"] == 0 and second["stored_hits"] > second["disk_hits"] > 0
    assert second["stored_hits"] + second["disk_hits"] == first["compiles"]
    assert second["digest"] == first["digest"]
    kept = [f for f in os.listdir(tmp_path) if f.startswith("jtorch-kernel-")]
    assert len(kept) == second["stored_hits"]
    # with the store off, nothing is loaded by jtorch's key (jax's cache still answers)
    off = _run(tmp_path, JTORCH_STORED_KERNELS="0")
    assert off["stored_hits"] == 0 and off["compiles"] == 0 and off["digest"] == first["digest"]


def test_another_jtorch_setting_is_another_key(tmp_path):
    first = _run(tmp_path)
    # a JTORCH_* setting may change what a kernel compiles to: it is part of every key
    other = _run(tmp_path, JTORCH_SOME_SETTING="1")
    assert other["stored_hits"] == 0 and other["compiles"] == 0  # (jax's cache: its key)
    # what jax read from its cache was kept with the bytes of jax's own entry (serialized
    # again, it would have lost its code): as after an upgrade of jtorch, the next process
    # loads it by jtorch's new key
    again = _run(tmp_path, JTORCH_SOME_SETTING="1")
    plain = _run(tmp_path)  # (a second run under the first key)
    assert again["compiles"] == 0 and again["stored_hits"] == plain["stored_hits"] > 0
    assert again["digest"] == plain["digest"] == first["digest"]


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
    entry = tmp_path / (_stored._PREFIX + digest + "-cache")
    # serialized again, an executable jax read from its cache loses its code: `_write`
    # does not keep it (no code in its bytes, and a copy loaded from them fails to run) ...
    _stored._write(digest, again, next(iter(x.devices())), (x,))
    assert not os.path.exists(entry)
    # ... and one written anyway (here on purpose, where the kernel will look) is forgotten
    from jax.experimental import serialize_executable

    entry_data = (*serialize_executable.serialize(again), None)
    store.put(_stored._PREFIX + digest, pickle.dumps(entry_data))
    assert os.path.exists(entry)
    np.testing.assert_allclose(kernel(x), np.sin(np.asarray(x)) * 3 + np.asarray(x), rtol=1e-6)
    assert not os.path.exists(entry)  # forgotten


def test_a_program_without_generated_code_is_kept_once_a_copy_of_it_ran(tmp_path, monkeypatch):
    store = _disk_cache.AtomicStore(str(tmp_path), 10**9)
    monkeypatch.setitem(_disk_cache._state, "store", store)
    monkeypatch.setitem(_stored._state, "off", False)
    if not _stored.enabled():
        pytest.skip("needs the store")
    rng = np.random.default_rng(3)
    a = jnp.asarray(rng.standard_normal((61, 67)), jnp.float32)
    b = jnp.asarray(rng.standard_normal((67, 59)), jnp.float32)
    compiled = jax.jit(jnp.dot).lower(a, b).compile()
    from jax.experimental import serialize_executable

    if b"\x7fELF" in serialize_executable.serialize(compiled)[0]:
        pytest.skip("this XLA generates code for a dot: the check below is not reached")
    # a dot is a library call on the CPU: its bytes hold no generated code, whether or not
    # jax read it from its cache; a copy loaded from them ran the call, so it is kept
    _stored._write("dot-digest", compiled, next(iter(a.devices())), (a, b))
    loaded = _stored._load("dot-digest", next(iter(a.devices())))
    assert loaded is not None
    np.testing.assert_array_equal(np.asarray(loaded[0](a, b)), np.asarray(compiled(a, b)))


_BACKWARD = """
import json, os, jtorch as torch
x = torch.linspace(-1, 1, 35).reshape(5, 7).requires_grad_(os.environ["GRAD"] == "1")
y = (x.tanh() * 2).sum()
if x.requires_grad:
    y.backward()
s = torch.compiler.stats()
print(json.dumps({k: s[k] for k in ("compiles", "disk_hits", "stored_hits")}))
"""


def test_a_kernels_backward_is_kept_with_the_kernel(tmp_path):
    def run(cache, grad):
        env = {k: v for k, v in os.environ.items() if k != "JTORCH_STORED_KERNELS"}
        env.update(JTORCH_CACHE_DIR=str(cache), PYTHONPATH=ROOT, JAX_PLATFORMS="cpu", GRAD=grad)
        out = subprocess.run(
            [sys.executable, "-c", _BACKWARD], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    run(tmp_path / "forward", "0")
    forward = run(tmp_path / "forward", "0")
    run(tmp_path / "backward", "1")
    backward = run(tmp_path / "backward", "1")
    assert forward["compiles"] == backward["compiles"] == 0
    # tanh's, mul's and sum's backwards came back untraced beside their kernels (the
    # gradient's seed, `ones`, may come from jax's cache)
    assert backward["stored_hits"] >= forward["stored_hits"] + 3
    assert backward["disk_hits"] <= 1


_HOSTED = """
import json, os, numpy as np, jtorch as torch
from jtorch import _programs
from jtorch._ops import _host
_programs.HOST_RENT_S = 0.0  # (compiled at its COMPILE_AFTER-th call, whatever the host's cost)
a = torch.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
b = torch.from_numpy(np.arange(8, dtype=np.float32).reshape(2, 4))
for _ in range(int(os.environ["CALLS"])):
    out = torch.cat([a, b])
s = torch.compiler.stats()
print(json.dumps({"stored": s["stored_hits"], "plans": len(_host._PLANS), "sum": out.sum().item()}))
"""


def test_a_kept_kernel_runs_instead_of_the_host_path(tmp_path):
    def run(calls, **extra):
        env = {k: v for k, v in os.environ.items() if k != "JTORCH_STORED_KERNELS"}
        env.update(JTORCH_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT, JAX_PLATFORMS="cpu")
        env.update(CALLS=str(calls), **extra)
        out = subprocess.run(
            [sys.executable, "-c", _HOSTED], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    # `cat` of a shape seen fewer than COMPILE_AFTER times runs on the host (its plan traces
    # the kernel); seen more often, it compiles, and the executable is kept
    first = run(_programs.COMPILE_AFTER + 2)
    assert first["plans"] >= 1 and first["sum"] == 66 + 28
    # a later process's first call finds the executable by its key: no plan is traced
    second = run(1)
    assert second["plans"] == 0 and second["stored"] >= 1 and second["sum"] == first["sum"]
    off = run(1, JTORCH_STORED_KERNELS="0")
    assert off["plans"] >= 1


_OPTIMIZER = """
import json, numpy as np, jtorch as torch
from jtorch import _stored
made = []
executable = _stored.StoredKernel._executable
def recording(self, args, **kw):
    out = executable(self, args, **kw)
    made.append((self.key, None if out is None else out[2]))
    return out
_stored.StoredKernel._executable = recording
w = torch.nn.Parameter(torch.from_numpy(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)  # its first update adds momentum_buffer
for _ in range(3):
    opt.zero_grad()
    (w * w).sum().backward()
    opt.step()
how = [h for k, h in made if k.startswith("('program', 'optimizer'")]
print(json.dumps({"how": how, "w": w.detach().numpy().tolist(),
                  "buffer": opt.state[w]["momentum_buffer"].numpy().tolist()}))
"""


def test_an_optimizers_step_is_kept_with_the_state_keys_it_makes(tmp_path):
    def run():
        env = {k: v for k, v in os.environ.items() if k != "JTORCH_STORED_KERNELS"}
        env.update(JTORCH_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT, JAX_PLATFORMS="cpu")
        out = subprocess.run(
            [sys.executable, "-c", _OPTIMIZER], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    first, second = run(), run()
    assert first["how"] and set(first["how"]) == {"compiled"}
    # loaded untraced: the state keys its first update adds come from the entry
    assert second["how"] and set(second["how"]) == {"loaded"}
    assert second["w"] == first["w"] and second["buffer"] == first["buffer"]
    # PyTorch's SGD: b = 0.9 b + g (b = g at first), w -= 0.1 b, with g = 2 w
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    b = None
    for _ in range(3):
        g = 2 * w
        b = g if b is None else np.float32(0.9) * b + g
        w = w - np.float32(0.1) * b
    np.testing.assert_allclose(second["w"], w, rtol=1e-6)
