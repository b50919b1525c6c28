"""Torch dtypes and promotion (expected values: PyTorch's documented promotion rules)."""

import pytest

import jtorch as torch


def test_dtype_attributes_and_aliases():
    assert torch.float is torch.float32 and torch.long is torch.int64
    assert torch.double is torch.float64 and torch.half is torch.float16
    assert repr(torch.float32) == "torch.float32"
    assert torch.float32.is_floating_point and not torch.int32.is_floating_point
    assert torch.complex64.is_complex and torch.int8.is_signed and not torch.uint8.is_signed
    assert torch.bfloat16.itemsize == 2 and torch.complex128.itemsize == 16


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ("uint8", "int8", "int16"),
        ("bool", "int32", "int32"),
        ("int32", "int64", "int64"),
        ("float16", "bfloat16", "float32"),
        ("int64", "float16", "float16"),
        ("float64", "complex64", "complex128"),
        ("uint8", "uint8", "uint8"),
        ("bool", "bool", "bool"),
        ("float32", "int64", "float32"),
    ],
)
def test_promote_types(a, b, expected):
    assert torch.promote_types(getattr(torch, a), getattr(torch, b)) is getattr(torch, expected)
    assert torch.promote_types(getattr(torch, b), getattr(torch, a)) is getattr(torch, expected)


def test_result_type_priorities():
    i8 = torch.tensor([1], dtype=torch.int8)
    f64_0d = torch.tensor(1.0, dtype=torch.float64)
    i64_0d = torch.tensor(1)
    # a zero-dim tensor of the same category does not win over a dimensioned one
    assert torch.result_type(i8, i64_0d) is torch.int8
    # but a higher category does
    assert torch.result_type(i8, f64_0d) is torch.float64
    assert torch.result_type(torch.tensor([1.0], dtype=torch.float16), 2.5) is torch.float16
    assert torch.result_type(i8, 2.5) is torch.float32
    assert torch.result_type(torch.tensor([True]), 2) is torch.int64
    assert torch.result_type(torch.tensor([1.0]), 1j) is torch.complex64


def test_ops_promote():
    i = torch.tensor([1, 2, 3])
    assert i.dtype is torch.int64
    assert (i + 1).dtype is torch.int64
    assert (i + 1.5).dtype is torch.float32
    assert (i / 2).dtype is torch.float32
    assert (i > 1).dtype is torch.bool
    assert (torch.tensor([1.0]) * torch.tensor(2.0, dtype=torch.float64)).dtype is torch.float32
    assert (
        torch.tensor([1], dtype=torch.uint8) + torch.tensor([1], dtype=torch.int8)
    ).dtype is torch.int16


def test_default_dtype():
    assert torch.get_default_dtype() is torch.float32
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.tensor([1.0]).dtype is torch.float64
        assert (torch.tensor([1]) * 0.5).dtype is torch.float64
        assert torch.tensor([1j]).dtype is torch.complex128
    finally:
        torch.set_default_dtype(torch.float32)
    with pytest.raises(TypeError):
        torch.set_default_dtype(torch.int64)


def test_inplace_refuses_lossy_result_type():
    x = torch.tensor([1, 2])
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        x.add_(1.5)
    assert x.tolist() == [1, 2]


def test_can_cast_finfo_iinfo():
    assert torch.can_cast(torch.int32, torch.float32)
    assert not torch.can_cast(torch.float32, torch.int32)
    assert torch.finfo(torch.float32).eps == 2.0**-23
    assert torch.finfo().bits == 32
    assert torch.iinfo(torch.int8).min == -128 and torch.iinfo(torch.uint8).max == 255
    with pytest.raises(TypeError):
        torch.iinfo(torch.float32)


def test_kernels_follow_default_dtype_changes():
    x = torch.tensor([1, 2])
    assert (x / 2).dtype is torch.float32
    torch.set_default_dtype(torch.float64)
    try:
        assert (x / 2).dtype is torch.float64
        assert torch.sigmoid(x).dtype is torch.float64
    finally:
        torch.set_default_dtype(torch.float32)
    assert (x / 2).dtype is torch.float32


def test_equal_statics_of_different_types_do_not_share_kernels():
    from jtorch._ops._registry import NONE, T, op

    @op(name="_test_static_kind", promote=NONE, method=False, out=False)
    def kind_of(input: T, flag):
        return input * (2 if flag is True else 3)

    x = torch.ones(2)
    # True == 1 in Python; the kernel cache must still keep their compiled kernels apart
    assert kind_of(x, True).tolist() == [2, 2]
    assert kind_of(x, 1).tolist() == [3, 3]


def test_python_types_stand_for_dtypes():
    """PyTorch's argument parser reads bool/int/float/complex as bool/int64/float64/complex128."""
    assert torch.zeros(2, dtype=float).dtype == torch.float64
    assert torch.ones(2, dtype=int).dtype == torch.int64
    assert torch.tensor([1, 0], dtype=bool).dtype == torch.bool
    assert torch.empty(1, dtype=complex).dtype == torch.complex128
    t = torch.arange(3.0)
    assert t.to(bool).dtype == torch.bool and t.to("cpu", int).dtype == torch.int64
    assert t.sum(dtype=float).dtype == torch.float64
    assert torch.arange(4.0).view(int).shape == (2,)  # two float32 per int64
    with pytest.raises(ValueError, match="invalid type: 'float'"):
        t.type(float)  # Tensor.type reads a class as a legacy type name
