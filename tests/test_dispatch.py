"""The dispatcher's fast path gives what the general rule gives.

Calls whose slots hold tensors, Python numbers and None take a fast path: the kernel is
found from the inputs' shapes and dtypes (promotion runs only for a new kernel), and
Python numbers reach compiled kernels as cached device scalars. These tests pin the cases
where a cache could confuse two calls: numbers that compare equal but differ (True, 1,
1.0; 0.0 and -0.0), weak typing of numbers against half tensors, dtypes that promote to
the same result, and values too big to cache. Expected values come from mathematics and
PyTorch's documented promotion rules.
"""

import math

import numpy as np
import pytest

import jtorch as torch
from jtorch import _device, _programs
from jtorch._ops import _dispatch


def test_equal_numbers_of_different_types_are_different_calls():
    x = torch.tensor([1, 2])
    assert (x + True).dtype == torch.int64 and (x + True).tolist() == [2, 3]
    assert (x + 1).dtype == torch.int64 and (x + 1).tolist() == [2, 3]
    assert (x + 1.0).dtype == torch.float32 and (x + 1.0).tolist() == [2.0, 3.0]
    b = torch.tensor([True, False])
    assert (b + True).dtype == torch.bool and (b * 1).dtype == torch.int64
    assert (b * 1.0).dtype == torch.float32


def test_signed_zero_and_nan_scalars():
    x = torch.tensor([1.0, -2.0])
    pos, neg = x * 0.0, x * -0.0
    assert [math.copysign(1, v) for v in pos.tolist()] == [1, -1]
    assert [math.copysign(1, v) for v in neg.tolist()] == [-1, 1]
    assert all(math.isnan(v) for v in (x * float("nan")).tolist())
    assert (x * 0.0).tolist() == [0.0, -0.0]


def test_scalar_values_reuse_one_kernel_and_stay_exact():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    for alpha in (1, 2, 3, -7, 0.5, 2.5):
        np.testing.assert_array_equal(
            x.add(x, alpha=alpha).numpy(), np.array([1.0, 2.0]) * (1 + alpha)
        )
    big = 2**40 + 1  # past the cached range: passed as the Python number it is
    assert (torch.tensor([1]) + big).tolist() == [big + 1]
    assert (torch.tensor([1]) * 2**31).tolist() == [2**31]


def test_numbers_stay_weakly_typed_against_half_tensors():
    h = torch.tensor([1.0, 2.0], dtype=torch.float16)
    assert (h * 2.5).dtype == torch.float16 and (h * 2.5).tolist() == [2.5, 5.0]
    assert h.add(h, alpha=2).dtype == torch.float16
    assert h.add(h, alpha=2).tolist() == [3.0, 6.0]
    bf = torch.tensor([1.0], dtype=torch.bfloat16)
    assert (bf - 1).dtype == torch.bfloat16


def test_dtypes_in_the_key_promote_as_torch_does():
    f32 = torch.tensor([1.0, 2.0])
    f64_0d = torch.tensor(3.0, dtype=torch.float64)
    f64 = torch.tensor([3.0, 4.0], dtype=torch.float64)
    i64 = torch.tensor([1, 2])
    assert (f32 + f64_0d).dtype == torch.float32  # a zero-dim tensor does not win
    assert (f32 + f64).dtype == torch.float64
    assert (f64_0d + f32).dtype == torch.float32
    assert (i64 + f64_0d).dtype == torch.float64  # a higher category does
    assert (f32 + f64_0d).tolist() == [4.0, 5.0]
    assert torch.true_divide(i64, i64).dtype == torch.float32


def test_statics_of_every_kind():
    x = torch.arange(6.0).reshape(2, 3)
    assert x.sum(1, keepdim=True).shape == (2, 1)
    assert x.sum(1).shape == (2,)
    assert x.sum(dim=(0, 1)).item() == 15.0
    assert x.sum(dim=[0, 1]).item() == 15.0


def test_grad_is_recorded_only_when_an_input_requires_it():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0])
    c = b * 2
    assert c.grad_fn is None and not c.requires_grad
    d = a * b
    assert d.grad_fn is not None and d.requires_grad
    d.sum().backward()
    assert a.grad.tolist() == [3.0, 4.0]
    with torch.no_grad():
        assert (a * b).grad_fn is None


@pytest.mark.skipif(
    _device.multi_device(), reason="scalars become device arrays only where tensors have one device"
)
def test_cached_scalars_are_concrete_arrays(monkeypatch):
    # the table holds at most 256 scalars per type: a long test run may have filled it
    monkeypatch.setitem(_dispatch._DEVICE_SCALARS, float, {})
    monkeypatch.setattr(_programs, "HOST_RENT_S", 0.0)  # (compiled at its COMPILE_AFTER-th call)
    # (a shape met often enough to have its compiled kernel: a new one runs on the host)
    for _ in range(_programs.COMPILE_AFTER + 1):
        torch.tensor([1.0]) * 1234.5
    cached = _dispatch._DEVICE_SCALARS[float].get(1234.5)
    assert cached is not None and float(cached) == 1234.5
    # made while jax traces (a concrete tensor used inside jax.jit), a cached scalar is
    # still a concrete array, not a tracer that would leak out of the trace
    import jax

    x = torch.ones(1)
    out = jax.jit(lambda v: (x * 4321.5)._array + v)(1.0)
    assert float(out[0]) == 4322.5
    assert float(_dispatch._DEVICE_SCALARS[float][4321.5]) == 4321.5
    assert (x * 4321.5).tolist() == [4321.5]
