"""`torch._dynamo._trace_wrapped_higher_order_op`: `TransformGetItemToIndex`, the mode under
which `tensor[i]` with scalar-tensor or int indices indexes with tensors (a gather that works
under vmap, where turning a traced index into a Python int cannot)."""

from __future__ import annotations

from .._tensor import Tensor
from ..overrides import TorchFunctionMode
from ..utils import _pytree

__all__ = ["TransformGetItemToIndex", "mod_index"]


def mod_index(x: Tensor, indices) -> Tensor:
    """`x[indices]` with every index a tensor (advanced indexing: a gather)."""
    return x[tuple(indices)]


class TransformGetItemToIndex(TorchFunctionMode):
    """Matches `TransformGetItemToIndex`: inside it, `Tensor.__getitem__` whose indices are
    all tensors or ints indexes with int64 tensors."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is Tensor.__getitem__:
            x = args[0]
            if not isinstance(x, Tensor):
                raise AssertionError(f"expected torch.Tensor, got {type(x)}")
            leaves = _pytree.tree_leaves(args[1])
            if all(isinstance(i, (Tensor, int)) for i in leaves):
                from .._ops.creation import tensor

                converted = [
                    tensor(i, dtype=_int64(), device=x.device) if isinstance(i, int) else i
                    for i in leaves
                ]
                return mod_index(x, converted)
        return func(*args, **(kwargs or {}))


def _int64():
    from .. import _dtype

    return _dtype.int64
