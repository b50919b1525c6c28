"""Module hooks: the global hook tables, calling a module with its forward and backward hooks
(`_call_with_hooks`), and the identity autograd Functions around a module's inputs and
outputs that its backward hooks run on.

The node of the identity on the outputs sees the gradients of the outputs
(`grad_output`); the node of the identity on the inputs sees the gradients of
the inputs (`grad_input`). Full backward hooks run there, as in PyTorch.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd._node import RemovableHandle, _add_hook
from ...autograd.function import Function

# Global module hooks (`torch.nn.modules.module.register_module_*_hook`), run around every
# module's forward by `_call_with_hooks`.
_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()
_global_forward_hooks_always_called: set = set()
_global_backward_hooks: dict = OrderedDict()
_global_backward_pre_hooks: dict = OrderedDict()


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, always_call: bool = False) -> RemovableHandle:
    h = _add_hook(_global_forward_hooks, hook)
    if always_call:
        _global_forward_hooks_always_called.add(h.id)
    return h


def register_module_full_backward_hook(hook) -> RemovableHandle:
    return _add_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    return _add_hook(_global_backward_pre_hooks, hook)


class _ExtraHandle(RemovableHandle):
    """A handle that also removes its id from the side tables (with_kwargs, always_call)."""

    def __init__(self, hooks, *extra):
        super().__init__(hooks)
        self._extra = extra

    def remove(self) -> None:
        super().remove()
        for d in self._extra:
            d.pop(self.id, None)


def _call_with_hooks(module, forward_call, args, kwargs):
    called_always = set()
    result = None
    try:
        for hook_id, hook in (
            *_global_forward_pre_hooks.items(),
            *module._forward_pre_hooks.items(),
        ):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                res = hook(module, args, kwargs)
                if res is not None:
                    if isinstance(res, tuple) and len(res) == 2:
                        args, kwargs = res
                    else:
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {res}."
                        )
            else:
                res = hook(module, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_hook = None
        full = [*_global_backward_hooks.values(), *module._backward_hooks.values()]
        pre = [*_global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()]
        if (full or pre) and grad_mode.is_grad_enabled():
            bw_hook = BackwardHook(module, full, pre)
            args = bw_hook.setup_input_hook(args)
        result = forward_call(*args, **kwargs)
        for hook_id, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
            if (
                hook_id in module._forward_hooks_always_called
                or hook_id in _global_forward_hooks_always_called
            ):
                called_always.add(hook_id)
            if hook_id in module._forward_hooks_with_kwargs:
                res = hook(module, args, kwargs, result)
            else:
                res = hook(module, args, result)
            if res is not None:
                result = res
        if bw_hook is not None:
            result = bw_hook.setup_output_hook(result)
        return result
    except Exception:
        for hook_id, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
            always = (
                hook_id in module._forward_hooks_always_called
                or hook_id in _global_forward_hooks_always_called
            )
            if always and hook_id not in called_always:
                try:
                    if hook_id in module._forward_hooks_with_kwargs:
                        hook(module, args, kwargs, result)
                    else:
                        hook(module, args, result)
                except Exception as e:  # noqa: BLE001 - PyTorch warns and re-raises the first
                    warnings.warn(
                        "global module forward hook with ``always_call=True`` raised "
                        f"an exception that was silenced as another error was raised "
                        f"in forward: {str(e)}",
                        stacklevel=2,
                    )
        raise


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
