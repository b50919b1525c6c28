"""Pointwise ops: arithmetic, unary math, comparison, logical and bitwise."""

import functools

import jax
import jax.numpy as jnp

from ._registry import (ALWAYS_BOOL, DEFAULT, INT_TO_FLOAT, NONE, T, op)

pointwise = functools.partial(op, inplace=True)


def _is_int(a) -> bool:
    return jnp.issubdtype(jnp.result_type(a), jnp.integer) or jnp.result_type(a) == jnp.bool_


def _check_alpha(a, alpha):
    if isinstance(alpha, float) and not alpha.is_integer() and _is_int(a):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


# ---------------------------------------------------------------------------
# Arithmetic


@pointwise(dunder="add", rdunder="add")
def add(input: T, other: T, *, alpha=1):
    _check_alpha(input, alpha)
    return input + other if alpha == 1 else input + other * alpha


@pointwise(dunder="sub", rdunder="sub", aliases=("subtract",))
def sub(input: T, other: T, *, alpha=1):
    if input.dtype == jnp.bool_ and jnp.result_type(other) == jnp.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    _check_alpha(input, alpha)
    return input - other if alpha == 1 else input - other * alpha


@pointwise(dunder="mul", rdunder="mul", aliases=("multiply",))
def mul(input: T, other: T):
    if input.dtype == jnp.bool_:
        return input & other
    return input * other


def _div_kind(rounding_mode=None):
    return INT_TO_FLOAT if rounding_mode is None else DEFAULT


def _floor_div(a, b):
    if jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.floor_divide(a, b)
    return jnp.floor(a / b)


@pointwise(promote=_div_kind, dunder="truediv", rdunder="truediv", aliases=("divide",))
def div(input: T, other: T, *, rounding_mode=None):
    if rounding_mode is None:
        return input / other
    if rounding_mode == "trunc":
        if jnp.issubdtype(input.dtype, jnp.integer):
            q = jnp.floor_divide(input, other)
            return jnp.where((q < 0) & (q * other != input), q + 1, q)
        return jnp.trunc(input / other)
    if rounding_mode == "floor":
        return _floor_div(input, other)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


@pointwise(promote=INT_TO_FLOAT)
def true_divide(input: T, other: T):
    return input / other


@pointwise(dunder="floordiv", rdunder="floordiv")
def floor_divide(input: T, other: T):
    return _floor_div(input, other)


@pointwise(dunder="mod", rdunder="mod")
def remainder(input: T, other: T):
    return jnp.remainder(input, other)


@pointwise()
def fmod(input: T, other: T):
    return jnp.fmod(input, other)


@pointwise(dunder="pow", rdunder="pow")
def pow(input: T, exponent: T):
    return jnp.power(input, exponent)


@pointwise(dunder="neg", aliases=("negative",))
def neg(input: T):
    if input.dtype == jnp.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return -input


@pointwise(dunder="abs", aliases=("absolute",), promote=DEFAULT)
def abs(input: T):
    return jnp.abs(input)


# ---------------------------------------------------------------------------
# Unary float math: one declaration per row.


def _unary(name, fn, promote=INT_TO_FLOAT, aliases=()):
    def impl(input: T):
        return fn(input)
    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return pointwise(impl, promote=promote, aliases=aliases)


_UNARY_FLOAT = [
    ("exp", jnp.exp, ()),
    ("exp2", jnp.exp2, ("special.exp2",)),
    ("expm1", jnp.expm1, ("special.expm1",)),
    ("log", jnp.log, ()),
    ("log2", jnp.log2, ()),
    ("log10", jnp.log10, ()),
    ("log1p", jnp.log1p, ("special.log1p",)),
    ("sqrt", jnp.sqrt, ()),
    ("rsqrt", jax.lax.rsqrt, ()),
    ("sin", jnp.sin, ()),
    ("cos", jnp.cos, ()),
    ("tan", jnp.tan, ()),
    ("asin", jnp.arcsin, ("arcsin",)),
    ("acos", jnp.arccos, ("arccos",)),
    ("atan", jnp.arctan, ("arctan",)),
    ("sinh", jnp.sinh, ()),
    ("cosh", jnp.cosh, ()),
    ("tanh", jnp.tanh, ("nn.functional.tanh",)),
    ("asinh", jnp.arcsinh, ("arcsinh",)),
    ("acosh", jnp.arccosh, ("arccosh",)),
    ("atanh", jnp.arctanh, ("arctanh",)),
    ("sigmoid", jax.nn.sigmoid, ("special.expit", "nn.functional.sigmoid")),
    ("erf", jax.scipy.special.erf, ("special.erf",)),
    ("erfc", jax.scipy.special.erfc, ("special.erfc",)),
    ("erfinv", jax.scipy.special.erfinv, ("special.erfinv",)),
    ("reciprocal", jnp.reciprocal, ()),
]

for _name, _fn, _aliases in _UNARY_FLOAT:
    globals()[_name] = _unary(_name, _fn, aliases=_aliases)


# ---------------------------------------------------------------------------
# Comparison


def _compare(name, fn, dunder=None, aliases=()):
    def impl(input: T, other: T):
        return fn(input, other)
    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return pointwise(impl, promote=ALWAYS_BOOL, dunder=dunder, aliases=aliases)


eq = _compare("eq", jnp.equal, "eq")
ne = _compare("ne", jnp.not_equal, "ne", ("not_equal",))
lt = _compare("lt", jnp.less, "lt", ("less",))
le = _compare("le", jnp.less_equal, "le", ("less_equal",))
gt = _compare("gt", jnp.greater, "gt", ("greater",))
ge = _compare("ge", jnp.greater_equal, "ge", ("greater_equal",))


# ---------------------------------------------------------------------------
# Logical and bitwise


def _logical(name, fn):
    def impl(input: T, other: T):
        return fn(input.astype(bool), other.astype(bool))
    impl.__name__ = name
    return pointwise(impl, promote=NONE)


logical_and = _logical("logical_and", jnp.logical_and)
logical_or = _logical("logical_or", jnp.logical_or)
logical_xor = _logical("logical_xor", jnp.logical_xor)


@pointwise(promote=NONE)
def logical_not(input: T):
    return jnp.logical_not(jnp.asarray(input).astype(bool))


def _require_integral(name, a):
    if not _is_int(a):
        dt = {jnp.float32: "Float", jnp.float64: "Double", jnp.float16: "Half",
              jnp.bfloat16: "BFloat16"}.get(jnp.result_type(a).type, str(jnp.result_type(a)))
        raise RuntimeError(f'"{name}_cpu" not implemented for \'{dt}\'')


def _bitwise(name, fn, dunder):
    def impl(input: T, other: T):
        _require_integral(name, input)
        return fn(input, other)
    impl.__name__ = name
    return pointwise(impl, dunder=dunder, rdunder=dunder)


bitwise_and = _bitwise("bitwise_and", jnp.bitwise_and, "and")
bitwise_or = _bitwise("bitwise_or", jnp.bitwise_or, "or")
bitwise_xor = _bitwise("bitwise_xor", jnp.bitwise_xor, "xor")
bitwise_left_shift = _bitwise("bitwise_left_shift", jnp.left_shift, "lshift")
bitwise_right_shift = _bitwise("bitwise_right_shift", jnp.right_shift, "rshift")


@pointwise(dunder="invert")
def bitwise_not(input: T):
    _require_integral("bitwise_not", input)
    return jnp.invert(input)
