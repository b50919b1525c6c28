"""Pointwise ops: arithmetic, comparison, logical, bitwise, `where` and `clamp`.

Unary and binary math (exp, sin, atan2, round, ...) lives in `pointwise_math`.

Two PyTorch behaviours are not reproduced, because they need the values of the inputs
at trace time: integer division (`div`, `//`, `%`, `fmod`) by zero raises
`RuntimeError: ZeroDivisionError` in PyTorch on CPU, and here returns what XLA returns;
and `torch.sub`'s refusal of one bool tensor mixed with a non-bool one (only two bool
inputs are refused, since the kernel sees the promoted dtype).
"""

import functools
import numbers

import jax
import jax.numpy as jnp
from jax import lax

from .. import _dtype
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
from ._registry import (
    ALWAYS_BOOL,
    BOOL_TO_LONG,
    COMPLEX_TO_FLOAT,
    DEFAULT,
    INT_TO_FLOAT,
    METHODS,
    NAMESPACES,
    NONE,
    TI,
    S,
    T,
    op,
)
from ._rows import BROADCAST

pointwise = functools.partial(op, inplace=True)

# ---------------------------------------------------------------------------
# Helpers


_HALF = (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16))


def result_dtype(*xs):
    """torch.result_type of kernel arguments, for ops declared with `promote=NONE`.

    Python scalars reach a jitted kernel as weakly typed 0-d arrays; they count as
    wrapped numbers. Returns a numpy dtype.
    """
    dims, zeros, scalars = [], [], []
    for x in xs:
        if x is None:
            continue
        if isinstance(x, (bool, int, float, complex)):
            scalars.append(x)
            continue
        d = _dtype.from_np(x.dtype)
        if x.ndim == 0 and jax.typeof(x).weak_type:
            scalars.append({0: False, 1: 0, 2: 0.0, 3: 0j}[_dtype.category(d)])
        else:
            (dims if x.ndim else zeros).append(d)
    return _dtype.result_type_of(dims, zeros, scalars).np


def _binary_dunder(fn):
    """A Python operator method: unknown operand types give NotImplemented, as in PyTorch."""

    @functools.wraps(fn)
    def method(self, other):
        if not isinstance(other, (Tensor, numbers.Number)):
            return NotImplemented
        return fn(self, other)

    return method


def reflected(rname: str, fn) -> None:
    """Installs `Tensor.__r<rname>__` as `fn(self, other)`."""
    METHODS[f"__r{rname}__"] = _binary_dunder(fn)


# ---------------------------------------------------------------------------
# Arithmetic


def _check_alpha(a, alpha, what="alpha"):
    """PyTorch's checks of a scalar multiplier, on its (traced, weakly typed) dtype."""
    kind = jnp.result_type(alpha)
    if jnp.issubdtype(kind, jnp.complexfloating) and not is_complex(a):
        raise RuntimeError(
            f"For non-complex input tensors, argument {what} must not be a complex number."
        )
    if jnp.issubdtype(kind, jnp.floating) and is_integral(a):
        raise RuntimeError(
            f"For integral input tensors, argument {what} must not be a floating point number."
        )


# add/sub keep jax's per-op rounding in half types: PyTorch rounds `other * alpha` to the
# half type before adding, too. `alpha` is traced: `other * 1` is exact, and a new value
# reuses the kernel.
@pointwise(dunder="add", wraps_numbers=True, rows=BROADCAST)
def add(input: T, other: T, *, alpha: S = 1):
    _check_alpha(input, alpha)
    return input + other * alpha


def _check_sub(a, b):
    if is_bool(a) and is_bool(b):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not "
            "supported. Use the `^` or `logical_xor()` operator instead."
        )


@pointwise(dunder="sub", aliases=("subtract",), wraps_numbers=True, rows=BROADCAST)
def sub(input: T, other: T, *, alpha: S = 1):
    _check_sub(input, other)
    _check_alpha(input, alpha)
    return input - other * alpha


@op(
    method=False,
    node=lambda other: "RsubBackward0" if isinstance(other, Tensor) else "RsubBackward1",
)
def rsub(input: T, other: T, *, alpha: S = 1):
    """Matches `torch.rsub`: `other - alpha * input`."""
    _check_sub(input, other)
    _check_alpha(input, alpha)
    return other - input * alpha


