"""Activation kernels (`torch.nn.functional.relu` ... `softmax`).

Each activation is one kernel declared under `nn.functional`; `_act` publishes
the extra names PyTorch has for it (`torch.relu`, `Tensor.relu_`, `F.elu_`)
and makes `inplace=True` write the result into `input` and return it, as
PyTorch's functional forms do. Formulas follow PyTorch's CPU kernels (same
constants, same branch conditions), computed in float32 for half types.
"""

import math
import warnings

import jax
import jax.numpy as jnp

from ... import _dtype, _random
from ..._dtype import c10_name
from ..._tensor import wrap_dim
from .. import _derivatives
from .._kernel_helpers import accumulate, need_float, private_op
from .._registry import DEFAULT, INT_TO_FLOAT, NONE, TI, T, composite, op
from .._rows import ELEMENTWISE, SoftmaxRows


def _act(
    *,
    promote=DEFAULT,
    torch_fn=False,
    method=False,
    out=False,
    torch_inplace=False,
    method_inplace=False,
    f_inplace=False,
    **record,
):
    """Declares `nn.functional.<name>` and the further names PyTorch gives it.

    An `inplace` parameter of the kernel becomes PyTorch's functional switch: with
    `inplace=True` the result is written into `input`, which is returned.

    Args:
      torch_fn / method: also `torch.<name>` / `Tensor.<name>`.
      torch_inplace / method_inplace / f_inplace: also `torch.<name>_` / `Tensor.<name>_` /
        `nn.functional.<name>_`.
      record: the autograd facts, as for `op` (`node=`, `saves_result=`).
    """

    def deco(impl):
        short = impl.__name__
        places = (
            ("torch", torch_inplace),
            ("method", method_inplace),
            ("nn.functional", f_inplace),
        )
        targets = tuple(place for place, wanted in places if wanted)
        return op(
            impl,
            name=f"nn.functional.{short}",
            promote=promote,
            method=method,
            out=out,
            aliases=(short,) if torch_fn else (),
            inplace=targets or False,
            **record,
        )

    return deco


# ---------------------------------------------------------------------------
# ReLU family


@_act(
    torch_fn=True,
    method=True,
    torch_inplace=True,
    method_inplace=True,
    f_inplace=True,
    saves_result=True,
    rows=ELEMENTWISE,
)
def relu(input: T, inplace=False):
    if input.dtype == jnp.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    # PyTorch's threshold_backward: no gradient where x <= 0 (jax's maximum gives half at 0);
    # NaN passes through, with its gradient.
    return jnp.where(input <= 0, jnp.zeros((), input.dtype), input)


@_act(node="HardtanhBackward0")  # (PyTorch's relu6 is hardtanh(0, 6))
def relu6(input: T, inplace=False):
    return _hardtanh(input, jnp.asarray(0, input.dtype), jnp.asarray(6, input.dtype))


def _hardtanh(x, lo, hi):
    """clip(x, lo, hi) with PyTorch's hardtanh_backward: no gradient at the bounds either."""
    return jnp.where(x <= lo, lo, jnp.where(x >= hi, hi, x))


