"""The legacy hook-based `torch.nn.utils.weight_norm` (`weight_g`, `weight_v`).

Deprecated in PyTorch in favour of `parametrizations.weight_norm`; kept for old code and
checkpoints. A forward pre-hook recomputes `weight = v * g / ||v||` before every call.
"""

from __future__ import annotations

import warnings
from typing import Any

from ... import _weight_norm, norm_except_dim
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """Matches `torch.nn.utils.weight_norm.WeightNorm` (the forward pre-hook)."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name: str, dim: int) -> WeightNorm:
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized "
                "parameters. Make sure to run the dummy forward before applying "
                "weight normalization"
            )
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Matches `torch.nn.utils.weight_norm` (deprecated)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Matches `torch.nn.utils.remove_weight_norm`."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