@pointwise(
    dunder="mul", aliases=("multiply",), scalar_opmath=True, wraps_numbers=True, rows=BROADCAST
)
@run_in_opmath
def mul(input: T, other: T):
    if is_bool(input):
        return input & other
    return input * other


def _div_kind(rounding_mode=None):
    return INT_TO_FLOAT if rounding_mode is None else DEFAULT


def _floor_div(a, b, kernel="div_floor_cpu"):
    if is_bool(a):
        raise not_implemented(kernel, a)
    # jnp.floor_divide on floats is Python's algorithm (fmod, then correct), as PyTorch's.
    return jnp.floor_divide(a, b)


def true_quotient(a, b):
    """a / b rounded once, as PyTorch divides.

    XLA rewrites a division by a broadcast divisor (`x / 7`, `x / y[:, None]`) into a
    multiplication by its reciprocal: two roundings, one bit off in about half of the
    elements. Behind an optimization barrier the broadcast divisor is an opaque array and
    the division stays a division.
    """
    a, b = jnp.asarray(a), jnp.asarray(b)
    shape = jnp.broadcast_shapes(a.shape, b.shape)
    if b.shape != shape and jnp.issubdtype(jnp.result_type(a, b), jnp.inexact):
        b = lax.optimization_barrier(jnp.broadcast_to(b, shape))
    return a / b


@pointwise(
    promote=_div_kind,
    dunder="truediv",
    aliases=("divide",),
    scalar_opmath=True,
    wraps_numbers=True,
    node=lambda rounding_mode: "DivBackward2" if rounding_mode is not None else "DivBackward0",
    rows=BROADCAST,
)
def div(input: T, other: T, *, rounding_mode=None):
    if rounding_mode is None:
        return run_in_opmath(true_quotient)(input, other)
    if rounding_mode == "trunc":
        if is_bool(input):
            raise not_implemented("div_trunc_cpu", input)
        if is_integral(input):
            return lax.div(*jnp.broadcast_arrays(input, other))  # C division: toward zero
        # PyTorch rounds the quotient to a half type before truncating it.
        return jnp.trunc(run_in_opmath(true_quotient)(input, other))
    if rounding_mode == "floor":
        return run_in_opmath(_floor_div)(input, other)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
        f"found '{rounding_mode}'"
    )


@pointwise(
    promote=INT_TO_FLOAT,
    scalar_opmath=True,
    wraps_numbers=True,
    node="DivBackward0",
    rows=BROADCAST,
)
@run_in_opmath
def true_divide(input: T, other: T):
    return true_quotient(input, other)


@pointwise(dunder="floordiv", scalar_opmath=True)
@run_in_opmath
def floor_divide(input: T, other: T):
    return _floor_div(input, other)


@pointwise(
    dunder="mod",
    node=lambda other: "RemainderBackward1" if isinstance(other, Tensor) else "RemainderBackward0",
)
@run_in_opmath
def remainder(input: T, other: T):
    """Matches `torch.remainder`: Python's modulo (the result has the divisor's sign)."""
    if is_bool(input) or is_complex(input):
        raise not_implemented("remainder_cpu", input)
    return jnp.remainder(input, other)


@pointwise(node=lambda other: "FmodBackward1" if isinstance(other, Tensor) else "FmodBackward0")
@run_in_opmath
def fmod(input: T, other: T):
    """Matches `torch.fmod`: C's fmod (the result has the dividend's sign)."""
    if is_bool(input) or is_complex(input):
        raise not_implemented("fmod_cpu", input)
    return jnp.fmod(input, other)


def _int_pow(base, exp):
    # Negative exponents: PyTorch truncates 1 / base**n, so only |base| == 1 survives.
    pos = jnp.power(base, jnp.where(exp < 0, 0, exp).astype(base.dtype))
    if not jnp.issubdtype(base.dtype, jnp.signedinteger):
        return pos
    one = jnp.ones((), base.dtype)
    neg = jnp.where(
        base == 1, one, jnp.where(base == -1, jnp.where(exp % 2 == 0, one, -one), 0 * one)
    )
    return jnp.where(exp < 0, neg, pos)


def _pow_node(input, exponent) -> str:
    """PyTorch's pow overloads: Tensor ** Scalar, Tensor ** Tensor, Scalar ** Tensor."""
    if not isinstance(input, Tensor):
        return "PowBackward2"
    return "PowBackward1" if isinstance(exponent, Tensor) else "PowBackward0"


