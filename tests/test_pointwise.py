"""Pointwise ops: values from numpy/mathematics, torch's dtypes, variants and errors."""

import math

import numpy as np
import pytest

import jtorch as torch

X = np.array([-2.5, -1.0, -0.5, 0.0, 0.5, 1.5, 2.5, 3.0], np.float32)
Y = np.array([1.5, -2.0, 0.25, 2.0, -3.0, 1.0, 2.0, -0.5], np.float32)
I = np.array([-7, -3, -1, 0, 1, 2, 5, 9], np.int64)
J = np.array([2, -2, 3, 1, -4, 5, 3, -2], np.int64)


def t(a, dtype=None):
    return torch.tensor(a, dtype=dtype)


def check(result, expected, dtype, rtol=1e-6, atol=1e-6):
    assert result.dtype is dtype, (result.dtype, dtype)
    np.testing.assert_allclose(
        np.asarray(
            result.numpy(),
            dtype=np.float64 if np.asarray(expected).dtype.kind != "c" else np.complex128,
        ),
        expected,
        rtol=rtol,
        atol=atol,
    )


# ---------------------------------------------------------------------------
# Arithmetic


def test_add_sub_mul_alpha_and_promotion():
    check(torch.add(t(X), t(Y), alpha=2), X + 2 * Y, torch.float32)
    check(torch.sub(t(I), t(J), alpha=3), I - 3 * J, torch.int64)
    check(torch.rsub(t(I), 10, alpha=2), 10 - 2 * I, torch.int64)
    check(t(I) * 0.5, I * 0.5, torch.float32)
    check(2.5 - t(I), 2.5 - I, torch.float32)
    assert (t(I, torch.int8) + 1).dtype is torch.int8
    assert (t(I, torch.int8) + t(1)).dtype is torch.int8  # zero-dim loses to dimensioned
    assert (t([True, False]) * t([True, True])).tolist() == [True, False]


def test_alpha_errors():
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        torch.add(t(I), t(J), alpha=0.5)
    with pytest.raises(RuntimeError, match="two bool tensors"):
        torch.sub(t([True]), t([False]))
    with pytest.raises(RuntimeError, match="alpha must not be a complex"):
        torch.add(t(X), t(Y), alpha=1j)


def _kernels(op) -> int:
    """How many compiled kernels of `op` the registry holds."""
    from jtorch._ops._registry import KERNELS

    return sum(1 for key in KERNELS if key[0] is op)


def test_alpha_and_value_are_traced_not_compiled_in():
    # A learning-rate schedule written as `p.add_(g, alpha=-lr)` must not compile a kernel
    # per value: `alpha`/`value` reach the kernel as traced scalars.
    x, y = t(X), t(Y)
    kernels = None
    for k in range(1, 6):
        if k == 2:  # every kernel of the loop exists now
            kernels = _kernels(torch.add._op), _kernels(torch.addcmul._op)
        check(torch.add(x, y, alpha=k / 7), X + (k / 7) * Y, torch.float32)
        check(x.clone().sub_(y, alpha=k / 3), X - (k / 3) * Y, torch.float32, rtol=1e-5)
        check(
            torch.addcmul(x, y, y, value=-k / 5),
            X + (-k / 5) * Y * Y,
            torch.float32,
            rtol=1e-5,
            atol=1e-5,
        )
        check(
            torch.addcdiv(x, y, y + 4, value=k),
            X + k * Y / (Y + 4),
            torch.float32,
            rtol=1e-5,
            atol=1e-5,
        )
    assert (_kernels(torch.add._op), _kernels(torch.addcmul._op)) == kernels
    # an int alpha keeps integer arithmetic exact; a float alpha on ints is PyTorch's error
    check(torch.add(t(I), t(J), alpha=2**40), I + 2**40 * J, torch.int64)
    with pytest.raises(RuntimeError, match="value must not be a floating point"):
        torch.addcmul(t(I), t(J), t(J), value=0.5)


