"""`torch.distributed.algorithms._checkpoint.checkpoint_wrapper`: activation checkpointing
as a module wrapper.

`CheckpointWrapper(m)` runs `m` under `torch.utils.checkpoint.checkpoint`; its state dict and
named parameters hide the `_checkpoint_wrapped_module.` prefix, so a wrapped model loads the
unwrapped model's checkpoints. `apply_activation_checkpointing` wraps the submodules a
policy selects.
"""

from __future__ import annotations

from enum import Enum, auto
from functools import partial

from ....nn.modules.module import Module
from ....utils.checkpoint import checkpoint as torch_utils_checkpoint

__all__ = [
    "ActivationWrapper",
    "CheckpointImpl",
    "CheckpointWrapper",
    "OffloadWrapper",
    "apply_activation_checkpointing",
    "checkpoint_wrapper",
    "offload_wrapper",
]

_CHECKPOINT_WRAPPED_MODULE = "_checkpoint_wrapped_module"
_CHECKPOINT_PREFIX = _CHECKPOINT_WRAPPED_MODULE + "."


class CheckpointImpl(Enum):
    REENTRANT = auto()
    NO_REENTRANT = auto()


def _replace_by_prefix(state_dict: dict, old: str, new: str) -> None:
    for key in list(state_dict):
        if key.startswith(old):
            state_dict[new + key[len(old) :]] = state_dict.pop(key)


class ActivationWrapper(Module):
    """The base of the wrappers: forwards attributes and hides the wrapper's prefix."""

    def __init__(self, mod: Module):
        super().__init__()
        self._checkpoint_wrapped_module = mod
        self._register_state_dict_hook(self._post_state_dict_hook)
        self._register_load_state_dict_pre_hook(self._pre_load_state_dict_hook, with_module=True)

    def forward(self, *args, **kwargs):
        raise ValueError("Subclasses should implement forward().")

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._checkpoint_wrapped_module, name)

    def __getitem__(self, key):
        return self._checkpoint_wrapped_module.__getitem__(key)

    def named_parameters(self, *args, **kwargs):
        for name, param in super().named_parameters(*args, **kwargs):
            yield name.replace(_CHECKPOINT_PREFIX, ""), param

    @staticmethod
    def _post_state_dict_hook(module, state_dict, prefix, *args):
        _replace_by_prefix(state_dict, f"{prefix}{_CHECKPOINT_PREFIX}", prefix)
        return state_dict

    @staticmethod
    def _pre_load_state_dict_hook(module, state_dict, prefix, *args) -> None:
        _replace_by_prefix(state_dict, prefix, prefix + _CHECKPOINT_PREFIX)


class OffloadWrapper(ActivationWrapper):
    """Keeps the wrapped module's saved activations on the CPU (where jtorch keeps them)."""

    def forward(self, *args, **kwargs):
        return self._checkpoint_wrapped_module(*args, **kwargs)


class CheckpointWrapper(ActivationWrapper):
    """Matches PyTorch's `CheckpointWrapper`: the module's forward is recomputed in backward."""

    def __init__(
        self,
        mod: Module,
        checkpoint_impl: CheckpointImpl = CheckpointImpl.NO_REENTRANT,
        checkpoint_fn=None,
        **checkpoint_fn_kwargs,
    ):
        super().__init__(mod)
        self.checkpoint_impl = checkpoint_impl
        if checkpoint_fn is None:
            self.checkpoint_fn = partial(
                torch_utils_checkpoint,
                use_reentrant=(checkpoint_impl == CheckpointImpl.REENTRANT),
                **checkpoint_fn_kwargs,
            )
        else:
            self.checkpoint_fn = partial(checkpoint_fn, **checkpoint_fn_kwargs)

    def forward(self, *args, **kwargs):
        if self.checkpoint_impl == CheckpointImpl.REENTRANT and kwargs:
            # The reentrant checkpoint takes positional inputs only: pack kwargs after them.
            keys = tuple(kwargs)
            flat = args + tuple(kwargs.values())

            def call(*inputs):
                n = len(inputs) - len(keys)
                return self._checkpoint_wrapped_module(*inputs[:n], **dict(zip(keys, inputs[n:])))

            return self.checkpoint_fn(call, *flat)
        return self.checkpoint_fn(self._checkpoint_wrapped_module, *args, **kwargs)


def offload_wrapper(module: Module) -> Module:
    return OffloadWrapper(module)


def checkpoint_wrapper(
    module: Module,
    checkpoint_impl: CheckpointImpl = CheckpointImpl.NO_REENTRANT,
    checkpoint_fn=None,
    **checkpoint_fn_kwargs,
) -> Module:
    """Matches `checkpoint_wrapper`: `CheckpointWrapper(module, ...)`."""
    return CheckpointWrapper(module, checkpoint_impl, checkpoint_fn, **checkpoint_fn_kwargs)


def apply_activation_checkpointing(
    model: Module,
    checkpoint_wrapper_fn=checkpoint_wrapper,
    check_fn=lambda _: True,
    auto_wrap_policy=None,
) -> None:
    """Wraps, in place, the submodules of `model` that `check_fn` (or the policy) selects."""
    from ...fsdp.wrap import _Policy, _recursive_wrap, lambda_auto_wrap_policy

    policy = (
        auto_wrap_policy
        if auto_wrap_policy is not None
        else partial(lambda_auto_wrap_policy, lambda_fn=check_fn)
    )
    if not callable(policy):
        if not isinstance(policy, _Policy):
            raise ValueError(f"Expected {policy} to be callable or be a pre-defined wrap policy")
        targets = policy._run_policy(model, ignored_modules=set(), root_kwargs={})
        for name, mod in reversed(list(model.named_modules())):  # children before parents
            if mod in targets and mod is not model:
                parent_name, _, attr = name.rpartition(".")
                parent = model.get_submodule(parent_name) if parent_name else model
                setattr(parent, attr, checkpoint_wrapper_fn(mod, **targets[mod]))
        return
    _recursive_wrap(
        model,
        policy,
        checkpoint_wrapper_fn,
        ignored_modules=set(),
        ignored_params=set(),
        only_wrap_children=True,
    )
