"""What the scans share: flattening their pytrees and moving the scan dimension."""

from __future__ import annotations

from typing import Callable

from .._tensor import Tensor
from ..utils import _pytree as pytree


def canonical_dim(ndim: int, dim: int) -> int:
    """`dim` as a non-negative index, with PyTorch's IndexError when out of range."""
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not low <= dim <= high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})"
        )
    return dim % max(ndim, 1)


def to_front(leaves: list, dim: int, reverse: bool) -> list:
    """Each leaf with the scan dimension first (flipped when scanning from the end)."""
    out = [x.movedim(dim, 0) if dim != 0 else x for x in leaves]
    return [x.flip([0]) for x in out] if reverse else out


def from_front(leaves: list, dim: int, reverse: bool) -> list:
    """Undoes `to_front` on results stacked along the first dimension."""
    out = [x.flip([0]) for x in leaves] if reverse else list(leaves)
    return [x.movedim(0, dim) if dim != 0 and dim < x.ndim else x for x in out]


def flat_binary(fn: Callable, spec, n: int) -> Callable:
    """`fn(lhs_tree, rhs_tree)` as a function of 2n flat tensors returning flat tensors."""

    def call(*args: Tensor) -> list:
        lhs = pytree.tree_unflatten(list(args[:n]), spec)
        rhs = pytree.tree_unflatten(list(args[n:]), spec)
        return pytree.tree_leaves(fn(lhs, rhs))

    return call
