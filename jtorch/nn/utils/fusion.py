"""`torch.nn.utils.fusion`: fold an eval-mode BatchNorm into the conv or linear before it."""

from __future__ import annotations

import copy

from ... import ones_like, rsqrt, zeros_like
from ..._tensor import Tensor
from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def _check_eval(module, bn) -> None:
    if module.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_stats(bn) -> None:
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """Matches `torch.nn.utils.fuse_conv_bn_eval`: a new conv computing `bn(conv(x))`."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """Matches `torch.nn.utils.fuse_conv_bn_weights`: the fused (weight, bias) Parameters.

    The BatchNorm scale multiplies the output-channel dimension of the weight: dim 0,
    or dim 1 for a transposed convolution.
    """
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    inv_std = rsqrt(bn_rv + bn_eps)
    channel = [1, -1] if transpose else [-1, 1]
    shape = channel + [1] * (conv_w.dim() - 2)
    weight = (conv_w * (bn_w * inv_std).reshape(shape)).to(dtype=w_dtype)
    bias = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """Matches `torch.nn.utils.fuse_linear_bn_eval`: a new Linear computing `bn(linear(x))`."""
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    # The BatchNorm's features must broadcast against the linear's outputs.
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got linear.out_features={linear.out_features} and "
            f"bn.num_features={bn.num_features}"
        )
    _check_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple[Parameter, Parameter]:
    """Matches `torch.nn.utils.fuse_linear_bn_weights`: the fused (weight, bias) Parameters."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * rsqrt(bn_rv + bn_eps)
    weight = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, linear_b.requires_grad)
