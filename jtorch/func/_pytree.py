"""Moving pytrees of jtorch Tensors across the boundary of a jax transform.

`torch.func` transforms are jax transforms: the user function is called with
fresh Tensors wrapping the transform's tracers, and what it returns is turned
back into flat lists of arrays. Non-Tensor leaves of an output (Python numbers,
strings) cannot cross a jax transform; an `_Out` box keeps them, and the
output's tree structure, while the function is traced.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor, wrap
from ..autograd import grad_mode
from ..autograd._engine import call_recorded

_TENSOR = object()  # placeholder for a Tensor leaf in `_Out.static`


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


class _Dict(dict):
    """A plain dict as a pytree node in insertion order.

    jax flattens a dict in sorted-key order and unflattens it that way; PyTorch's pytrees
    keep insertion order, so `grad(f)(params)` returns its dict in `params`' order.
    """


jax.tree_util.register_pytree_node(
    _Dict,
    lambda d: (list(d.values()), tuple(d.keys())),
    lambda keys, values: dict(zip(keys, values)),
)


def _ordered(tree):
    """`tree` with every plain dict (in lists, tuples, namedtuples, dicts) made a `_Dict`."""
    if type(tree) is dict:
        return _Dict((k, _ordered(v)) for k, v in tree.items())
    if type(tree) is list:
        return [_ordered(v) for v in tree]
    if isinstance(tree, tuple):
        values = [_ordered(v) for v in tree]
        return type(tree)(*values) if hasattr(tree, "_fields") else type(tree)(values)
    return tree


def flatten(tree):
    """Leaves (Tensors are leaves) and the tree structure; dicts in insertion order."""
    return jax.tree_util.tree_flatten(_ordered(tree), is_leaf=is_tensor)


def wrap_tree(treedef, arrays):
    return treedef.unflatten([wrap(a) for a in arrays])


class _Out:
    """The structure of a traced function's output, captured while tracing."""

    __slots__ = ("treedef", "static")

    def __init__(self):
        self.treedef = None
        self.static = None

    def split(self, tree) -> list:
        """The arrays of `tree`'s Tensor leaves; remembers everything else."""
        leaves, self.treedef = flatten(tree)
        self.static = [_TENSOR if isinstance(x, Tensor) else x for x in leaves]
        return [x._array for x in leaves if isinstance(x, Tensor)]

    def join(self, values) -> object:
        """`tree` again, with `values` (Tensors or anything) in place of its Tensor leaves."""
        values = iter(values)
        return self.treedef.unflatten([next(values) if s is _TENSOR else s for s in self.static])

    @property
    def n_tensors(self) -> int:
        return sum(1 for s in self.static if s is _TENSOR)

    def non_tensor(self):
        """The first non-Tensor leaf, or `_TENSOR` when every leaf is a Tensor."""
        return next((s for s in self.static if s is not _TENSOR), _TENSOR)


def run(name: str, fn, tensors: list[Tensor]) -> tuple[Tensor, ...]:
    """`fn(*arrays) -> tuple of arrays` on the arrays of `tensors`, as Tensors.

    When an input requires grad the call is recorded on the eager tape as one node (its
    backward is `jax.vjp` of `fn`), so `torch.func` results stay differentiable by
    `backward()` as in PyTorch.
    """
    if grad_mode.is_grad_enabled() and any(t._rg for t in tensors):
        out = call_recorded(name, fn, tuple(tensors))
        return out if isinstance(out, tuple) else (out,)
    return tuple(wrap(o) for o in fn(*(t._array for t in tensors)))


def conj_if_complex(a):
    return jnp.conj(a) if jnp.iscomplexobj(a) else a