def _check_int_pow(input, exponent, *, inplace=False, out=None):
    """PyTorch refuses a negative Python int power of an integer tensor (a value check)."""
    if (
        isinstance(input, Tensor)
        and not (input.dtype.is_floating_point or input.dtype.is_complex)
        and isinstance(exponent, numbers.Integral)
        and not isinstance(exponent, bool)
        and exponent < 0
    ):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


@pointwise(dunder="pow", check=_check_int_pow, node=_pow_node)
def pow(input: T, exponent: T):
    if is_bool(input):
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if is_integral(input):
        return _int_pow(input, exponent)
    if jnp.ndim(exponent) == 0 and not is_complex(input) and not is_complex(exponent):
        return _pow(input, exponent, _scalar_power)
    return run_in_opmath(_pow)(input, exponent)


def _scalar_power(x, e):
    """x ** e for a scalar e, as PyTorch's CPU kernel computes it: x * x, x * x * x,
    1 / (x * x), 1 / x, sqrt and rsqrt for e = 2, 3, -2, -1, 0.5, -0.5 (one rounding
    per step: bfloat16 rounds each step, float16 computes in float32), `pow` otherwise."""
    half = x.dtype if x.dtype in _HALF else None
    if half == jnp.float16:
        x = x.astype(jnp.float32)
    e = jnp.asarray(e, x.dtype)
    sq = x * x
    general = (
        jnp.power(x.astype(jnp.float32), e.astype(jnp.float32)).astype(x.dtype)
        if half == jnp.bfloat16
        else jnp.power(x, e)
    )
    out = jnp.where(
        e == 2,
        sq,
        jnp.where(
            e == 3,
            sq * x,
            jnp.where(
                e == -2,
                1 / sq,
                jnp.where(
                    e == -1,
                    1 / x,
                    jnp.where(e == 0.5, jnp.sqrt(x), jnp.where(e == -0.5, lax.rsqrt(x), general)),
                ),
            ),
        ),
    )
    return out.astype(half) if half is not None else out


def _pow_tangent(primals, tangents, out):
    """PyTorch's `pow_backward_self` / `pow_backward_exponent`: nothing flows to the base
    where the exponent is 0, nor to the exponent where the base is 0 and the exponent a
    nonnegative real (jax gives 0 * inf = nan at 0 ** 0)."""
    (x, y), (tx, ty) = primals, tangents
    dx = _derivatives.masked(y != 0, y * jnp.power(x, y - 1)) if tx is not None else None
    if jnp.iscomplexobj(y):
        base_zero = (x == 0) & (jnp.imag(y) == 0) & (jnp.real(y) >= 0)
    else:
        base_zero = (x == 0) & (y >= 0)
    dy = _derivatives.masked(~base_zero, out * jnp.log(x)) if ty is not None else None
    return _derivatives.linear(out, (dx, tx), (dy, ty))


def _pow(x, y, forward=jnp.power):
    """`forward(x, y)` (x ** y) with PyTorch's derivative (`_pow_tangent`)."""
    return _derivatives.with_jvp(forward, _pow_tangent)(x, y)


METHODS["__ipow__"] = METHODS["pow_"]
METHODS["__pow__"] = _binary_dunder(METHODS["pow"])
reflected("pow", lambda self, other: pow(other, self))


def _check_float_power(input, exponent, *, inplace=False, out=None):
    """float_power's result is always float64/complex128: a narrower destination is refused."""
    cplx = any(
        isinstance(x, complex) or (isinstance(x, Tensor) and x.dtype.is_complex)
        for x in (input, exponent)
    )
    want = _dtype.complex128 if cplx else _dtype.float64
    for what, t in (
        ("base given to float_power_", input if inplace else None),
        ("output given to float_power", out),
    ):
        if isinstance(t, Tensor) and t.dtype is not want:
            raise RuntimeError(
                f"the {what} has dtype {c10_name(t.dtype)} but the operation's "
                f"result requires dtype {c10_name(want)}"
            )


@pointwise(promote=NONE, check=_check_float_power, node=_pow_node)
def float_power(input: T, exponent: T):
    """Matches `torch.float_power`: always computed in float64 (complex128 for complex)."""
    dt = jnp.complex128 if is_complex(input) or is_complex(exponent) else jnp.float64
    return _pow(jnp.asarray(input, dt), jnp.asarray(exponent, dt))


