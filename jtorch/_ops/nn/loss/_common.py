"""What the loss files share: the declaration form, the reduction (legacy flags included),
and the dtype and weight handling."""

import jax.numpy as jnp

from ..._registry import op


def loss_op(name: str, **kw):
    """Declares `torch.nn.functional.<name>`: a function only (no method, no `out=`)."""
    return op(name=f"nn.functional.{name}", method=False, out=False, **kw)


def reduction_of(size_average, reduce, reduction):
    """The reduction string, from the legacy flags when either is given (as PyTorch does)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        if not reduce:
            return "none"
        return "mean" if size_average else "sum"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_loss(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return jnp.sum(loss)
    return jnp.mean(loss)


def _float_check(x, kernel):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        name = {
            "int64": "Long",
            "int32": "Int",
            "int16": "Short",
            "int8": "Char",
            "uint8": "Byte",
            "bool": "Bool",
        }.get(x.dtype.name, x.dtype.name)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _broadcast(a, b):
    shape = jnp.broadcast_shapes(a.shape, b.shape)
    return jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)


def _weighted(loss, weight, reduction, weighted_mean):
    """PyTorch's Python-side `weight=` for l1/mse/huber: mean divides by sum(weight) or not."""
    if weight.shape != loss.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and weighted_mean:
        return jnp.sum(loss) / jnp.sum(weight)
    return reduce_loss(loss, reduction)
