"""Module backward hooks: identity autograd Functions around a module's inputs and outputs.

The node of the identity on the outputs sees the gradients of the outputs
(`grad_output`); the node of the identity on the inputs sees the gradients of
the inputs (`grad_input`). Full backward hooks run there, as in PyTorch.
"""

from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import Function


class _Identity(Function):
    @staticmethod
    def forward(ctx, *tensors):
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _apply_identity(values):
    """Routes the tensors that require grad among `values` through one identity node."""
    idx = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
    if not idx:
        return values, None
    outs = _Identity.apply(*(values[i] for i in idx))
    new = list(values)
    for i, o in zip(idx, outs):
        new[i] = o
    return tuple(new), outs[0].grad_fn


class BackwardHook:
    """One forward call's backward hooks: `setup_input_hook` and `setup_output_hook`."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_node = None

    def setup_input_hook(self, args):
        self.n_inputs = len(args)
        new, node = _apply_identity(tuple(args))
        if node is not None and self.hooks:
            self.input_node = node
            node.register_hook(self._on_inputs)
        return new

    def _on_inputs(self, grad_inputs, grad_outputs):
        grads = grad_inputs
        for hook in self.hooks:
            res = hook(self.module, grads, self.grad_outputs)
            if res is not None:
                res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
                if len(res) != len(grads):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, "
                        f"got {len(res)}, but expected {len(grads)}"
                    )
                grads = res
        self.grad_outputs = None
        return grads

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        values = (result,) if single else result
        if not isinstance(values, tuple):
            return result
        new, node = _apply_identity(values)
        if node is None:
            return result
        node.register_prehook(self._on_outputs)
        return new[0] if single else new

    def _on_outputs(self, grad_outputs):
        for hook in self.pre_hooks:
            res = hook(self.module, grad_outputs)
            if res is not None:
                res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
                if len(res) != len(grad_outputs):
                    raise RuntimeError(
                        f"Backward pre hook returned an invalid number of "
                        f"grad_output, got {len(res)}, but expected "
                        f"{len(grad_outputs)}"
                    )
                grad_outputs = res
        self.grad_outputs = grad_outputs
        if self.input_node is None and self.hooks:
            # No input requires grad: PyTorch calls the hooks with grad_input all None.
            for hook in self.hooks:
                hook(self.module, (None,) * max(self.n_inputs, 1), grad_outputs)
        return grad_outputs