@pointwise(dunder="neg", aliases=("negative",))
def neg(input: T):
    if is_bool(input):
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If "
            "you are trying to invert a mask, use the `~` or `logical_not()` "
            "operator instead."
        )
    return -input


@op(dunder="pos")
def positive(input: T):
    if is_bool(input):
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@pointwise(dunder="abs", aliases=("absolute",), promote=COMPLEX_TO_FLOAT)
def abs(input: T):
    if is_bool(input):
        raise not_implemented("abs_cpu", input)
    return _derivatives.abs(input)  # (PyTorch's gradient at 0 is 0)


@pointwise(promote=BOOL_TO_LONG, node="PowBackward0")
def square(input: T):
    return input * input


@pointwise()
@run_in_opmath
def addcmul(input: T, tensor1: T, tensor2: T, *, value: S = 1):
    _check_alpha(input, value, "value")
    return input + jnp.asarray(value, input.dtype) * tensor1 * tensor2


@pointwise(promote=NONE)
def addcdiv(input: T, tensor1: T, tensor2: T, *, value: S = 1):
    if is_integral(tensor1) and is_integral(tensor2):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    dt = result_dtype(input, tensor1, tensor2)
    return run_in_opmath(_addcdiv)(*(jnp.asarray(x, dt) for x in (input, tensor1, tensor2)), value)


def _addcdiv(input, tensor1, tensor2, value):
    _check_alpha(input, value, "value")
    # PyTorch's kernel: self + value * t1 / t2, i.e. (value * t1) / t2
    return input + true_quotient(value * tensor1, tensor2)


@pointwise(
    promote=NONE,
    node=lambda weight: "LerpBackward1" if isinstance(weight, Tensor) else "LerpBackward0",
)
def lerp(input: T, end: T, weight: T):
    """Matches `torch.lerp`; like PyTorch, switches formula at weight 0.5 for exact ends."""
    for name, x in (("end", end), ("weight", weight)):
        if not jax.typeof(x).weak_type and x.dtype != input.dtype:
            raise RuntimeError(_lerp_dtype_error(input, x, name))
    if is_integral(input):
        raise not_implemented(
            "lerp_kernel_scalar" if jax.typeof(weight).weak_type else "lerp_kernel_tensor", input
        )
    # The weight stays in the computation type (float32 for half inputs), unrounded.
    wdt = jnp.float32 if input.dtype in _HALF else input.dtype
    return run_in_opmath(_lerp)(input, end, jnp.asarray(weight, wdt))


def _lerp_dtype_error(input, x, name):
    def nm(a):
        return {
            "float32": "float",
            "float64": "double",
            "float16": "c10::Half",
            "bfloat16": "c10::BFloat16",
            "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>",
        }.get(str(a.dtype), str(a.dtype))

    return f"expected dtype {nm(input)} for `{name}` but got dtype {nm(x)}"


def _lerp(start, end, weight):
    diff = end - start
    return jnp.where(jnp.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))


# Python's reflected operators: `2 - t` is `rsub(t, 2)`, `2 / t` is `t.reciprocal() * 2`.
reflected("add", lambda self, other: add(other, self))
reflected("sub", lambda self, other: rsub(self, other))
reflected("mul", lambda self, other: mul(other, self))
reflected("floordiv", lambda self, other: floor_divide(other, self))
reflected("mod", lambda self, other: remainder(other, self))


# ---------------------------------------------------------------------------
# Comparison


def _compare(name, fn, dunder=None, aliases=(), complex_ok=False):
    def impl(input: T, other: T):
        if not complex_ok and is_complex(input):
            raise not_implemented(f"{name}_cpu", input)
        return fn(input, other)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    f = pointwise(impl, promote=ALWAYS_BOOL, dunder=dunder, aliases=aliases, rows=BROADCAST)
    if dunder:
        METHODS[f"__{dunder}__"] = _binary_dunder(METHODS[name])
    return f


