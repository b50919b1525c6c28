"""The Tensor's Python protocol, indexing, factories, devices and the alias runner."""

import os
import subprocess
import sys

import numpy as np
import pytest

import jtorch as torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_metadata():
    x = torch.zeros(2, 3)
    assert x.shape == torch.Size([2, 3]) and x.size(1) == 3 and x.size(-2) == 2
    assert repr(x.shape) == "torch.Size([2, 3])"
    assert x.dim() == x.ndim == 2 and x.numel() == 6 and len(x) == 2
    assert x.dtype is torch.float32 and x.device == torch.device("cpu")
    with pytest.raises(
        IndexError,
        match=r"Dimension out of range \(expected to be in range of "
        r"\[-2, 1\], but got 2\)",
    ):
        x.size(2)


def test_python_protocol():
    assert torch.tensor(3.5).item() == 3.5 and int(torch.tensor(7)) == 7
    assert float(torch.tensor([2.0])) == 2.0
    assert [0, 1, 2][torch.tensor(1)] == 1
    assert bool(torch.tensor(1)) and not bool(torch.tensor(0.0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(torch.tensor([1, 2]))
    with pytest.raises(TypeError):
        [0][torch.tensor(0.0)]
    assert [t.tolist() for t in torch.tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
    x = torch.tensor([1, 2])
    assert hash(x) == hash(x) and {x: 1}[x] == 1
    assert np.asarray(x).tolist() == [1, 2] and x.numpy().dtype == np.int64
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(torch.tensor(1))


def test_operators():
    a = torch.tensor([1.0, 2.0, 3.0])
    assert (2 - a).tolist() == [1, 0, -1] and (6 / a).tolist() == [6, 3, 2]
    assert (a**2).tolist() == [1, 4, 9] and (2**a).tolist() == [2, 4, 8]
    assert (-a).tolist() == [-1, -2, -3] and (a // 2).tolist() == [0, 1, 1]
    assert (torch.tensor([5, -5]) % 3).tolist() == [2, 1]  # Python-style modulo
    b = a
    b += 1
    assert b is a and a.tolist() == [2, 3, 4]
    m = torch.tensor([True, False])
    assert (~m).tolist() == [False, True] and (m | torch.tensor([False, True])).tolist() == [
        True,
        True,
    ]


def test_getitem_kinds():
    x = torch.arange(24).reshape(2, 3, 4)
    n = np.arange(24).reshape(2, 3, 4)
    for idx in [
        0,
        -1,
        (1, 2),
        (slice(None), 1),
        (Ellipsis, 2),
        (None, 0),
        (0, slice(1, None, 2)),
        ([0, 1], [2, 0]),
        (slice(None), [0, 2], slice(1, 3)),
        (Ellipsis, [1, 3]),
        (0, Ellipsis, None),
    ]:
        np_idx = (
            tuple(np.asarray(i) if isinstance(i, list) else i for i in idx)
            if isinstance(idx, tuple)
            else idx
        )
        assert x[idx].tolist() == n[np_idx].tolist(), idx
    assert x[x > 20].tolist() == [21, 22, 23]
    assert x[torch.tensor([1, 0])].shape == torch.Size([2, 3, 4])
    assert x[1, torch.tensor(2)].tolist() == n[1, 2].tolist()


def test_getitem_errors():
    x = torch.zeros(2, 3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 1 with size 3"):
        x[0, 5]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[torch.tensor([0, 7])]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]


def test_setitem():
    x = torch.zeros(3, 4)
    x[0, 1:3] = 5
    x[1] = torch.arange(4.0)
    x[torch.tensor([2, 2]), torch.tensor([0, 3])] = torch.tensor([7.0, 8.0])
    x[x == 3] = -1
    assert x.tolist() == [[0, 5, 5, 0], [0, 1, 2, -1], [7, 0, 0, 8]]
    with pytest.raises(RuntimeError):
        x[0] = torch.ones(3)
    assert x[0].tolist() == [0, 5, 5, 0]
    i = torch.zeros(2, dtype=torch.int64)
    i[0] = 2.7  # setitem casts like copy_
    assert i.tolist() == [2, 0]


def test_factories():
    assert torch.tensor([1, 2]).dtype is torch.int64
    assert torch.tensor([1, 2.0]).dtype is torch.float32
    assert torch.tensor([True]).dtype is torch.bool
    assert torch.tensor(np.zeros(2)).dtype is torch.float64
    assert torch.zeros(2, 3).shape == (2, 3) and torch.ones((2,)).tolist() == [1, 1]
    assert torch.full((2,), 7).dtype is torch.int64
    assert torch.arange(5).dtype is torch.int64 and torch.arange(0, 1, 0.25).tolist() == [
        0,
        0.25,
        0.5,
        0.75,
    ]
    assert torch.linspace(0, 1, 5).tolist() == [0, 0.25, 0.5, 0.75, 1]
    assert torch.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert torch.zeros_like(torch.ones(2, dtype=torch.int32)).dtype is torch.int32
    assert torch.tensor([1.0], requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        torch.tensor([1], requires_grad=True)
    with pytest.raises(ValueError, match="expected sequence of length 2 at dim 1"):
        torch.tensor([[1, 2], [3]])


def _aligned(n, align=64):
    """A float32 numpy array whose buffer starts on an `align`-byte boundary (as PyTorch's
    and many allocators' buffers do): the case where jax may alias instead of copying."""
    raw = np.zeros(n + align, np.float32)
    k = (-raw.ctypes.data % align) // 4
    a = raw[k : k + n]
    assert a.ctypes.data % align == 0
    a[:] = np.arange(n)
    return a


def test_tensors_from_numpy_own_their_values():
    # torch.tensor copies its data; jtorch's from_numpy/as_tensor copy too (jax arrays are
    # immutable). Writing into the numpy buffer afterwards must change none of them.
    from jtorch.utils.data import default_convert

    a = _aligned(64)
    made = [
        torch.tensor(a),
        torch.tensor(a, dtype=torch.float32),
        torch.from_numpy(a),
        torch.as_tensor(a),
        torch.as_tensor(a, dtype=torch.float32),
        default_convert(a),
        torch.tensor(a, dtype=torch.bfloat16),
    ]
    a[:] = -1.0
    for t in made:
        np.testing.assert_array_equal(t.float().numpy(), np.arange(64, dtype=np.float32))


def test_out_argument():
    out = torch.empty(3)
    r = torch.add(torch.ones(3), 1, out=out)
    assert r is out and out.tolist() == [2, 2, 2]
    bad = torch.empty(3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.add(torch.ones(3), 1, out=bad)


def test_shape_mismatch_raises_torch_error():
    with pytest.raises(
        RuntimeError,
        match=r"The size of tensor a \(3\) must match the size of "
        r"tensor b \(2\) at non-singleton dimension 0",
    ):
        torch.ones(3) + torch.ones(2)
    x = torch.ones(3)
    with pytest.raises(RuntimeError):
        x.add_(torch.ones(2, 3))
    assert x.tolist() == [1, 1, 1]


def test_devices():
    d = torch.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and str(d) == "cuda:1"
    assert repr(torch.device("cpu")) == "device(type='cpu')"
    assert torch.device("cpu") == torch.device("cpu")
    assert torch.zeros(2, device="cpu").device.type == "cpu"
    assert torch.zeros(2).to("cpu").device == torch.device("cpu")
    if not torch.cuda.is_available():
        assert torch.cuda.device_count() == 0
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            torch.zeros(2, device="cuda")
    with pytest.raises(RuntimeError):
        torch.device("gpu")


def test_random_reproducible():
    torch.manual_seed(3)
    a = torch.rand(4)
    torch.manual_seed(3)
    b = torch.rand(4)
    assert a.tolist() == b.tolist()
    state = torch.get_rng_state()
    c = torch.randn(3)
    torch.set_rng_state(state)
    assert torch.randn(3).tolist() == c.tolist()
    g = torch.Generator().manual_seed(5)
    assert torch.rand(2, generator=g).tolist() != torch.rand(2).tolist()


def _run(args, **kw):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(
        [sys.executable, "-m", "jtorch", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        **kw,
    )


def test_alias_runner(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "import sys, torch, torch.nn.functional as F\n"
        "from torch import linalg\n"
        "import jtorch\n"
        "assert torch is jtorch and F is jtorch.nn.functional\n"
        "print(__name__, sys.argv[1:], torch.tensor([1., 2.]) * 2)\n"
    )
    r = _run([str(script), "a", "--b"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "__main__ ['a', '--b'] tensor([2., 4.])\n"
    r = _run(["-c", "import torch; print(torch.arange(3))"])
    assert r.stdout == "tensor([0, 1, 2])\n", r.stderr


def test_device_mix_raises(tmp_path):
    # Two host devices stand in for cpu + accelerator: ops must refuse to mix them.
    code = (
        "import jax, jtorch as torch\n"
        "a = torch.ones(2)\n"
        "b = torch.ones(2)\n"
        "b._storage.value = jax.device_put(b._array, jax.devices('cpu')[1])\n"
        "try:\n"
        "    a + b\n"
        "except RuntimeError as e:\n"
        "    print('raised', 'Expected all tensors to be on the same device' in str(e))\n"
        "print(a.tolist())\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.stdout == "raised True\n[1.0, 1.0]\n", r.stderr


def test_contains_and_numpy_scalars():
    x = torch.tensor([[1, 2], [3, 4]])
    assert 3 in x and 5 not in x and torch.tensor(4) in x
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        _ = "a" in x
    r = np.float64(2.0) * torch.tensor([1.0, 2.0])
    assert isinstance(r, torch.Tensor) and r.dtype is torch.float32 and r.tolist() == [2, 4]


def test_legacy_constructor():
    assert torch.Tensor(2, 3).shape == (2, 3) and torch.Tensor(2, 3).dtype is torch.float32
    assert torch.Tensor([1, 2]).dtype is torch.float32 and torch.Tensor([1, 2]).tolist() == [1, 2]
    assert torch.Tensor().shape == (0,)


def test_more_factories_and_like_methods():
    base = torch.ones(2, 3, dtype=torch.float64)
    assert torch.as_tensor(base) is base
    assert torch.as_tensor([1, 2], dtype=torch.float32).tolist() == [1.0, 2.0]
    assert torch.empty_like(base).shape == (2, 3) and torch.empty_like(base).dtype is torch.float64
    assert torch.ones_like(base, dtype=torch.int32).tolist() == [[1, 1, 1], [1, 1, 1]]
    assert base.new_zeros(2).dtype is torch.float64 and base.new_ones((1, 2)).shape == (1, 2)
    assert base.new_full((2,), 7).tolist() == [7.0, 7.0] and base.new_empty(3).shape == (3,)
    assert base.new_tensor([1, 2]).dtype is torch.float64
    assert torch.scalar_tensor(3).dtype is torch.float32 and torch.scalar_tensor(3).ndim == 0
    assert torch.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0]
    assert torch.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert torch.triu_indices(2, 3, 1).tolist() == [[0, 0, 1], [1, 2, 2]]
    s = torch.empty_strided((2, 2), (1, 2))
    assert s.stride() == (1, 2) and s.shape == (2, 2)


def test_shape_like_methods_are_views():
    x = torch.arange(6.0)
    y = torch.zeros(2, 3)
    v = x.view_as(y)
    v[0, 0] = 100
    assert x[0].item() == 100 and x.reshape_as(y).shape == (2, 3)
    e = torch.tensor([[1.0], [2.0]]).expand_as(y)
    assert e.tolist() == [[1, 1, 1], [2, 2, 2]] and e.stride() == (1, 0)
    a, b = x.split_with_sizes([2, 4])
    assert a.tolist() == [100, 1] and b.shape == (4,)


def test_index_put():
    x = torch.zeros(3)
    r = torch.index_put(x, (torch.tensor([0, 2]),), torch.tensor([5.0, 6.0]))
    assert r.tolist() == [5, 0, 6] and x.tolist() == [0, 0, 0]
    x.index_put_((torch.tensor([1, 1]),), torch.tensor(1.0), accumulate=True)
    assert x.tolist() == [0, 2, 0]


def test_xla_out_of_memory_is_pytorchs_error():
    import jax

    from jtorch import _errors

    oom = jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 8 bytes.")
    err = _errors.translate_runtime_error(oom)
    assert isinstance(err, torch.cuda.OutOfMemoryError) and isinstance(err, RuntimeError)
    other = jax.errors.JaxRuntimeError("INTERNAL: something else")
    assert _errors.translate_runtime_error(other) is other
    # without an accelerator, torch.cuda answers as PyTorch's CPU build
    if not torch.cuda.is_available():
        assert torch.cuda.get_arch_list() == [] and torch.cuda.memory_cached() == 0
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            torch.cuda.get_device_properties(0)
        with pytest.raises(RuntimeError, match="NVTX functions not installed"):
            torch.cuda.nvtx.range_push("x")


def test_legacy_tensor_constructor_forms():
    # PyTorch's torch.Tensor(...) is the default legacy type's constructor
    assert tuple(torch.Tensor(torch.Size([2, 3])).shape) == (2, 3)
    assert torch.Tensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data
    assert torch.Tensor().shape == (0,) and torch.Tensor(2, 1).dtype is torch.float32
    with pytest.raises(TypeError, match=r"new\(\): data must be a sequence \(got float\)"):
        torch.Tensor(2.5)
    ints = torch.tensor([1, 2])
    alias = torch.Tensor(ints)  # aliases, keeping its dtype
    alias.add_(1)
    assert alias.dtype is torch.int64 and ints.tolist() == [2, 3]
