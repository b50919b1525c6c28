"""Pointwise math: unary functions, rounding, signs, classification and binary math."""

import functools
import math

import jax
import jax.numpy as jnp

from .._dtype import c10_name
from .._tensor import Tensor
from . import _derivatives
from ._kernel_helpers import (
    default_float,
    is_bool,
    is_complex,
    is_integral,
    not_implemented,
    run_in_opmath,
)
from ._registry import ALWAYS_BOOL, DEFAULT, INT_TO_FLOAT, NONE, T, op
from ._rows import ELEMENTWISE
from .pointwise import mul, reflected

pointwise = functools.partial(op, inplace=True)


# ---------------------------------------------------------------------------
# Unary float math: one declaration per row (integers and bools compute in the default float).


def _unary(name, fn, aliases=(), real_only=None, **record):
    """Declares `torch.<name>` computing `fn`; `record`: the declaration's autograd facts."""

    def impl(input: T):
        if real_only and is_complex(input):
            raise not_implemented(real_only, input)
        return fn(input)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    f = pointwise(
        run_in_opmath(impl), promote=INT_TO_FLOAT, aliases=aliases, rows=ELEMENTWISE, **record
    )
    return f


def _sigmoid(x):
    if is_complex(x):
        return 1 / (1 + jnp.exp(-x))
    return jax.nn.sigmoid(x)


# PyTorch's formula saves the result, not the input: modifying it in place invalidates the graph.
_SAVES = {"saves_result": True}

# (name, fn, aliases[, the autograd record])
_UNARY_FLOAT = [
    ("exp", jnp.exp, (), _SAVES),
    ("exp2", jnp.exp2, ("special.exp2",), _SAVES),
    ("expm1", jnp.expm1, ("special.expm1",), _SAVES),
    ("log", jnp.log, ()),
    ("log2", jnp.log2, ()),
    ("log10", jnp.log10, ()),
    ("log1p", jnp.log1p, ("special.log1p",), {"node": "Log1PBackward0"}),
    ("sqrt", jnp.sqrt, (), _SAVES),
    ("rsqrt", jax.lax.rsqrt, (), _SAVES),
    ("sin", jnp.sin, ()),
    ("cos", jnp.cos, ()),
    ("tan", jnp.tan, ()),
    ("asin", jnp.arcsin, ("arcsin",)),
    ("acos", jnp.arccos, ("arccos",)),
    ("atan", jnp.arctan, ("arctan",)),
    ("sinh", jnp.sinh, ()),
    ("cosh", jnp.cosh, ()),
    ("tanh", jnp.tanh, ("nn.functional.tanh",), _SAVES),
    ("asinh", jnp.arcsinh, ("arcsinh",)),
    ("acosh", jnp.arccosh, ("arccosh",)),
    ("atanh", jnp.arctanh, ("arctanh",)),
    ("sigmoid", _sigmoid, ("special.expit", "nn.functional.sigmoid"), _SAVES),
    ("reciprocal", jnp.reciprocal, (), _SAVES),
]

for _name, _fn, _aliases, *_record in _UNARY_FLOAT:
    globals()[_name] = _unary(_name, _fn, _aliases, **(_record[0] if _record else {}))

# PyTorch has no complex kernels for these.
erf = _unary("erf", jax.scipy.special.erf, ("special.erf",), real_only="erf_vml_cpu")
erfc = _unary("erfc", jax.scipy.special.erfc, ("special.erfc",), real_only="erfc_vml_cpu")
erfinv = _unary("erfinv", jax.scipy.special.erfinv, ("special.erfinv",), real_only="erfinv_vml_cpu")


@pointwise(promote=INT_TO_FLOAT, aliases=("special.sinc",))
@run_in_opmath
def sinc(input: T):
    """Matches `torch.sinc`: sin(pi x) / (pi x), and 1 at 0."""
    px = input * jnp.asarray(math.pi, input.dtype)
    safe = jnp.where(input == 0, jnp.ones((), input.dtype), px)
    return jnp.where(input == 0, jnp.ones((), input.dtype), jnp.sin(safe) / safe)


# No opmath: PyTorch rounds each step of logit to a half type.
@pointwise(promote=INT_TO_FLOAT, aliases=("special.logit",))
def logit(input: T, eps=None):
    return _logit(input, eps)


