"""`torch._higher_order_ops.scan`: a loop that carries state and stacks its outputs.

PyTorch compiles the loop; its result is that of calling `combine_fn(carry, x[i])` for
i = 0..n-1 in order, which is what jtorch does, with ordinary tensor ops (autograd and
`jtorch.compile` see the unrolled loop).
"""

from __future__ import annotations

from typing import Callable

from .. import stack
from .._tensor import Tensor
from ..utils import _pytree as pytree
from ._flat import canonical_dim, from_front, to_front

__all__ = ["scan"]


def _check(combine_fn, init_leaves: list, xs_leaves: list, dim, reverse) -> None:
    """PyTorch's argument checks, with its messages."""
    if not callable(combine_fn):
        raise RuntimeError(f"Combine_fn must be a callable, but got {combine_fn}")
    if not isinstance(dim, int):
        raise RuntimeError("Dim must be an int, but got " + str(type(dim)))
    if not isinstance(reverse, bool):
        raise RuntimeError("Reverse must be a bool, but got " + str(type(reverse)))
    if not init_leaves:
        raise RuntimeError("scan() operator requires init leaves.")
    for x in init_leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"All init leaves must be a Tensor but got {x}")
    for x in xs_leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"All xs leaves must be a Tensor but got {x}")
    if any(x.ndim <= dim or x.shape[dim] == 0 for x in xs_leaves):
        raise RuntimeError(
            "All xs leaves must at least have 'dim' number of dimensions and scan dimension > 0"
        )


def _check_carry(init_leaves: list, carry_leaves: list, init_spec, carry_spec) -> None:
    """The carry must keep the structure, shapes and dtypes of `init`, as PyTorch requires."""
    from .._dynamo.exc import UncapturedHigherOrderOpError

    if carry_spec != init_spec:
        raise UncapturedHigherOrderOpError(
            f"The tree structure of the inits and the carries are not identical! Init tree: "
            f"{init_spec}, Carry tree: {carry_spec}"
        )
    for i, (a, b) in enumerate(zip(init_leaves, carry_leaves)):
        if not isinstance(b, Tensor):
            raise UncapturedHigherOrderOpError(
                f"Expected carry[{i}] to be a Tensor, but got {type(b).__name__}"
            )
        differ = [
            f"'{what}: {x} vs {y}'"
            for what, x, y in (("shape", a.shape, b.shape), ("dtype", a.dtype, b.dtype))
            if x != y
        ]
        if differ:
            raise UncapturedHigherOrderOpError(
                "Expected init and carry to have same metadata but found:\n"
                f"pair[{i}] differ in {', '.join(differ)}"
            )


def scan(combine_fn: Callable, init, xs, *, dim: int = 0, reverse: bool = False):
    """Matches `torch._higher_order_ops.scan`.

    Args:
      combine_fn: `(carry, x_i) -> (next_carry, y_i)` on pytrees; `x_i` is a slice of `xs`
        along `dim`.
      init: the first carry, a tensor or pytree of tensors.
      xs: a tensor or pytree of tensors of the same length along `dim`.
      dim: the dimension to scan over.
      reverse: run from the last slice to the first.

    Returns:
      `(final_carry, ys)`: `ys` stacks the `y_i` along `dim`.
    """
    init_leaves, init_spec = pytree.tree_flatten(init)
    xs_leaves, xs_spec = pytree.tree_flatten(xs)
    if not xs_leaves:
        return init, []
    dim = canonical_dim(xs_leaves[0].ndim, dim)  # read before the checks, as in PyTorch
    _check(combine_fn, init_leaves, xs_leaves, dim, reverse)
    fronts = to_front(xs_leaves, dim, reverse)
    carry, ys, y_spec = init, [], None
    for i in range(fronts[0].shape[0]):
        result = combine_fn(carry, pytree.tree_unflatten([x[i] for x in fronts], xs_spec))
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            from .._dynamo.exc import UncapturedHigherOrderOpError

            raise UncapturedHigherOrderOpError(
                "torch.scan: improper combine_fn number of returns: expected combine_fn to "
                f"return a tuple (next_carry, y) but got {type(result).__name__}"
            )
        carry, y = result
        carry_leaves, carry_spec = pytree.tree_flatten(carry)
        _check_carry(init_leaves, carry_leaves, init_spec, carry_spec)
        y_leaves, y_spec = pytree.tree_flatten(y)
        ys.append(y_leaves)
    stacked = [stack(list(column)) for column in zip(*ys)]
    return carry, pytree.tree_unflatten(from_front(stacked, dim, reverse), y_spec)
