"""The legacy hook-based `torch.nn.utils.spectral_norm` (`weight_orig`, `weight_u`,
`weight_v`).

A forward pre-hook runs power iteration on the `_u`/`_v` buffers (in training mode) and
sets `weight = weight_orig / sigma`, as PyTorch's does.
"""

from __future__ import annotations

from typing import Any

from ... import dot, linalg, mv
from ...autograd import grad_mode
from .. import functional as F
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = [
    "SpectralNorm",
    "SpectralNormLoadStateDictPreHook",
    "SpectralNormStateDictHook",
    "spectral_norm",
    "remove_spectral_norm",
]


class SpectralNorm:
    """Matches `torch.nn.utils.spectral_norm.SpectralNorm` (the forward pre-hook)."""

    _version: int = 1

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # In place (`out=`), so the buffers stay the same objects; then cloned so that a
            # graph built from this forward survives the next power iteration.
            with grad_mode.no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone()
                v = v.clone()
        sigma = dot(u, mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with grad_mode.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # v such that u = normalize(W v) and u^T W v = target_sigma.
        v = linalg.multi_dot(
            [weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(), u.unsqueeze(1)]
        ).squeeze(1)
        return v.mul_(target_sigma / dot(u, mv(weight_mat, v)))

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized "
                "parameters. Make sure to run the dummy forward before applying "
                "spectral normalization"
            )
        with grad_mode.no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # A plain attribute until the first forward replaces it (PyTorch does the same).
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Upgrades version-0 checkpoints (which stored `weight` and no `weight_v`)."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def __call__(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if (
            version is None
            and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))
            and weight_key not in state_dict
        ):
            return
        has_missing_keys = False
        for suffix in ("_orig", "", "_u"):
            key = weight_key + suffix
            if key not in state_dict:
                has_missing_keys = True
                if strict:
                    missing_keys.append(key)
        if has_missing_keys:
            return
        with grad_mode.no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records the spectral-norm version in the state_dict metadata."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        meta = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in meta:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        meta[key] = self.fn._version


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Matches `torch.nn.utils.spectral_norm` (the legacy hook version)."""
    if dim is None:
        from .parametrizations import _conv_transpose_classes

        dim = 1 if isinstance(module, _conv_transpose_classes()) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Matches `torch.nn.utils.remove_spectral_norm`."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in module._load_state_dict_pre_hooks.items():
        if isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