def _logit(input, eps):
    """log(x / (1 - x)) with PyTorch's `logit_backward`: 1 / (x (1 - x)), and with `eps`, 0
    outside [eps, 1 - eps] (the bounds included in the gradient, unlike jax's clip)."""

    def value(x):
        if eps is not None:
            x = jnp.clip(x, eps, 1 - eps)
        return jnp.log(x / (1 - x))

    def tangent(primals, tangents, out):
        (x,), (t,) = primals, tangents
        d = 1 / (x * (1 - x))
        if eps is not None:
            d = _derivatives.masked((x >= eps) & (x <= 1 - eps), d)
        return (d * t).astype(out.dtype)

    return _derivatives.with_jvp(value, tangent)(input)


def _degrees(name, factor, node):
    def impl(input: T):
        if is_complex(input):
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        return input * jnp.asarray(factor, input.dtype)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return pointwise(run_in_opmath(impl), promote=INT_TO_FLOAT, node=node)


deg2rad = _degrees("deg2rad", math.pi / 180, "Deg2RadBackward0")
rad2deg = _degrees("rad2deg", 180 / math.pi, "Rad2DegBackward0")


# Python's `2 / t` is `t.reciprocal() * 2` in PyTorch (and so rounds like it).
reflected("truediv", lambda self, other: mul(reciprocal(self), other))  # noqa: F821
reflected("div", lambda self, other: mul(reciprocal(self), other))  # noqa: F821


# ---------------------------------------------------------------------------
# Rounding


