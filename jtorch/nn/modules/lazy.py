"""`LazyModuleMixin`: parameters whose shapes are inferred from the first input."""

from __future__ import annotations

from ..parameter import is_lazy


class LazyModuleMixin:
    """Matches `torch.nn.modules.lazy.LazyModuleMixin`.

    Until the first call the module holds `UninitializedParameter`s; a forward
    pre-hook calls `initialize_parameters(*input)`, then the module becomes
    `cls_to_become` (e.g. `LazyLinear` becomes `Linear`).
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        params = self._parameters.values()
        buffers = self._buffers.values()
        return any(is_lazy(p) for p in list(params) + list(buffers))

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        # Uninitialized placeholders go into the state dict as they are (no detach), as in
        # PyTorch, since they have no data to detach.
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (
                    param if is_lazy(param) or keep_vars else param.detach()
                )
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )


def _infer_parameters(module, args, kwargs=None):
    module.initialize_parameters(*args, **(kwargs or {}))
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    delattr(module, "_initialize_hook")
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become
