"""Tensor's autograd methods: `backward`, hooks, `retain_grad`, `requires_grad_`, `detach_`."""

from __future__ import annotations

from .. import _tracebacks
from .._tensor import Tensor, meta
from . import _engine
from ._edges import accumulator, edge_of
from ._node import _add_hook


@_tracebacks.boundary
def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Matches `torch.Tensor.backward`."""
    _engine.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def requires_grad_(self, requires_grad: bool = True):
    """Matches `torch.Tensor.requires_grad_`."""
    if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
        # PyTorch's message here differs from the `requires_grad` setter's.
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    self.requires_grad = requires_grad
    return self


def detach_(self):
    """Matches `torch.Tensor.detach_`: this tensor leaves the graph."""
    m = self._grad_state
    if self._base is not None and self.grad_fn is not None and not (m and m.detached):
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are "
            "using DistributedDataParallel (DDP) for training, and "
            "gradient_as_bucket_view is set as True, gradients are views of "
            "DDP buckets, and hence detach_() cannot be called on these "
            "gradients. To fix this error, please refer to the "
            "Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
            "solution."
        )
    self.grad_fn = None
    self._rg = False
    if m is not None:
        m.output_nr = 0
        m.token = None
    return self


def retain_grad(self) -> None:
    """Matches `torch.Tensor.retain_grad`: a non-leaf keeps its `.grad` after backward."""
    if not self._rg:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None:
        return
    node, nr = edge_of(self)
    meta(self).retains_grad = True
    node._register_retain(nr, self)


def retains_grad(self) -> bool:
    m = self._grad_state
    return self.grad_fn is not None and m is not None and m.retains_grad


def register_hook(self, hook):
    """Matches `torch.Tensor.register_hook`: `hook(grad)` may return a replacement grad."""
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        return accumulator(self)._register_tensor_hook(0, hook)
    node, nr = edge_of(self)
    return node._register_tensor_hook(nr, hook)


def register_post_accumulate_grad_hook(self, hook):
    """Matches `torch.Tensor.register_post_accumulate_grad_hook`: `hook(tensor)`."""
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    m = meta(self)
    if m.post_hooks is None:
        m.post_hooks = {}
    return _add_hook(m.post_hooks, hook)


def output_nr(self) -> int:
    m = self._grad_state
    return m.output_nr if m is not None else 0


def install() -> None:
    for fn in (
        backward,
        requires_grad_,
        detach_,
        retain_grad,
        register_hook,
        register_post_accumulate_grad_hook,
    ):
        setattr(Tensor, fn.__name__, fn)
    Tensor.retains_grad = property(retains_grad)
    Tensor.output_nr = property(output_nr)