@_act(f_inplace=True)
def hardtanh(input: T, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if jnp.issubdtype(input.dtype, jnp.integer):
        lo, hi = jnp.asarray(int(min_val), input.dtype), jnp.asarray(int(max_val), input.dtype)
        return jnp.clip(input, lo, hi)
    return _hardtanh(input, min_val, max_val).astype(input.dtype)


@_act(f_inplace=True)
def leaky_relu(input: T, negative_slope=0.01, inplace=False):
    need_float("leaky_relu_cpu", input)
    x = accumulate(input)
    return jnp.where(x > 0, x, x * negative_slope)


@_act(torch_fn=True, torch_inplace=True, f_inplace=True)
def threshold(input: T, threshold, value, inplace=False):
    # PyTorch: x <= threshold ? value : x (so NaN passes through).
    return jnp.where(input <= threshold, jnp.asarray(value).astype(input.dtype), input)


# rrelu draws its slopes from the default generator when training.
def _rrelu_kernel(input: T, key: TI, lower, upper, training):
    need_float("leaky_relu_cpu", input)
    x = accumulate(input)
    if not training:
        return jnp.where(x > 0, x, x * ((lower + upper) / 2))
    r = jax.random.uniform(key, x.shape, x.dtype, lower, upper)
    return jnp.where(x <= 0, x * r, x)


_rrelu_call, _rrelu_inplace = private_op(_rrelu_kernel, node="RreluWithNoiseBackward0")


def _rrelu_key(input, training, generator=None):
    return _random.key_for(generator, input) if training else _random.unused_key(input)


@composite(name="nn.functional.rrelu", method=False)
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Matches `torch.nn.functional.rrelu`."""
    f = _rrelu_inplace if inplace else _rrelu_call
    return f(input, _rrelu_key(input, training), float(lower), float(upper), bool(training))


@composite(name="nn.functional.rrelu_", method=False)
def _f_rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """Matches `torch.nn.functional.rrelu_`."""
    return _rrelu_inplace(
        input, _rrelu_key(input, training), float(lower), float(upper), bool(training)
    )


@composite(name="rrelu", method=False)
def _torch_rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Matches `torch.rrelu`."""
    return _rrelu_call(
        input, _rrelu_key(input, training, generator), float(lower), float(upper), bool(training)
    )


@composite(name="rrelu_", method=False)
def _torch_rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Matches `torch.rrelu_`."""
    return _rrelu_inplace(
        input, _rrelu_key(input, training, generator), float(lower), float(upper), bool(training)
    )


@op(promote=DEFAULT, aliases=("nn.functional.prelu",), out=False, node="PreluKernelBackward0")
def prelu(input: T, weight: T):
    need_float("prelu_cpu", input)
    if weight.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}"
        )
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.size != 1 and weight.size != channels:
        raise RuntimeError(
            f"Mismatch of parameter numbers and input channel size. Found "
            f"parameter numbers = {weight.size} and channel size = {channels}."
        )
    x, w = accumulate(input), accumulate(weight)
    if weight.size == 1:
        w = w.reshape(())
    else:
        w = w.reshape((channels,) + (1,) * (input.ndim - 2))
    return jnp.where(x > 0, x, w * x)


# ---------------------------------------------------------------------------
# Exponential-linear family


def _elu(x, alpha, scale, input_scale):
    # PyTorch's elu kernel: x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale
    return jnp.where(x <= 0, jnp.expm1(x * input_scale) * (alpha * scale), x * scale)


@_act(f_inplace=True)
def elu(input: T, alpha=1.0, inplace=False):
    need_float("elu_cpu", input)
    return _elu(accumulate(input), alpha, 1.0, 1.0)


@_act(torch_fn=True, torch_inplace=True, f_inplace=True)
def celu(input: T, alpha=1.0, inplace=False):
    need_float("elu_cpu", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu(accumulate(input), alpha, 1.0, 1.0 / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@_act(torch_fn=True, torch_inplace=True, f_inplace=True, node="EluBackward0")
def selu(input: T, inplace=False):
    need_float("elu_cpu", input)
    return _elu(accumulate(input), _SELU_ALPHA, _SELU_SCALE, 1.0)


@op(name="nn.functional.gelu", method=False, rows=ELEMENTWISE)
def gelu(input: T, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    need_float("GeluKernelImpl", input)
    x = accumulate(input)
    if approximate == "tanh":
        k_beta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
        inner = k_beta * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + jnp.tanh(inner))
    return x * 0.5 * (1 + jax.scipy.special.erf(x * (1 / math.sqrt(2.0))))


@_act(rows=ELEMENTWISE)
def silu(input: T, inplace=False):
    need_float("silu_cpu", input, complex_ok=True)
    x = accumulate(input)
    return x / (1 + jnp.exp(-x))


@_act()
def mish(input: T, inplace=False):
    need_float("mish_cpu", input)
    x = accumulate(input)
    return x * jnp.tanh(jax.nn.softplus(x))


@op(name="nn.functional.softplus", method=False)
def softplus(input: T, beta=1.0, threshold=20.0):
    need_float("softplus_cpu", input)
    x = accumulate(input)
    xb = x * beta
    # Reverts to the identity where beta * x > threshold, as PyTorch does.
    # (`where`, not `minimum`: at beta * x == threshold the gradient is all log1p's)
    return jnp.where(
        xb > threshold, x, jnp.log1p(jnp.exp(jnp.where(xb > threshold, threshold, xb))) / beta
    )


@op(name="nn.functional.logsigmoid", method=False, node="LogSigmoidBackward0")
def logsigmoid(input: T):
    need_float("log_sigmoid_cpu", input)
    x = accumulate(input)
    return jnp.minimum(x, 0) - jnp.log1p(jnp.exp(-jnp.abs(x)))


@_act()
def hardsigmoid(input: T, inplace=False):
    need_float("hardsigmoid_cpu", input)
    return _hardsigmoid(accumulate(input))


# PyTorch's hardsigmoid_backward: 1/6 strictly inside (-3, 3), 0 at and beyond the kinks.
_hardsigmoid = _derivatives.masked_unary(
    lambda x: jnp.clip(x + 3, 0, 6) / 6,
    lambda x: jnp.full(x.shape, 1 / 6, x.dtype),
    lambda x: (x > -3) & (x < 3),
)


@_act()
def hardswish(input: T, inplace=False):
    need_float("hardswish_cpu", input)
    return _hardswish(accumulate(input))


def _hardswish_tangent(primals, tangents, out):
    # PyTorch's hardswish_backward: 0 up to -3, x / 3 + 1/2 inside, 1 from 3 on.
    (x,), (t,) = primals, tangents
    d = jnp.where(
        x <= -3, jnp.zeros((), x.dtype), jnp.where(x < 3, x / 3 + 0.5, jnp.ones((), x.dtype))
    )
    return (d * t).astype(out.dtype)


_hardswish = _derivatives.with_jvp(lambda x: x * jnp.clip(x + 3, 0, 6) / 6, _hardswish_tangent)


@op(name="nn.functional.glu", method=False, out=False)
def glu(input: T, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    need_float("glu_cpu", input)
    x = accumulate(input)
    a, b = jnp.split(x, 2, axis=d)
    return a * jax.nn.sigmoid(b)


# ---------------------------------------------------------------------------
# Shrinkage and friends


@op(name="nn.functional.hardshrink", method=True, aliases=("hardshrink",))
def hardshrink(input: T, lambd=0.5):
    need_float("hardshrink_cpu", input)
    return jnp.where((input >= -lambd) & (input <= lambd), jnp.zeros((), input.dtype), input)


@op(name="nn.functional.softshrink", method=False)
def softshrink(input: T, lambd=0.5):
    need_float("softshrink_cpu", input)
    if lambd < 0:
        big = float(jnp.finfo(input.dtype).max)
        raise RuntimeError(
            f"lambda must be in range [0, {big:g}] for input dtype "
            f"{c10_name(input.dtype)}, but found {lambd:g}"
        )
    x = accumulate(input)
    return jnp.where(x > lambd, x - lambd, jnp.where(x < -lambd, x + lambd, jnp.zeros((), x.dtype)))


# composites in PyTorch: named by their last step
@op(
    name="nn.functional.softsign",
    method=False,
    out=False,
    promote=INT_TO_FLOAT,
    node="DivBackward0",
)
def softsign(input: T):
    return input / (jnp.abs(input) + 1)


@op(
    name="nn.functional.tanhshrink",
    method=False,
    out=False,
    promote=INT_TO_FLOAT,
    node="SubBackward0",
)
def tanhshrink(input: T):
    return input - jnp.tanh(input)


# ---------------------------------------------------------------------------
# Softmax family


def _softmax_args(input, dim, dtype, lastdim_kernel, kernel):
    """The input cast as PyTorch's softmax kernels see it, and the wrapped dim."""
    d = wrap_dim(dim, input.ndim)
    if dtype is not None:
        input = input.astype(dtype.np)
    if not jnp.issubdtype(input.dtype, jnp.floating):
        k = lastdim_kernel if d == max(input.ndim - 1, 0) else kernel
        need_float(k, input)
    return accumulate(input), d


def _along(fn, x, d):
    if x.ndim == 0:
        return fn(x.reshape(1), axis=0).reshape(())
    return fn(x, axis=d)


def _out_dtype(input, dtype):
    return dtype.np if dtype is not None else input.dtype


@op(promote=NONE, aliases=("special.softmax",), saves_result=True, rows=SoftmaxRows())
def softmax(input: T, dim, dtype=None):
    x, d = _softmax_args(input, dim, dtype, "softmax_lastdim_kernel_impl", "softmax_kernel_impl")
    return _along(jax.nn.softmax, x, d).astype(_out_dtype(input, dtype))


@op(promote=NONE, aliases=("special.log_softmax",), saves_result=True, rows=SoftmaxRows())
def log_softmax(input: T, dim, dtype=None):
    x, d = _softmax_args(
        input, dim, dtype, "log_softmax_lastdim_kernel_impl", "log_softmax_kernel_impl"
    )
    return _along(jax.nn.log_softmax, x, d).astype(_out_dtype(input, dtype))


@op(name="_safe_softmax", publish=True, promote=NONE, method=False, out=False)
def _safe_softmax(input: T, dim, dtype=None):
    """Matches `torch._safe_softmax`: softmax, but 0 (not nan) where a row is all -inf."""
    x, d = _softmax_args(input, dim, dtype, "softmax_lastdim_kernel_impl", "softmax_kernel_impl")
    empty_row = jnp.all(input == -jnp.inf, axis=d if input.ndim else None, keepdims=True)
    # Masked rows are zeroed before the softmax too, so their gradient is 0, not nan.
    y = _along(jax.nn.softmax, jnp.where(empty_row, jnp.zeros_like(x), x), d)
    return jnp.where(empty_row, jnp.zeros_like(y), y).astype(_out_dtype(input, dtype))


def _implicit_dim(name, ndim, dim, stacklevel=3):
    if dim is not None:
        return dim
    # `_stacklevel` counts from here as PyTorch's counts from `_get_softmax_dim`: 3 is the
    # caller of F.softmax, 5 (what nn.Softmax passes) the caller of the module.
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call "
        "to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


@composite(name="nn.functional.softmax", method=False)
def _f_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Matches `torch.nn.functional.softmax`."""
    return softmax(input, _implicit_dim("softmax", input.ndim, dim, _stacklevel), dtype=dtype)


@composite(name="nn.functional.log_softmax", method=False)
def _f_log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Matches `torch.nn.functional.log_softmax`."""
    return log_softmax(
        input, _implicit_dim("log_softmax", input.ndim, dim, _stacklevel), dtype=dtype
    )


@composite(name="nn.functional.softmin", method=False)
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """Matches `torch.nn.functional.softmin`."""
    return softmax(-input, _implicit_dim("softmin", input.ndim, dim, _stacklevel), dtype=dtype)


@composite(name="nn.functional.gumbel_softmax", method=False)
def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Matches `torch.nn.functional.gumbel_softmax`: softmax((logits + Gumbel noise) / tau).

    `hard=True` returns the one-hot of the argmax with the soft sample's gradient
    (straight-through: one_hot - soft.detach() + soft).
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -logits.new_empty(tuple(logits.shape)).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = logits.new_zeros(tuple(logits.shape)).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


@op(name="_softmax_backward_data", publish=True, promote=NONE, method=False, out=False)
def _softmax_backward_data(grad_output: TI, output: TI, dim, input_dtype):
    """Matches `torch._softmax_backward_data`: output * (grad - sum(grad * output, dim))."""
    if grad_output.dtype != output.dtype:
        raise RuntimeError(
            f"expected scalar type {c10_name(grad_output.dtype)} but found {c10_name(output.dtype)}"
        )
    if not jnp.issubdtype(grad_output.dtype, jnp.floating):
        raise NotImplementedError(
            f'"softmax_backward_lastdim_kernel_impl" not implemented '
            f"for '{c10_name(grad_output.dtype)}'"
        )
    # On CPU a float32 gradient cannot produce a lower-precision input's gradient.
    if grad_output.dtype == jnp.float32 and input_dtype in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"expected scalar type Float but found {c10_name(input_dtype)}")
    d = wrap_dim(dim, grad_output.ndim)
    dt = grad_output.dtype
    # 16-bit floats are computed in float32 and rounded once, as PyTorch's CPU kernel does.
    g, y = (
        a.astype(jnp.float32) if dt in (jnp.float16, jnp.bfloat16) else a
        for a in (grad_output, output)
    )
    if g.ndim == 0:
        return (y * (g - g * y)).astype(dt)
    return (y * (g - jnp.sum(g * y, axis=d, keepdims=True))).astype(dt)
