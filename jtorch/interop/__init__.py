"""Bridges to JAX and Flax: zero-copy arrays, pytrees, pure functions of modules.

- `from_jax(array)` / `to_jax(tensor)` (also `Tensor.jax()`): the same jax array, no copy.
- `Tensor` and `nn.Parameter` are jax pytrees (a leaf array each), so tensors pass
  through `jax.jit`, `jax.tree_util` and friends.
- `functional(module)` -> `(params, apply)`: `apply(params, *args)` is a pure function
  of jax arrays, usable under `jax.jit`, `jax.grad` and `jax.vmap`.
- `jax_function(module)`: just the `apply` of the above, with the module's current
  parameters and buffers bound as its first argument's default.
- `safetensors`: load and save the safetensors format.
"""

from __future__ import annotations

import jax

from .. import _tensor
from .._tensor import Tensor, wrap
from . import safetensors  # noqa: F401
from ._modules import functional, jax_function  # noqa: F401

__all__ = ["from_jax", "to_jax", "functional", "jax_function", "safetensors"]


def from_jax(array) -> Tensor:
    """A tensor over `array` itself (no copy)."""
    return wrap(jax.numpy.asarray(array))


def to_jax(tensor: Tensor):
    """The jax array a tensor holds (no copy for a tensor that is not a strided view)."""
    return tensor._array


def _flatten(t):
    return (t._array,), (type(t), t.requires_grad)


def _unflatten(aux, children):
    cls, requires_grad = aux
    (arr,) = children
    t = wrap(arr) if cls is Tensor else cls(wrap(arr), requires_grad)
    if (
        cls is Tensor
        and requires_grad
        and hasattr(arr, "dtype")
        and (jax.numpy.issubdtype(arr.dtype, jax.numpy.inexact))
    ):
        t._rg = True
    return t


def _register() -> None:
    from ..nn.parameter import Parameter

    for cls in (Tensor, Parameter):
        try:
            jax.tree_util.register_pytree_node(cls, _flatten, _unflatten)
        except ValueError:
            pass  # already registered (module reloaded)
    Tensor.jax = to_jax


_register()
_ = _tensor