def _rounding(name, fn, aliases=()):
    def impl(input: T):
        if is_bool(input):
            raise not_implemented(f"{name}_vml_cpu", input)
        if is_complex(input):
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        return input if is_integral(input) else fn(input)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`; integers pass through unchanged."
    return pointwise(impl, aliases=aliases)


ceil = _rounding("ceil", jnp.ceil)
floor = _rounding("floor", jnp.floor)
trunc = _rounding("trunc", jnp.trunc, aliases=("fix",))


@pointwise(
    aliases=("special.round",),
    node=lambda decimals: "RoundBackward1" if decimals is not None else "RoundBackward0",
)
def round(input: T, *, decimals=None):
    """Matches `torch.round`: halves round to even; `decimals` scales by a power of ten.

    None stands for "not given": `decimals=` selects PyTorch's `round.decimals` overload,
    which has its own node (RoundBackward1) and no integer kernel, even at 0."""
    if is_bool(input) or is_complex(input):
        raise not_implemented("round_vml_cpu", input)
    if is_integral(input):
        if decimals is not None:
            raise not_implemented("round_vml_cpu" if decimals == 0 else "round_cpu", input)
        return input
    if not decimals:
        return jnp.round(input)
    return run_in_opmath(_round_decimals)(input, decimals)


def _round_decimals(x, decimals):
    scale = jnp.asarray(10.0 ** abs(decimals), x.dtype)
    if decimals > 0:
        return jnp.round(x * scale) / scale
    return jnp.round(x / scale) * scale


@pointwise()
def frac(input: T):
    if is_integral(input) or is_complex(input):
        raise not_implemented("frac_cpu", input)
    return input - jnp.trunc(input)


# ---------------------------------------------------------------------------
# Signs and complex parts


def _sign(x):
    if is_bool(x):
        return x
    # (0 < x) - (x < 0): NaN gives 0, unlike numpy's sign.
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


@pointwise()
def sign(input: T):
    if is_complex(input):
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex "
            "numbers. Please use torch.sgn instead."
        )
    return _sign(input)


@pointwise()
def sgn(input: T):
    """Matches `torch.sgn`: x / |x| for complex (0 at 0), `sign` otherwise."""
    if not is_complex(input):
        return _sign(input)
    mag = jnp.abs(input)
    return jnp.where(mag == 0, jnp.zeros((), input.dtype), input / mag.astype(input.dtype))


@op(promote=ALWAYS_BOOL)
def signbit(input: T):
    if is_complex(input):
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if is_bool(input):
        return jnp.zeros(input.shape, bool)
    return jnp.signbit(input)


@op(promote=NONE)
def angle(input: T):
    """Matches `torch.angle`: for real inputs, pi below zero, 0 otherwise, NaN kept."""
    if is_complex(input):
        return jnp.angle(input)
    x = input.astype(default_float()) if is_integral(input) else input
    pi = jnp.asarray(math.pi, x.dtype)
    return jnp.where(jnp.isnan(x), x, jnp.where(x < 0, pi, jnp.zeros((), x.dtype)))


@op(promote=NONE)
def conj(input: T):
    """Matches `torch.conj` in value (a copy here, not PyTorch's lazily conjugated view)."""
    return jnp.conj(input) if is_complex(input) else input


@pointwise(promote=NONE)
def conj_physical(input: T):
    return jnp.conj(input) if is_complex(input) else input


def _check_complex_parts(a, b):
    ok = (jnp.float16, jnp.float32, jnp.float64)
    if a.dtype not in ok or b.dtype not in ok:
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got "
            f"{c10_name(a)} and {c10_name(b)}"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {c10_name(a)} but got scalar type "
            f"{c10_name(b)} for second argument"
        )
    # complex32 has no jax dtype: float16 parts are widened and give complex64.
    return jnp.float64 if a.dtype == jnp.float64 else jnp.float32


@op(promote=NONE, method=False)
def complex(real: T, imag: T):
    part = _check_complex_parts(real, imag)
    return jax.lax.complex(*jnp.broadcast_arrays(real.astype(part), imag.astype(part)))


@op(promote=NONE, method=False)
def polar(abs: T, angle: T):
    part = _check_complex_parts(abs, angle)
    abs, angle = jnp.broadcast_arrays(abs.astype(part), angle.astype(part))
    return jax.lax.complex(abs * jnp.cos(angle), abs * jnp.sin(angle))


# ---------------------------------------------------------------------------
# Classification


def _classify(name, fn, real_only=False, out=False):
    def impl(input: T):
        if real_only and is_complex(input):
            raise RuntimeError(f"{name} does not support complex inputs.")
        return fn(input)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return op(impl, promote=NONE, out=out)


def _float_only(fn, default):
    return lambda x: fn(x) if not is_integral(x) else jnp.full(x.shape, default, bool)


isfinite = _classify("isfinite", _float_only(jnp.isfinite, True))
isinf = _classify("isinf", _float_only(jnp.isinf, False))
isnan = _classify("isnan", _float_only(jnp.isnan, False))
isposinf = _classify("isposinf", _float_only(jnp.isposinf, False), real_only=True, out=True)
isneginf = _classify("isneginf", _float_only(jnp.isneginf, False), real_only=True, out=True)
isreal = _classify(
    "isreal", lambda x: (jnp.imag(x) == 0) if is_complex(x) else jnp.ones(x.shape, bool)
)


@pointwise()
def nan_to_num(input: T, nan=0.0, posinf=None, neginf=None):
    if is_integral(input):
        return input
    return jnp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


# ---------------------------------------------------------------------------
# Binary math


def _real_binary(name, fn, promote=INT_TO_FLOAT, kernel=None, aliases=(), inplace=True, node=None):
    def impl(input: T, other: T):
        if kernel and (is_integral(input) or is_complex(input)):
            raise not_implemented(kernel, input)
        return fn(input, other)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    f = op(run_in_opmath(impl), promote=promote, aliases=aliases, inplace=inplace, node=node)
    return f


def _atan2_tangent(primals, tangents, out):
    # PyTorch's atan2_backward: (x dy - y dx) / (x^2 + y^2), 0 where both are 0.
    (y, x), (ty, tx) = primals, tangents
    denom = y * y + x * x
    recip = _derivatives.masked(denom != 0, 1 / jnp.where(denom == 0, 1, denom))
    return _derivatives.linear(out, (x * recip, ty), (-y * recip, tx))


def _copysign_tangent(primals, tangents, out):
    # PyTorch: d/dx = copysign(x, y) / x, 0 at x == 0; nothing flows to y.
    (x, _), (tx, _) = primals, tangents
    return _derivatives.linear(
        out, (_derivatives.masked(x != 0, out / jnp.where(x == 0, 1, x)), tx)
    )


def _hypot_tangent(primals, tangents, out):
    # PyTorch: (x dx + y dy) / hypot(x, y), nan at the origin (jax's gives 1/2 there).
    (x, y), (tx, ty) = primals, tangents
    return _derivatives.linear(out, (x / out, tx), (y / out, ty))


atan2 = _real_binary(
    "atan2", _derivatives.with_jvp(jnp.arctan2, _atan2_tangent), aliases=("arctan2",)
)
copysign = _real_binary(
    "copysign",
    _derivatives.with_jvp(jnp.copysign, _copysign_tangent),
    node=lambda other: "CopysignBackward0" if isinstance(other, Tensor) else "CopysignBackward1",
)
hypot = _real_binary(
    "hypot", _derivatives.with_jvp(jnp.hypot, _hypot_tangent), DEFAULT, kernel="hypot_cpu"
)
logaddexp2 = _real_binary(
    "logaddexp2", jnp.logaddexp2, DEFAULT, kernel="logaddexp2_cpu", inplace=False
)


@op(promote=DEFAULT)
@run_in_opmath
def logaddexp(input: T, other: T):
    if is_integral(input):
        raise not_implemented("logaddexp_cpu", input)
    if not is_complex(input):
        return jnp.logaddexp(input, other)
    # log(e^a + e^b) around the operand of larger real part; equal infinities pass through.
    big = jnp.where(input.real >= other.real, input, other)
    small = jnp.where(input.real >= other.real, other, input)
    same_inf = jnp.isinf(input.real) & (input == other)
    return jnp.where(same_inf, input, big + jnp.log1p(jnp.exp(small - big)))


@pointwise(promote=INT_TO_FLOAT, aliases=("special.xlogy",))
@run_in_opmath
def xlogy(input: T, other: T):
    """Matches `torch.xlogy`: 0 where x == 0 (unless y is NaN)."""
    return _xlogy(input, other)


def _xlogy_value(x, y):
    zero = (x == 0) & ~jnp.isnan(y)
    return jnp.where(zero, jnp.zeros((), x.dtype), x * jnp.log(y))


def _xlogy_tangent(primals, tangents, out):
    # PyTorch: d/dx = xlogy(x != 0, y) (0 at x == 0), d/dy = x / y (nan at 0 / 0).
    (x, y), (tx, ty) = primals, tangents
    dx = _xlogy_value((x != 0).astype(out.dtype), y)
    return _derivatives.linear(out, (dx, tx), (x / y, ty))


_xlogy = _derivatives.with_jvp(_xlogy_value, _xlogy_tangent)


@pointwise(promote=INT_TO_FLOAT)
def ldexp(input: T, other: T):
    """Matches `torch.ldexp`: input * 2 ** other."""
    return input * jnp.power(jnp.asarray(2, input.dtype), other)


@pointwise()
def nextafter(input: T, other: T):
    if is_integral(input) or is_complex(input):
        raise not_implemented("nextafter_cpu", input)
    return _nextafter(input, other)


@jax.custom_jvp
def _nextafter(x, y):
    return jnp.nextafter(x, y)


@_nextafter.defjvp
def _nextafter_jvp(primals, tangents):
    # PyTorch's derivative: 1 for input (one ulp away), 0 for other; jax defines none.
    out = _nextafter(*primals)
    return out, jnp.broadcast_to(tangents[0], out.shape).astype(out.dtype)


@pointwise(promote=NONE)
def heaviside(input: T, values: T):
    """Matches `torch.heaviside`: `values` where input is 0, else (input > 0)."""
    if is_complex(input) or is_complex(values):
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return jnp.where(input == 0, values, (input > 0).astype(input.dtype))


def _integer_binary(name, fn):
    def impl(input: T, other: T):
        if not is_integral(input) or is_bool(input):
            raise not_implemented(f"{name}_cpu", input)
        return fn(input, other)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return pointwise(impl)


gcd = _integer_binary("gcd", jnp.gcd)
lcm = _integer_binary("lcm", jnp.lcm)


@op(promote=NONE, returns=("mantissa", "exponent"))
def frexp(input: T):
    if is_integral(input) or is_complex(input):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = jnp.frexp(input)
    return mantissa.astype(input.dtype), exponent.astype(jnp.int32)
