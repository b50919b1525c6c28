"""Where a tensor meets the graph: a leaf's `AccumulateGrad` and the accumulation of its
`.grad` (sparse gradients included), a tensor's edge, and the history a view regains when
its root was written in place."""

from __future__ import annotations

import weakref

import jax

from .. import _device, _programs, _views
from .._tensor import Tensor, meta, wrap
from ._fn_node import FnNode
from ._node import Node


class AccumulateGrad(Node):
    """Matches PyTorch's AccumulateGrad: adds the incoming gradient into a leaf's `.grad`."""

    __slots__ = ("_leaf",)

    def __init__(self, leaf: Tensor):
        Node.__init__(self, "torch::autograd::AccumulateGrad", ())
        self._leaf = weakref.ref(leaf)

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def variable(self):
        return self._leaf()

    def release(self) -> None:
        pass  # a leaf's accumulator saves nothing and outlives every graph

    def apply(self, grads, create_graph):
        leaf = self._leaf()
        g = grads[0]
        if leaf is None or g is None:
            return ()
        accumulate(leaf, g, create_graph)
        m = leaf._grad_state
        if m is not None and m.post_hooks:
            for hook in list(m.post_hooks.values()):
                if hook(leaf) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return ()


# Set by jtorch.sparse once a sparse gradient exists (nn.Embedding(sparse=True)): the object
# whose `is_sparse(g)`, `add(a, b)`, `accumulate(t, g)` and `densify(grads)` handle gradients
# that are sparse tensors. While None, dense backward passes check nothing.
sparse_grads = None


def _moved_off(g, a) -> bool:
    """True when single-device gradient `g` sits on another device than its leaf's `a`."""
    if isinstance(g, jax.core.Tracer) or isinstance(a, jax.core.Tracer):
        return False
    gd, ad = g.devices(), a.devices()
    return len(gd) == 1 and len(ad) == 1 and gd != ad


def accumulate(t: Tensor, g, create_graph: bool) -> None:
    """Adds gradient `g` (array or Tensor) into `t.grad`, in place unless building a graph."""
    if isinstance(g, Tensor):
        if sparse_grads is not None and sparse_grads.is_sparse(g):
            sparse_grads.accumulate(t, g)
            return
        if not create_graph:
            g = g._array
    if not isinstance(g, Tensor):
        if g.dtype != t._array.dtype:
            g = g.astype(t._array.dtype)
        if _device.multi_device() and _moved_off(g, t._array):
            # A CPU scalar that took part in an accelerator op: its gradient comes back on
            # the accelerator; PyTorch's engine moves it to the leaf's device.
            g = jax.device_put(g, next(iter(t._array.devices())))
    old = t._grad
    if old is None:
        t._grad = g if isinstance(g, Tensor) else wrap(g)
    elif create_graph or isinstance(g, Tensor) or old.requires_grad:
        t._grad = old + g
    else:
        old._write(_add(old._array, g))


_add = _programs.ShapedJit(lambda a, b: a + b, _programs.ProgramCache("helpers", share=0.25))


def accumulator(t: Tensor) -> AccumulateGrad:
    m = meta(t)
    acc = m.accumulator
    if acc is None:
        acc = m.accumulator = AccumulateGrad(t)
    return acc


def edge_of(t: Tensor):
    """The edge a tensor that requires grad contributes: its grad_fn, or its accumulator."""
    fn = t.grad_fn
    m = t._grad_state
    if fn is None:
        return (accumulator(t), 0)
    if m is None:
        return (fn, 0)
    if m.token is not None:
        root = t._base
        if root is not None and root.grad_fn is not m.token:
            regenerate_view(t)
            return (t.grad_fn, 0)
    return (fn, m.output_nr)


def regenerate_view(view: Tensor) -> None:
    """Gives a view whose root was written in place a history derived from the root's."""
    root = view._base
    storage = root._storage.value
    if root._chain:  # a root restrided in place (t_(), set_()): see _views.rooted_*
        fn = _views.rooted_replay_fn(root._chain, view._chain, storage)
        node = FnNode(
            "AsStridedBackward0",
            fn,
            (storage, root._array, _views.params(root._chain), _views.params(view._chain)),
            (False, True, False, False),
            (edge_of(root),),
            None,
            1,
            epos=(0, 0, 1, 1),
        )
    else:
        node = FnNode(
            "AsStridedBackward0",
            _views.replay_fn(view._chain, storage),
            (storage, _views.params(view._chain)),
            (True, False),
            (edge_of(root),),
            None,
            1,
            epos=(0, 1),
        )
    view._rg = True
    view.grad_fn = node
    m = meta(view)
    m.output_nr = 0
    m.token = root.grad_fn
