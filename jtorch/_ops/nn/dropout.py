"""The dropout family (`dropout`, `alpha_dropout`, `dropout1d/2d/3d`, `native_dropout`):
one kernel, fed a key from the default generator."""

import math
import warnings

import jax
import jax.numpy as jnp

from ... import _random
from .._kernel_helpers import private_op
from .._registry import DEFAULT, NONE, TI, T, composite, op

# PyTorch's alpha-dropout constant (the SELU fixed point: -scale * alpha).
_ALPHA = 1.7580993408473766


def _dropout_kernel(input: T, key: TI, p, feature_dims, alpha):
    if feature_dims and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        # PyTorch multiplies by zero, so NaN and inf stay NaN.
        return input * jnp.zeros((), input.dtype)
    shape = input.shape
    if feature_dims:
        shape = shape[:feature_dims] + (1,) * (input.ndim - feature_dims)
    keep = jax.random.bernoulli(key, 1 - p, shape)
    noise = keep.astype(input.dtype)
    if not alpha:
        return input * (noise / (1 - p)).astype(input.dtype)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    b = (noise - 1) * (_ALPHA * a) + _ALPHA * a * p
    return input * (noise * a) + b


_dropout_call, _dropout_inplace = private_op(_dropout_kernel)


def check_p(p) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout_apply(input, p, training, inplace, feature_dims=0, alpha=False, generator=None):
    """Runs the dropout kernel; `input` itself when nothing is dropped (as PyTorch returns)."""
    if not training or p == 0 or input.numel() == 0:
        return input
    f = _dropout_inplace if inplace else _dropout_call
    return f(input, _random.key_for(generator, input), float(p), feature_dims, alpha)


@composite(name="nn.functional.dropout", method=False)
def dropout(input, p=0.5, training=True, inplace=False):
    """Matches `torch.nn.functional.dropout`."""
    check_p(p)
    return dropout_apply(input, p, training, inplace)


@composite(name="nn.functional.alpha_dropout", method=False)
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Matches `torch.nn.functional.alpha_dropout`."""
    check_p(p)
    return dropout_apply(input, p, training, inplace, alpha=True)


@composite(name="nn.functional.feature_alpha_dropout", method=False)
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Matches `torch.nn.functional.feature_alpha_dropout`."""
    check_p(p)
    return dropout_apply(input, p, training, inplace, feature_dims=2, alpha=True)


def _warn_dims(name, ndim, ok, spatial, lo, hi):
    if ndim not in ok:
        warnings.warn(
            f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence "
            f"this warning, please use dropout instead. Note that {name} exists to "
            f"provide channel-wise dropout on inputs with {spatial} spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. "
            f"{lo}D or {hi}D inputs).",
            stacklevel=3,
        )


@composite(name="nn.functional.dropout1d", method=False)
def dropout1d(input, p=0.5, training=True, inplace=False):
    """Matches `torch.nn.functional.dropout1d`."""
    check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    # An unbatched input is one sample: its noise covers the channel dim only.
    return dropout_apply(input, p, training, inplace, feature_dims=1 if input.ndim == 2 else 2)


@composite(name="nn.functional.dropout2d", method=False)
def dropout2d(input, p=0.5, training=True, inplace=False):
    """Matches `torch.nn.functional.dropout2d`."""
    check_p(p)
    _warn_dims("dropout2d", input.ndim, (3, 4), 2, 3, 4)
    if input.ndim == 3:
        # PyTorch's historical behaviour: a 3-D input is read as (N, C, L).
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=3,
        )
    return dropout_apply(input, p, training, inplace, feature_dims=2)


@composite(name="nn.functional.dropout3d", method=False)
def dropout3d(input, p=0.5, training=True, inplace=False):
    """Matches `torch.nn.functional.dropout3d`."""
    check_p(p)
    _warn_dims("dropout3d", input.ndim, (4, 5), 3, 4, 5)
    return dropout_apply(input, p, training, inplace, feature_dims=2 if input.ndim == 5 else 1)


def _torch_dropout(name, feature_dims, alpha, inplace):
    def impl(input, p, train):
        return dropout_apply(input, p, train, inplace, feature_dims=feature_dims, alpha=alpha)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return composite(impl, method=False)


# torch.dropout & co. take (input, p, train) and do not check p.
_torch_dropout("dropout", 0, False, False)
_torch_dropout("dropout_", 0, False, True)
_torch_dropout("alpha_dropout", 0, True, False)
_torch_dropout("alpha_dropout_", 0, True, True)
_torch_dropout("feature_dropout", 2, False, False)
_torch_dropout("feature_dropout_", 2, False, True)
_torch_dropout("feature_alpha_dropout", 2, True, False)
_torch_dropout("feature_alpha_dropout_", 2, True, True)


def _native_dropout_kernel(input: T, key: TI, p, train):
    if not train or p == 0:
        return input, jnp.ones(input.shape, jnp.bool_)
    keep = jax.random.bernoulli(key, 1 - p, input.shape)
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * keep.astype(input.dtype) * jnp.asarray(scale, input.dtype), keep


_native_dropout_call, _ = private_op(_native_dropout_kernel, promote=NONE)


@composite(method=False)
def native_dropout(input, p, train):
    """Matches `torch.native_dropout`: (output, mask)."""
    return _native_dropout_call(
        input,
        _random.key_for(None, input) if train else _random.unused_key(input),
        float(p),
        bool(train),
    )


@op(promote=DEFAULT, method=False, out=False)
def native_dropout_backward(grad_output: T, mask: TI, scale: T):
    """Matches aten `native_dropout_backward`: grad * mask * scale (ints and bools give the
    default float dtype, as the float `scale` promotes them)."""
    return grad_output * mask.astype(grad_output.dtype) * scale
