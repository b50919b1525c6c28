"""Forward rounding: one rounding where PyTorch's CPU kernels round once (no torch needed).

numpy's float32/float64 arithmetic is IEEE (each operation correctly rounded), which is
what PyTorch's division and multiplication kernels do; XLA rewrites `x / 7` into
`x * (1 / 7)`, which rounds twice.
"""

import ml_dtypes
import numpy as np
import pytest

import jtorch as torch

_rng = np.random.default_rng(1)
X32 = np.concatenate([_rng.standard_normal(3000), _rng.uniform(-1e5, 1e5, 3000)]).astype(np.float32)


def same_bits(a, b):
    np.testing.assert_array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


@pytest.mark.parametrize("divisor", [7, 3, 0.1, 11.0])
def test_division_by_a_scalar_rounds_once(divisor):
    x = torch.tensor(X32)
    same_bits((x / divisor).numpy(), X32 / np.float32(divisor))
    same_bits(x.div(divisor, rounding_mode="trunc").numpy(), np.trunc(X32 / np.float32(divisor)))
    same_bits((x / torch.tensor(float(divisor))).numpy(), X32 / np.float32(divisor))
    x64 = X32.astype(np.float64) * np.pi
    same_bits((torch.tensor(x64) / divisor).numpy(), x64 / np.float64(divisor))


def test_division_by_a_broadcast_row_rounds_once():
    x = X32.reshape(-1, 4)
    d = np.array([3.0, 7.0, 0.1, 11.0], np.float32)
    same_bits((torch.tensor(x) / torch.tensor(d)).numpy(), x / d)


def test_half_precision_scalars_enter_in_float32():
    # PyTorch reads the Python number as float32 (its opmath type) and rounds the product
    # once: f16(f32(x) * f32(0.1)), not f16(x * f16(0.1)).
    x = X32[np.abs(X32) < 1000].astype(np.float16)
    expected = (x.astype(np.float32) * np.float32(0.1)).astype(np.float16)
    same_bits((torch.tensor(x) * 0.1).numpy(), expected)
    expected = (x.astype(np.float32) / np.float32(0.1)).astype(np.float16)
    same_bits((torch.tensor(x) / 0.1).numpy(), expected)
    xb = x.astype(ml_dtypes.bfloat16)
    expected = (xb.astype(np.float32) * np.float32(0.1)).astype(ml_dtypes.bfloat16)
    got = (torch.tensor(xb.astype(np.float32)).to(torch.bfloat16) * 0.1).float().numpy()
    same_bits(got, expected.astype(np.float32))


def test_small_integer_powers_are_products():
    x = torch.tensor(X32)
    same_bits((x**2).numpy(), X32 * X32)
    same_bits((x**3).numpy(), X32 * X32 * X32)
    same_bits((x**-1).numpy(), np.float32(1) / X32)
    same_bits((x**-2).numpy(), np.float32(1) / (X32 * X32))
    # bfloat16 rounds after each product, as PyTorch's vectorized bfloat16 kernel does
    xb = X32[np.abs(X32) < 100].astype(ml_dtypes.bfloat16)
    sq = (xb.astype(np.float32) ** 2).astype(ml_dtypes.bfloat16)
    cube = (sq.astype(np.float32) * xb.astype(np.float32)).astype(ml_dtypes.bfloat16)
    got = (torch.tensor(xb.astype(np.float32)).to(torch.bfloat16) ** 3).float().numpy()
    same_bits(got, cube.astype(np.float32))


def test_exact_division_keeps_its_gradient():
    x = torch.tensor([1.0, 2.0, 4.0], requires_grad=True)
    (x / 7).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 / 7] * 3, rtol=1e-7)
    y = torch.tensor([2.0], requires_grad=True)
    (torch.tensor([1.0, 2.0]) / y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [-3 / 4], rtol=1e-7)


def test_hash_tensor_xors_64_bit_patterns():
    assert torch.hash_tensor(torch.tensor([1, 2, 3])).item() == 1 ^ 2 ^ 3
    assert torch.hash_tensor(torch.tensor([1, 2, 3])).dtype is torch.uint64
    x = np.array([0.5, -2.0, 3.25], np.float32)
    bits = x.astype(np.float64).view(np.uint64)
    assert torch.hash_tensor(torch.tensor(x)).item() == int(bits[0] ^ bits[1] ^ bits[2])
    rows = torch.hash_tensor(torch.tensor([[1, 3], [4, 4]]), 1)
    assert rows.tolist() == [1 ^ 3, 0]
    with pytest.raises(RuntimeError, match="Unknown hash_tensor mode"):
        torch.hash_tensor(torch.ones(2), mode=2)