def test_division_family():
    check(torch.div(t(I), t(J)), I / J, torch.float32)
    check(torch.div(t(I), t(J), rounding_mode="trunc"), np.trunc(I / J), torch.int64)
    check(torch.div(t(I), t(J), rounding_mode="floor"), I // J, torch.int64)
    check(torch.div(t(X), t(Y), rounding_mode="floor"), X // Y, torch.float32)
    check(torch.floor_divide(t(X), t(Y)), np.floor_divide(X, Y), torch.float32)
    check(t(I) // t(J), I // J, torch.int64)
    check(torch.remainder(t(I), t(J)), np.remainder(I, J), torch.int64)  # Python modulo
    check(t(X) % t(Y), np.remainder(X, Y), torch.float32)
    check(torch.fmod(t(I), t(J)), np.fmod(I, J), torch.int64)  # C fmod
    check(7 % t(J), np.remainder(7, J), torch.int64)
    check(1 / t(I[4:]), 1 / I[4:], torch.float32)
    with pytest.raises(RuntimeError, match="rounding_mode"):
        torch.div(t(X), t(Y), rounding_mode="round")
    with pytest.raises(NotImplementedError, match="Bool"):
        torch.remainder(t([True]), t([True]))


def test_pow():
    check(t(I) ** 2, I**2, torch.int64)
    check(torch.pow(t([1, 2, -1, 3, -1]), t([-1, -2, -3, -1, -2])), [1, 0, -1, 0, 1], torch.int64)
    check(2 ** t(J[J >= 0]), 2 ** J[J >= 0], torch.int64)
    check(t(X[3:]) ** 0.5, np.sqrt(X[3:]), torch.float32)
    check(t(J) ** -1.0, 1.0 / J, torch.float32)
    x = t(I)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        x.pow_(-2)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        x**-1
    assert x.tolist() == I.tolist()
    with pytest.raises(NotImplementedError, match="Bool"):
        torch.pow(t([True]), t([True]))


def test_float_power():
    r = torch.float_power(t(I[4:]), 2)
    check(r, I[4:].astype(np.float64) ** 2, torch.float64)
    assert torch.float_power(t(X), 2j).dtype is torch.complex128
    x = t(X)
    with pytest.raises(RuntimeError, match="base given to float_power_ has dtype Float"):
        x.float_power_(2)
    with pytest.raises(RuntimeError, match="output given to float_power"):
        torch.float_power(x, 2, out=torch.empty(8))
    x64 = t(X, torch.float64)
    x64.float_power_(2)
    check(x64, X.astype(np.float64) ** 2, torch.float64)


def test_unary_arith():
    check(torch.neg(t(I)), -I, torch.int64)
    check(-t(X), -X, torch.float32)
    check(+t(X), X, torch.float32)
    check(abs(t(I)), np.abs(I), torch.int64)
    check(torch.abs(t([3 + 4j])), [5.0], torch.float32)
    check(torch.square(t([True, False])), [1, 0], torch.int64)
    with pytest.raises(NotImplementedError, match="abs_cpu"):
        torch.abs(t([True]))
    with pytest.raises(RuntimeError, match="Negation"):
        -t([True])
    with pytest.raises(RuntimeError, match="`\\+` operator"):
        torch.positive(t([True]))


def test_addcmul_addcdiv_lerp():
    a, b, c = t(X), t(Y), t(X + 4)
    check(torch.addcmul(a, b, c, value=0.5), X + 0.5 * Y * (X + 4), torch.float32)
    check(torch.addcdiv(a, b, c, value=2), X + 2 * Y / (X + 4), torch.float32, rtol=1e-5)
    check(torch.addcmul(t(I), t(J), t(J), value=2), I + 2 * J * J, torch.int64)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        torch.addcdiv(a, t(I), t(J))
    check(torch.lerp(a, b, 0.25), X + 0.25 * (Y - X), torch.float32)
    check(
        torch.lerp(a, b, t(np.full(8, 0.75, np.float32))),
        X + 0.75 * (Y - X),
        torch.float32,
        rtol=1e-5,
    )
    with pytest.raises(RuntimeError, match="expected dtype float for `end`"):
        torch.lerp(a, t(Y, torch.float64), 0.5)


# ---------------------------------------------------------------------------
# Comparison, logical, bitwise


def test_comparisons():
    a, b = t(X), t(Y)
    for op, ref in [
        (torch.eq, np.equal),
        (torch.ne, np.not_equal),
        (torch.lt, np.less),
        (torch.le, np.less_equal),
        (torch.gt, np.greater),
        (torch.ge, np.greater_equal),
    ]:
        check(op(a, b), ref(X, Y), torch.bool)
    assert (a < 0).tolist() == (X < 0).tolist()
    assert (a == None) is False  # noqa: E711  (non-tensor operands: NotImplemented)
    x = t(X)
    x.lt_(0.0)
    check(x, (X < 0).astype(np.float32), torch.float32)
    with pytest.raises(NotImplementedError, match="ComplexFloat"):
        torch.lt(t([1j]), t([1j]))


def test_extrema_and_nan():
    nan = float("nan")
    a, b = t([nan, 1.0, 2.0]), t([1.0, nan, 3.0])
    check(torch.maximum(a, b), [nan, nan, 3.0], torch.float32)
    check(torch.fmax(a, b), [1.0, 1.0, 3.0], torch.float32)
    check(torch.fmin(a, b), [1.0, 1.0, 2.0], torch.float32)
    check(torch.minimum(t(I), t(J)), np.minimum(I, J), torch.int64)
    with pytest.raises(RuntimeError, match="maximum not implemented for complex"):
        torch.maximum(t([1j]), t([1j]))


def test_isclose_allclose_equal():
    a = t([1.0, 2.0, float("nan")])
    b = t([1.0 + 1e-7, 2.1, float("nan")])
    assert torch.isclose(a, b).tolist() == [True, False, False]
    assert torch.isclose(a, b, equal_nan=True).tolist() == [True, False, True]
    assert torch.isclose(t([1, 2]), t([1, 3]), rtol=0.5).tolist() == [True, True]
    assert torch.allclose(t(X), t(X * (1 + 1e-6))) is True
    assert torch.allclose(t(X), t(X + 1e-3)) is False
    assert torch.equal(t(I), t(I)) and not torch.equal(t(I), t(J))
    assert not torch.equal(t(I), t(I[:4]))
    with pytest.raises(RuntimeError, match="Long did not match Float"):
        torch.isclose(t(I), t(X))
    with pytest.raises(RuntimeError, match="rtol must be greater"):
        torch.isclose(a, b, rtol=-1)


def test_logical_and_bitwise():
    a, b = t([0.0, 1.5, -2.0, 0.0]), t([0, 0, 3, 3])
    assert torch.logical_and(a, b).tolist() == [False, False, True, False]
    assert torch.logical_or(a, b).tolist() == [False, True, True, True]
    assert torch.logical_xor(a, b).tolist() == [False, True, False, True]
    assert torch.logical_not(b).tolist() == [True, True, False, False]
    out = torch.empty(4)
    torch.logical_and(a, b, out=out)
    check(out, [0, 0, 1, 0], torch.float32)
    check(t(I) & t(J), I & J, torch.int64)
    check(t(I) | 6, I | 6, torch.int64)
    check(6 ^ t(I), 6 ^ I, torch.int64)
    check(~t(I), ~I, torch.int64)
    assert (~t([True, False])).tolist() == [False, True]
    check(t([1, 2, -8]) << t([3, 64, 1]), [8, 0, -16], torch.int64)
    check(t([-8, 8, 8]) >> t([1, 64, 70]), [-4, 0, 0], torch.int64)
    with pytest.raises(NotImplementedError, match="bitwise_and_cpu.*Float"):
        t(X) & t(X)
    with pytest.raises(NotImplementedError, match="bitwise_not_cpu"):
        ~t(X)


# ---------------------------------------------------------------------------
# where / clamp


def test_where():
    c = t(X > 0)
    check(torch.where(c, t(X), t(Y)), np.where(X > 0, X, Y), torch.float32)
    check(torch.where(c, 1.0, 0), np.where(X > 0, 1.0, 0.0), torch.float32)
    check(torch.where(c, t(I, torch.int8), 2), np.where(X > 0, I, 2), torch.int8)
    check(t(X).where(c, 0.0), np.where(X > 0, X, 0), torch.float32)
    with pytest.raises(RuntimeError, match="condition to be a boolean tensor"):
        torch.where(t(I), t(X), t(Y))


def test_clamp():
    check(torch.clamp(t(X), -1, 1), np.clip(X, -1, 1), torch.float32)
    check(torch.clamp(t(X), min=t(Y)), np.maximum(X, Y), torch.float32)
    check(torch.clip(t(X), max=0.5), np.minimum(X, 0.5), torch.float32)
    check(torch.clamp(t(X), 3, 1), np.full(8, 1.0), torch.float32)  # min > max gives max
    check(torch.clamp(t(I), 0.5), np.maximum(I, 0.5), torch.float32)  # promotes
    check(torch.clamp_min(t(I), 0), np.maximum(I, 0), torch.int64)
    check(torch.clamp_max(t(I), 0), np.minimum(I, 0), torch.int64)
    assert math.isnan(torch.clamp(t([float("nan")]), 0, 1).item())
    x = t(X)
    x.clamp_(0, 1)
    check(x, np.clip(X, 0, 1), torch.float32)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        torch.clamp(x)


# ---------------------------------------------------------------------------
# Unary and binary math


def test_unary_float_math_and_int_promotion():
    check(torch.exp(t(X)), np.exp(X), torch.float32, rtol=1e-6)
    check(torch.sqrt(t(I[3:])), np.sqrt(I[3:]), torch.float32)
    check(torch.sin(t(I)), np.sin(I), torch.float32)
    check(torch.exp2(t([True, False])), [2.0, 1.0], torch.float32)
    check(torch.sigmoid(t(X)), 1 / (1 + np.exp(-X)), torch.float32)
    check(torch.erf(t(X)), [math.erf(v) for v in X], torch.float32)
    check(torch.sinc(t([0.0, 0.5, 1.0])), [1.0, 2 / math.pi, 0.0], torch.float32)
    check(
        torch.logit(t([0.25, 0.0]), eps=0.1),
        [math.log(1 / 3), math.log(0.1 / 0.9)],
        torch.float32,
        rtol=1e-5,
    )
    check(torch.deg2rad(t([180])), [math.pi], torch.float32)
    check(torch.rad2deg(t([math.pi])), [180.0], torch.float32, rtol=1e-5)
    check(torch.rsqrt(t([4.0])), [0.5], torch.float32)
    check(torch.arcsin(t([0.5])), [math.asin(0.5)], torch.float32)
    x = t(X)
    x.exp_()
    check(x, np.exp(X), torch.float32)
    out = torch.empty(8, dtype=torch.float64)
    torch.cos(t(X), out=out)
    check(out, np.cos(X), torch.float64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        t(I).exp_()


def test_half_precision_computes_in_float32():
    # PyTorch computes half types in float32 and rounds once.
    h = t(X, torch.float16)
    r = torch.exp2(h)
    assert r.dtype is torch.float16
    np.testing.assert_allclose(
        r.numpy().astype(np.float64), np.exp2(X).astype(np.float16).astype(np.float64), rtol=1e-3
    )
    b = t([9.0, 10.0], torch.bfloat16) // t([3.0, 3.0], torch.bfloat16)
    assert b.dtype is torch.bfloat16 and b.tolist() == [3.0, 3.0]


def test_rounding():
    check(torch.round(t([0.5, 1.5, 2.5, -0.5, -1.5])), [0, 2, 2, -0.0, -2], torch.float32)
    check(torch.round(t([1234.5678], torch.float64), decimals=2), [1234.57], torch.float64)
    check(
        torch.round(t([1234.0, 1250.0], torch.float64), decimals=-2),
        [1200.0, 1200.0],
        torch.float64,
    )
    check(torch.ceil(t(X)), np.ceil(X), torch.float32)
    check(torch.floor(t(X)), np.floor(X), torch.float32)
    check(torch.trunc(t(X)), np.trunc(X), torch.float32)
    check(torch.fix(t(X)), np.trunc(X), torch.float32)
    check(torch.frac(t(X)), X - np.trunc(X), torch.float32)
    check(torch.floor(t(I)), I, torch.int64)
    with pytest.raises(NotImplementedError, match="round_cpu"):
        torch.round(t(I), decimals=1)
    # decimals= given (even 0) is PyTorch's round.decimals overload: no integer kernel, and
    # its own node name
    with pytest.raises(NotImplementedError, match="round_vml_cpu"):
        torch.round(t(I), decimals=0)
    x = t([0.5, 1.5]).requires_grad_()
    assert torch.round(x).grad_fn.name() == "RoundBackward0"
    assert torch.round(x, decimals=0).grad_fn.name() == "RoundBackward1"
    with pytest.raises(NotImplementedError, match="frac_cpu"):
        torch.frac(t(I))
    with pytest.raises(NotImplementedError, match="ceil is not supported for complex"):
        torch.ceil(t([1j]))


def test_signs_and_complex():
    nan = float("nan")
    check(torch.sign(t([-2.0, 0.0, 3.0, nan])), [-1, 0, 1, 0], torch.float32)
    assert torch.sign(t([True, False])).dtype is torch.bool
    check(torch.sgn(t([3 + 4j, 0j])), [0.6 + 0.8j, 0], torch.complex64)
    assert torch.signbit(t([-0.0, 0.0, -1.0])).tolist() == [True, False, True]
    check(torch.angle(t([-1, 2])), [math.pi, 0.0], torch.float32)
    check(torch.angle(t([1j])), [math.pi / 2], torch.float32)
    check(torch.conj_physical(t([1 + 2j])), [1 - 2j], torch.complex64)
    check(torch.conj(t([1 + 2j])), [1 - 2j], torch.complex64)
    check(torch.complex(t([1.0]), t([2.0])), [1 + 2j], torch.complex64)
    check(
        torch.polar(t([2.0], torch.float64), t([math.pi / 2], torch.float64)),
        [2j],
        torch.complex128,
        atol=1e-12,
    )
    with pytest.raises(NotImplementedError, match="torch.sgn"):
        torch.sign(t([1j]))
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double"):
        torch.complex(t([1]), t([2]))
    with pytest.raises(RuntimeError, match="scalar type Float but got scalar type Double"):
        torch.complex(t([1.0]), t([2.0], torch.float64))


def test_classification_and_nan_to_num():
    inf, nan = float("inf"), float("nan")
    v = t([inf, -inf, nan, 1.0])
    assert torch.isfinite(v).tolist() == [False, False, False, True]
    assert torch.isinf(v).tolist() == [True, True, False, False]
    assert torch.isnan(v).tolist() == [False, False, True, False]
    assert torch.isposinf(v).tolist() == [True, False, False, False]
    assert torch.isneginf(v).tolist() == [False, True, False, False]
    assert torch.isreal(t([1 + 0j, 1j])).tolist() == [True, False]
    assert torch.isfinite(t(I)).dtype is torch.bool
    big = np.finfo(np.float32).max
    check(torch.nan_to_num(v), [big, -big, 0.0, 1.0], torch.float32, rtol=0)
    check(torch.nan_to_num(v, nan=2.0, posinf=3.0, neginf=-3.0), [3, -3, 2, 1], torch.float32)
    with pytest.raises(RuntimeError, match="isposinf does not support complex"):
        torch.isposinf(t([1j]))


def test_binary_math():
    check(torch.atan2(t(X), t(Y)), np.arctan2(X, Y), torch.float32)
    check(torch.arctan2(t(I), t(J)), np.arctan2(I, J), torch.float32)
    check(torch.copysign(t(I), -0.0), -np.abs(I), torch.float32)
    check(torch.hypot(t(X), t(Y)), np.hypot(X, Y), torch.float32)
    check(torch.logaddexp(t(X), t(Y)), np.logaddexp(X, Y), torch.float32)
    check(torch.logaddexp2(t(X), t(Y)), np.logaddexp2(X, Y), torch.float32)
    check(
        torch.xlogy(t([0.0, 2.0, 0.0]), t([0.0, 3.0, float("nan")])),
        [0.0, 2 * math.log(3), float("nan")],
        torch.float32,
    )
    check(torch.ldexp(t([1.0, 3.0]), t([2, -1])), [4.0, 1.5], torch.float32)
    check(
        torch.nextafter(t([1.0]), t([2.0])),
        [np.nextafter(np.float32(1), np.float32(2))],
        torch.float32,
        rtol=0,
        atol=0,
    )
    check(
        torch.heaviside(t(X), t(np.full(8, 0.5, np.float32))), np.heaviside(X, 0.5), torch.float32
    )
    check(torch.gcd(t(I), t(J)), np.gcd(I, J), torch.int64)
    check(torch.lcm(t(I), t(J)), np.lcm(I, J), torch.int64)
    m, e = torch.frexp(t([8.0, 0.3, -3.0]))
    assert e.dtype is torch.int32 and e.tolist() == [4, -1, 2]
    check(m, [0.5, 0.6, -0.75], torch.float32)
    with pytest.raises(NotImplementedError, match="hypot_cpu"):
        torch.hypot(t(I), t(J))
    with pytest.raises(RuntimeError, match="different dtypes"):
        torch.heaviside(t(X), t([0.5], torch.float64))
    with pytest.raises(NotImplementedError, match="gcd_cpu"):
        torch.gcd(t(X), t(Y))


def test_inplace_error_leaves_tensor_unchanged():
    x = t(I)
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        x.div_(2)
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        x.add_(t(X))
    assert x.tolist() == I.tolist()
    x.div_(2, rounding_mode="floor")
    assert x.tolist() == (I // 2).tolist()