eq = _compare("eq", jnp.equal, "eq", complex_ok=True)
ne = _compare("ne", jnp.not_equal, "ne", ("not_equal",), complex_ok=True)
lt = _compare("lt", jnp.less, "lt", ("less",))
le = _compare("le", jnp.less_equal, "le", ("less_equal",))
gt = _compare("gt", jnp.greater, "gt", ("greater",))
ge = _compare("ge", jnp.greater_equal, "ge", ("greater_equal",))


def _extremum(name, fn):
    def impl(input: T, other: T):
        if is_complex(input):
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return fn(input, other)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return op(impl, rows=BROADCAST)


def _fminmax(fn, wins):
    """fmax/fmin with PyTorch's gradient: all of it to `input` where it wins or ties (or
    `other` is NaN), else all to `other` (jax splits ties)."""

    def tangent(primals, tangents, out):
        (x, y), (tx, ty) = primals, tangents
        first = wins(x, y) | jnp.isnan(y)
        zero = jnp.zeros((), out.dtype)
        return _derivatives.linear(
            out,
            (None, None if tx is None else jnp.where(first, tx, zero)),
            (None, None if ty is None else jnp.where(first, zero, ty)),
        )

    return _derivatives.with_jvp(fn, tangent)


maximum = _extremum("maximum", jnp.maximum)  # NaN-propagating
minimum = _extremum("minimum", jnp.minimum)
fmax = _extremum("fmax", _fminmax(jnp.fmax, jnp.greater_equal))  # NaN-ignoring
fmin = _extremum("fmin", _fminmax(jnp.fmin, jnp.less_equal))


