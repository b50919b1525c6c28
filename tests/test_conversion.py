"""Tensor conversions (`jtorch/_ops/conversion.py`): `to`, `type`, casts, `fill_`, `zero_`."""

import warnings

import pytest

import jtorch as torch
from jtorch import _device


def test_to_dtype_and_identity():
    x = torch.tensor([1.5, -2.5])
    assert x.to(torch.float32) is x
    assert x.to(x) is x
    assert x.to("cpu") is x
    assert x.to(device="cpu", dtype=torch.float32) is x
    y = x.to(torch.float64)
    assert y.dtype == torch.float64 and y.tolist() == [1.5, -2.5]
    assert x.to("cpu", torch.int32).tolist() == [1, -2]
    assert x.to(dtype=torch.int64).dtype == torch.int64
    assert x.to(torch.tensor([1])).dtype == torch.int64


def test_to_copy_makes_a_new_tensor():
    x = torch.tensor([1.0, 2.0])
    y = x.to(torch.float32, copy=True)
    assert y is not x and y.tolist() == x.tolist()
    y.add_(1)
    assert x.tolist() == [1.0, 2.0]
    z = x.to("cpu", torch.float64, False, True)  # positional non_blocking, copy
    assert z.dtype == torch.float64


def test_to_rejects_bad_arguments():
    with pytest.raises(TypeError):
        torch.tensor([1.0]).to(1.5)


def test_type_strings():
    x = torch.tensor([1.0])
    assert x.type() == "torch.FloatTensor"
    assert torch.tensor([1]).type() == "torch.LongTensor"
    assert x.type(torch.float64).dtype == torch.float64
    assert x.type("torch.IntTensor").dtype == torch.int32
    assert x.type("torch.FloatTensor") is x
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        x.type("torch.Foo")
    with pytest.raises(ValueError, match="invalid type: 'int'"):  # builtins unprefixed
        x.type(int)
    assert x.type_as(torch.tensor([1], dtype=torch.int16)).dtype == torch.int16


@pytest.mark.parametrize(
    "dtype, name",
    [
        # PyTorch's names: c10's ScalarType name + "Tensor", for every dtype
        (torch.float32, "torch.FloatTensor"),
        (torch.bfloat16, "torch.BFloat16Tensor"),
        (torch.uint8, "torch.ByteTensor"),
        (torch.int8, "torch.CharTensor"),
        (torch.uint16, "torch.UInt16Tensor"),
        (torch.complex64, "torch.ComplexFloatTensor"),
        (torch.float8_e4m3fn, "torch.Float8_e4m3fnTensor"),
    ],
)
def test_legacy_type_names(dtype, name):
    x = torch.zeros(2, dtype=dtype)
    assert x.type() == name
    assert torch.typename(x) == name
    if dtype in (torch.float32, torch.bfloat16, torch.uint8, torch.int8):
        assert getattr(torch, name.rpartition(".")[2]).dtype == dtype  # the legacy class


def test_zero_grad_set_to_none_false_detaches_and_zeroes():
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    m = torch.nn.Linear(2, 1)
    (m(w) ** 2).sum().backward(create_graph=True)
    assert w.grad.grad_fn is not None
    torch.optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)
    m.zero_grad(set_to_none=False)
    for p in (w, m.weight, m.bias):
        assert p.grad.abs().sum().item() == 0.0 and p.grad.grad_fn is None
        assert not p.grad.requires_grad
    m.zero_grad()
    assert m.weight.grad is None and w.grad is not None


@pytest.mark.parametrize(
    "method, dtype",
    [
        ("float", torch.float32),
        ("double", torch.float64),
        ("half", torch.float16),
        ("bfloat16", torch.bfloat16),
        ("long", torch.int64),
        ("int", torch.int32),
        ("short", torch.int16),
        ("char", torch.int8),
        ("byte", torch.uint8),
        ("bool", torch.bool),
        ("cfloat", torch.complex64),
        ("cdouble", torch.complex128),
    ],
)
def test_named_casts(method, dtype):
    out = getattr(torch.tensor([0.0, 2.0]), method)()
    assert out.dtype == dtype
    assert out.tolist() == ([False, True] if dtype == torch.bool else [0, 2])


def test_cast_semantics():
    # Float -> int truncates toward zero; narrow ints wrap through int64 as in PyTorch.
    assert torch.tensor([2.7, -2.7]).int().tolist() == [2, -2]
    assert torch.tensor([300.0]).byte().tolist() == [44]
    z = torch.tensor([1 + 2j, 0j])
    assert z.bool().tolist() == [True, False]
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert z.float().tolist() == [1.0, 0.0]


def test_cpu_and_cuda():
    x = torch.tensor([1.0])
    assert x.cpu() is x
    if not _device.accelerators("cuda"):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            x.cuda()
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            x.to("cuda")
    else:
        y = x.cuda()
        assert y.is_cuda and y.cpu().tolist() == [1.0]


def test_fill_and_zero():
    x = torch.tensor([[1, 2], [3, 4]])
    assert x.fill_(2.7) is x
    assert x.tolist() == [[2, 2], [2, 2]]
    x.fill_(torch.tensor(5))
    assert x.tolist() == [[5, 5], [5, 5]]
    y = torch.fill(torch.zeros(3), 1.5)
    assert y.tolist() == [1.5, 1.5, 1.5] and y.dtype == torch.float32
    assert torch.zeros(2, dtype=torch.bool).fill_(True).tolist() == [True, True]
    assert x.zero_() is x and x.tolist() == [[0, 0], [0, 0]]
    v = torch.ones(2, 2)
    v[0].fill_(3)  # writes through the view
    assert v.tolist() == [[3, 3], [1, 1]]
    torch.zero_(v)
    assert v.tolist() == [[0, 0], [0, 0]]


def test_fill_rejects_non_scalar_value():
    x = torch.ones(2)
    with pytest.raises(
        RuntimeError,
        match="fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions",
    ):
        x.fill_(torch.ones(2))
    assert x.tolist() == [1.0, 1.0]


def test_conj_neg_bits():
    x = torch.tensor([1.0])
    assert x.resolve_conj() is x and torch.resolve_neg(x) is x
    assert x.is_conj() is False and torch.is_neg(x) is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.float()


def test_chalf_gives_complex_values():
    # complex32 has no jax dtype: chalf() keeps the values in jax's smallest complex type
    z = torch.tensor([1.5, -2.0]).chalf()
    assert z.is_complex() and z.tolist() == [1.5 + 0j, -2 + 0j]
