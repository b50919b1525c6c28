"""`torch._higher_order_ops.associative_scan`: an inclusive scan by an associative function.

PyTorch runs its 'generic' mode eagerly: the combine function, vmapped over the scan
dimension, is applied to neighbouring pairs, the half-length result is scanned recursively,
and the missing positions are filled from it (log2(n) levels of calls). jtorch runs the
same recursion with the same pairing, so the floating-point order of the combines is
PyTorch's. 'pointwise' mode is PyTorch's CUDA/XPU code generator: on other devices PyTorch
refuses it, and so does jtorch.
"""

from __future__ import annotations

from typing import Callable

from .. import cat, stack
from .._tensor import Tensor
from ..func import vmap
from ..utils import _pytree as pytree
from ._flat import canonical_dim, flat_binary, from_front, to_front

__all__ = ["associative_scan"]


def _check(combine_fn, leaves: list, dim, reverse, combine_mode) -> None:
    """PyTorch's argument checks, with its exception types and messages."""
    if not callable(combine_fn):
        raise ValueError(f"Combine_fn must be a callable, but got {combine_fn}")
    if not isinstance(dim, int):
        raise ValueError("Dim must be an int, but got " + str(type(dim)))
    if not isinstance(reverse, bool):
        raise RuntimeError("Reverse must be a bool, but got " + str(type(reverse)))
    if combine_mode not in ("pointwise", "generic"):
        raise ValueError(
            f"Combine_mode must either 'pointwise' or 'generic', but got {combine_mode}"
        )
    if combine_mode == "pointwise" and not all(x.device.type in ("cuda", "xpu") for x in leaves):
        raise ValueError(
            "For combine_mode='pointwise', all input tensors need to be on CUDA or XPU"
        )
    if not leaves:
        raise ValueError("Expected at least 1 xs leaf")
    if any(not isinstance(x, Tensor) for x in leaves):
        raise ValueError("xs leaves must be a Tensor")
    if any(x.is_sparse for x in leaves):
        raise ValueError("xs leaves must dense Tensors, consider using `to_dense()`")
    if any(x.ndim <= dim or x.shape[dim] == 0 for x in leaves):
        raise ValueError(
            "All xs leaves must at least have 'dim' number of dimensions and scan dimension > 0"
        )


def associative_scan(
    combine_fn: Callable, xs, dim: int, reverse: bool = False, combine_mode: str = "pointwise"
):
    """Matches `torch._higher_order_ops.associative_scan` (PyTorch's eager 'generic' mode).

    Args:
      combine_fn: `(lhs, rhs) -> result`, pytrees shaped like `xs` without the scan dimension;
        it must be associative.
      xs: a tensor or a pytree of tensors of the same length along `dim`.
      dim: the dimension to scan over.
      reverse: scan from the last element to the first.
      combine_mode: 'generic' (any function), or 'pointwise' (CUDA/XPU only, as in PyTorch).

    Returns:
      A pytree like `xs` whose element i combines elements 0..i (i..n-1 when reversed).
    """
    leaves, spec = pytree.tree_flatten(xs)
    # As PyTorch: the first leaf's rank is read before any check (no leaves: IndexError).
    dim = canonical_dim(leaves[0].ndim, dim)
    _check(combine_fn, leaves, dim, reverse, combine_mode)
    in_dims = pytree.tree_unflatten([0] * len(leaves), spec)
    batched = vmap(combine_fn, in_dims=(in_dims, in_dims), out_dims=0)
    combine = flat_binary(batched, spec, len(leaves))
    out = _scan(combine, to_front(leaves, dim, reverse))
    return pytree.tree_unflatten(from_front(out, dim, reverse), spec)


def _scan(combine: Callable, elems: list) -> list:
    """The inclusive scan of `elems` along their first dimension (PyTorch's recursion)."""
    n = elems[0].shape[0]
    if n < 2:
        return elems
    # Pairs (0,1), (2,3), ...: their combinations are the prefix results at odd positions,
    # once scanned among themselves.
    odd = _scan(combine, combine(*[e[0 : n - 1 : 2] for e in elems], *[e[1::2] for e in elems]))
    # Even positions from 2 on: the odd prefix just before them, combined with the element.
    if n > 2:
        before = odd if n % 2 else [o[:-1] for o in odd]
        even = combine(*before, *[e[2::2] for e in elems])
        even = [cat([e[:1], r]) for e, r in zip(elems, even)]
    else:
        even = [e[:1] for e in elems]
    return [_interleave(a, b) for a, b in zip(even, odd)]


def _interleave(even: Tensor, odd: Tensor) -> Tensor:
    """even[0], odd[0], even[1], odd[1], ... (`even` is as long as `odd` or one longer)."""
    k = odd.shape[0]
    pairs = stack([even[:k], odd], 1).flatten(0, 1)
    return cat([pairs, even[k:]]) if even.shape[0] > k else pairs