@op(promote=NONE)
def isclose(input: T, other: T, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.dtype != other.dtype:
        raise RuntimeError(f"{c10_name(input)} did not match {c10_name(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = input == other
    if equal_nan and not is_integral(input):
        close = close | (jnp.isnan(input) & jnp.isnan(other))
    if rtol == 0 and atol == 0:
        return close
    if is_bool(input):
        input, other = input.astype(default_float()), other.astype(default_float())
    # PyTorch's (rtol * other) promotes integers to the default float dtype.
    scale_dt = default_float() if is_integral(other) else other.dtype
    allowed = atol + jnp.abs(rtol * other.astype(scale_dt))
    actual = jnp.abs(input - other)
    if is_complex(actual) or jnp.issubdtype(actual.dtype, jnp.floating):
        finite = jnp.isfinite(actual)
    else:
        finite = True
    return close | (finite & (actual <= allowed))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Matches `torch.allclose`."""
    return bool(jnp.all(isclose(input, other, rtol, atol, equal_nan)._array))


def equal(input, other) -> bool:
    """Matches `torch.equal`: same shape and same values (NaN is not equal to itself)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(jnp.all(eq(input, other)._array))


for _f in (allclose, equal):
    _f.__module__ = "jtorch"
    NAMESPACES[""][_f.__name__] = METHODS[_f.__name__] = _f


# ---------------------------------------------------------------------------
# Logical and bitwise


def _logical(name, fn):
    def impl(input: T, other: T):
        return fn(input.astype(bool), other.astype(bool))

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`: the result is bool (or `out`'s dtype)."
    return pointwise(impl, promote=NONE)


logical_and = _logical("logical_and", jnp.logical_and)
logical_or = _logical("logical_or", jnp.logical_or)
logical_xor = _logical("logical_xor", jnp.logical_xor)


@pointwise(promote=NONE)
def logical_not(input: T):
    return jnp.logical_not(jnp.asarray(input).astype(bool))


def _bitwise(name, fn, dunder, kernel):
    def impl(input: T, other: T):
        if not is_integral(input):
            raise not_implemented(kernel, input)
        return fn(input, other)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    f = pointwise(impl, dunder=dunder)
    METHODS[f"__{dunder}__"] = _binary_dunder(METHODS[name])
    reflected(dunder, lambda self, other: f(other, self))
    return f


def _shift_left(a, b):
    if is_bool(a):
        return (a & (b == 0)) if is_bool(b) else a
    # XLA, like PyTorch, gives 0 for shifts of at least the bit width (and negative ones).
    return jnp.left_shift(a, b)


bitwise_and = _bitwise("bitwise_and", jnp.bitwise_and, "and", "bitwise_and_cpu")
bitwise_or = _bitwise("bitwise_or", jnp.bitwise_or, "or", "bitwise_or_cpu")
bitwise_xor = _bitwise("bitwise_xor", jnp.bitwise_xor, "xor", "bitwise_xor_cpu")
bitwise_left_shift = _bitwise("bitwise_left_shift", _shift_left, "lshift", "lshift_cpu")
bitwise_right_shift = _bitwise("bitwise_right_shift", jnp.right_shift, "rshift", "rshift_cpu")


@pointwise(dunder="invert")
def bitwise_not(input: T):
    if not is_integral(input):
        raise not_implemented("bitwise_not_cpu", input)
    return jnp.invert(input)


# ---------------------------------------------------------------------------
# where and clamp


@op(method=False, wraps_numbers=True)
def where(condition: TI, input: T, other: T):
    """Matches the three-argument `torch.where`; scalars are allowed for `input`/`other`."""
    cond = jnp.asarray(condition)
    if cond.dtype != jnp.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor "
            f"with dtype {c10_name(cond)}"
        )
    return jnp.where(cond, input, other)


_where3 = where


def where(condition, input=None, other=None, *, out=None):  # noqa: F811
    """Matches `torch.where`; the one-argument form is `nonzero(condition, as_tuple=True)`."""
    if input is None and other is None and out is None:
        return NAMESPACES[""]["nonzero"](condition, as_tuple=True)
    return _where3(condition, input, other, out=out)


where.__module__ = "jtorch"
NAMESPACES[""]["where"] = where
METHODS["where"] = lambda self, condition, other: _where3(condition, self, other)


def _check_clamp(input, name="clamp"):
    if is_complex(input):
        raise NotImplementedError(f"{name} is not supported for complex types")


# PyTorch's clamp has a Tensor and a Scalar overload: the Tensor one when a bound is a tensor.
@pointwise(
    aliases=("clip",),
    node=lambda min, max: (
        "ClampBackward0" if isinstance(min, Tensor) or isinstance(max, Tensor) else "ClampBackward1"
    ),
)
def clamp(input: T, min: T = None, max: T = None):
    """Matches `torch.clamp`: NaN propagates, and `max` wins when `min > max`."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    _check_clamp(input)
    return _clamp(input, min, max)


@pointwise(node=lambda min: "ClampMinBackward1" if isinstance(min, Tensor) else "ClampMinBackward0")
def clamp_min(input: T, min: T):
    _check_clamp(input, "clamp_min")
    return _clamp(input, min, None)


@pointwise(node=lambda max: "ClampMaxBackward1" if isinstance(max, Tensor) else "ClampMaxBackward0")
def clamp_max(input: T, max: T):
    _check_clamp(input, "clamp_max")
    return _clamp(input, None, max)


def _clamp(x, lo, hi):
    """max(x, lo) then min(., hi), with PyTorch's gradient (`clamp_backward_min_max`): `x`'s
    where lo <= x <= hi (bounds included), `lo`'s where x < lo < hi, `hi`'s where x > hi or
    hi < lo. jax's maximum/minimum split a tie's gradient in half."""
    bounds = tuple(b for b in (lo, hi) if b is not None)

    def forward(x, *b):
        it = iter(b)
        out = x
        if lo is not None:
            out = jnp.maximum(out, next(it))
        if hi is not None:
            out = jnp.minimum(out, next(it))
        return out

    def tangent(primals, tangents, out):
        x, b = primals[0], list(primals[1:])
        tx, tb = tangents[0], list(tangents[1:])
        lo_ = b.pop(0) if lo is not None else None
        hi_ = b[0] if hi is not None else None
        t_lo = tb.pop(0) if lo is not None else None
        t_hi = tb[0] if hi is not None else None
        zero = jnp.zeros((), out.dtype)
        keep = jnp.ones(out.shape, bool)
        if lo_ is not None:
            keep = keep & (x >= lo_)
        if hi_ is not None:
            keep = keep & (x <= hi_)
        terms = [(None, None if tx is None else jnp.where(keep, tx, zero))]
        if t_lo is not None:
            below = (x < lo_) if hi_ is None else (x < lo_) & (lo_ < hi_)
            terms.append((None, jnp.where(below, t_lo, zero)))
        if t_hi is not None:
            above = (x > hi_) if lo_ is None else (x > hi_) | (hi_ < lo_)
            terms.append((None, jnp.where(above, t_hi, zero)))
        return _derivatives.linear(out, *terms)

    return _derivatives.with_jvp(forward, tangent)(x, *bounds)
