"""The autograd graph: nodes, edges, hooks (`torch.autograd.graph`).

A node is one recorded call. Its backward is the VJP of the jax function that
computed the forward, taken by `jax.vjp` inside a `jax.jit` cached per
(function, which inputs are differentiated) (DESIGN 5, 6). The forward is not
re-run for its own sake: XLA drops whatever the VJP does not need, so a
matmul's backward is two matmuls and an `exp`'s backward recomputes one `exp`.

An edge is `(node, output_nr)`: which output of which node a tensor is.
Leaves that require grad end in an `AccumulateGrad` node owned by the leaf.

The pieces: `_node.py` (`Node`, `RemovableHandle`), `_fn_node.py` (the VJP node and the
saved-tensor packing), `_edges.py` (`AccumulateGrad`, a tensor's edge), `_traversal.py`
(the backward's order). This module is `torch.autograd.graph`: the public names, with this
module as their `__module__` (what reprs and pickles name), and the saved-tensor hooks'
context managers.
"""

from ._edges import AccumulateGrad
from ._fn_node import _hooks_disabled, _saved_hooks
from ._node import Node, RemovableHandle

__all__ = ["Node", "RemovableHandle", "AccumulateGrad"]

for _cls in (Node, RemovableHandle, AccumulateGrad):
    _cls.__module__ = __name__
del _cls


class saved_tensors_hooks:
    """Matches `torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)`.

    Inside the context, every tensor an operation saves for its backward goes through
    `pack_hook(tensor)`; the backward reads `unpack_hook(packed)` instead.
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks_disabled:
            raise RuntimeError(_hooks_disabled[-1])
        _saved_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Matches `torch.autograd.graph.save_on_cpu`: saved tensors wait on the CPU (in pinned
    memory when asked, which jax has no notion of) and return to their device in backward."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(t):
            return t.device, t.to("cpu", copy=True)

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Matches `torch.autograd.graph.disable_saved_tensors_hooks(error_message)`."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        if _saved_hooks:
            raise RuntimeError(self.error_message)
        _hooks_disabled.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _hooks_disabled.pop()
