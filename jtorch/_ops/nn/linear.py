"""Linear layers: `nn.functional.linear` and `bilinear`."""

import math

import jax
import jax.numpy as jnp

from ..._dtype import c10_name
from .._kernel_helpers import accumulate
from .._registry import NONE, T, op
from .._rows import Rows

_HIGHEST = jax.lax.Precision.HIGHEST  # PyTorch does not use TF32 for matmuls by default


def _mm(a, b):
    """A matmul with PyTorch's accumulation: float32 for half types, exact for integers."""
    if a.dtype in (jnp.float16, jnp.bfloat16):
        return jnp.matmul(a, b, precision=_HIGHEST, preferred_element_type=jnp.float32).astype(
            a.dtype
        )
    return jnp.matmul(a, b, precision=_HIGHEST)


# ---------------------------------------------------------------------------
# Linear layers


def _linear_node(input, bias) -> str:
    """PyTorch's F.linear is addmm/mm on 2-D input, and views around it otherwise."""
    if input.ndim == 2:
        return "AddmmBackward0" if bias is not None else "MmBackward0"
    if input.ndim == 1:
        return "ViewBackward0" if bias is not None else "SqueezeBackward4"
    return "ViewBackward0" if bias is not None else "UnsafeViewBackward0"


@op(
    name="nn.functional.linear",
    method=False,
    promote=NONE,
    node=_linear_node,
    rows=Rows(("input",), when=lambda weight: getattr(weight, "ndim", 0) == 2),
)
def linear(input: T, weight: T, bias: T = None):
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: "
            f"{jnp.dtype(input.dtype).name} != {jnp.dtype(weight.dtype).name}".replace(
                "float32", "float"
            ).replace("float64", "double")
        )
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {weight.ndim}D")
    k = input.shape[-1] if input.ndim else 1
    if input.ndim == 0 or weight.shape[-1] != k:
        rows = math.prod(input.shape[:-1]) if input.ndim else 1
        w = weight.shape if weight.ndim == 2 else (1,) + weight.shape
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {w[1]}x{w[0]})"
        )
    out = _mm(input, weight.T)
    if bias is not None:
        if bias.dtype != input.dtype:
            raise RuntimeError(
                f"self and mat2 must have the same dtype, but got "
                f"{c10_name(bias.dtype)} and {c10_name(input.dtype)}"
            )
        out = out + bias
    return out


@op(name="nn.functional.bilinear", method=False, out=False, aliases=("bilinear",))
def bilinear(input1: T, input2: T, weight: T, bias: T = None):
    if input1.ndim != input2.ndim:
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}"
        )
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got "
                f"{input1.shape[i]} and {input2.shape[i]}"
            )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got "
            f"{input1.shape[-1]} but expected {weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got "
            f"{input2.shape[-1]} but expected {weight.shape[2]}"
        )
    a, b, w = accumulate(input1), accumulate(input2), accumulate(weight)
    out = jnp.einsum("...i,oij,...j->...o", a, w, b, precision=_HIGHEST)
    if bias is not None:
        out = out + accumulate(bias)
    return out
