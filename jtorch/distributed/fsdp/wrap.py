"""`torch.distributed.fsdp.wrap`: auto-wrap policies and the `wrap` helpers.

A policy is called as `policy(module=m, recurse=..., nonwrapped_numel=n)`: with
`recurse=True` it says whether to look inside `m`, with `recurse=False` whether to wrap `m`
itself. `_recursive_wrap` walks a module tree with one (also used by
`apply_activation_checkpointing`).
"""

from __future__ import annotations

import contextlib
import copy

from ...nn import ModuleDict, ModuleList, MultiheadAttention

__all__ = [
    "CustomPolicy",
    "ModuleWrapPolicy",
    "always_wrap_policy",
    "enable_wrap",
    "lambda_auto_wrap_policy",
    "size_based_auto_wrap_policy",
    "transformer_auto_wrap_policy",
    "wrap",
]


def always_wrap_policy(*args, **kwargs) -> bool:
    """Wraps every module."""
    return True


def _module_wrap_policy(module, recurse: bool, nonwrapped_numel: int, module_classes) -> bool:
    return True if recurse else isinstance(module, tuple(module_classes))


class _Policy:
    """The base of object policies: `_run_policy` maps each target module to its kwargs."""

    def _run_policy(self, root_module, ignored_modules: set, root_kwargs: dict) -> dict:
        raise NotImplementedError


class ModuleWrapPolicy(_Policy):
    """Wraps the modules of the given classes."""

    def __init__(self, module_classes):
        self._module_classes = set(module_classes)
        self._module_classes_str = str(self._module_classes)

    def _run_policy(self, root_module, ignored_modules: set, root_kwargs: dict) -> dict:
        classes = tuple(self._module_classes)
        return {
            m: copy.copy(root_kwargs)
            for m in root_module.modules()
            if m not in ignored_modules and isinstance(m, classes)
        }

    def __call__(self, module, recurse, *args, **kwargs) -> bool:
        return _module_wrap_policy(module, recurse, -1, self._module_classes)

    def __repr__(self) -> str:
        return super().__repr__() + f"({self._module_classes_str})"


class CustomPolicy(_Policy):
    """Wraps the modules `lambda_fn` accepts (True, or a dict of kwargs overrides)."""

    def __init__(self, lambda_fn):
        self._lambda_fn = lambda_fn

    def _run_policy(self, root_module, ignored_modules: set, root_kwargs: dict) -> dict:
        out = {}
        for m in root_module.modules():
            if m in ignored_modules:
                continue
            res = self._lambda_fn(m)
            if not isinstance(res, (dict, bool)):
                raise ValueError(
                    f"The lambda_fn passed to CustomPolicy should return "
                    f"False/True or a kwarg dict, but it returned {res}"
                )
            if res:
                kwargs = copy.copy(root_kwargs)
                if isinstance(res, dict):
                    kwargs.update(res)
                out[m] = kwargs
        return out


def lambda_auto_wrap_policy(module, recurse: bool, nonwrapped_numel: int, lambda_fn) -> bool:
    return True if recurse else lambda_fn(module)


def transformer_auto_wrap_policy(
    module, recurse: bool, nonwrapped_numel: int, transformer_layer_cls
) -> bool:
    return _module_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls)


def _or_policy(module, recurse: bool, nonwrapped_numel: int, policies) -> bool:
    return any(
        p(module=module, recurse=recurse, nonwrapped_numel=nonwrapped_numel) for p in policies
    )


def size_based_auto_wrap_policy(
    module,
    recurse: bool,
    nonwrapped_numel: int,
    min_num_params: int = int(1e8),
    force_leaf_modules=None,
    exclude_wrap_modules=None,
) -> bool:
    """Wraps a module once its not-yet-wrapped parameters reach `min_num_params`."""
    force = (
        size_based_auto_wrap_policy.FORCE_LEAF_MODULES
        if force_leaf_modules is None
        else force_leaf_modules
    )
    exclude = (
        size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES
        if exclude_wrap_modules is None
        else exclude_wrap_modules
    )
    is_large = nonwrapped_numel >= min_num_params
    if recurse:
        return is_large and not isinstance(module, tuple(force))
    return is_large and not isinstance(module, tuple(exclude))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {ModuleList, ModuleDict}
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {MultiheadAttention}


class _ConfigAutoWrap:
    """The `enable_wrap` context: the wrapper class and its kwargs for `wrap()`."""

    in_autowrap_context = False
    wrapper_cls = None
    kwargs: dict = {}


@contextlib.contextmanager
def enable_wrap(*, wrapper_cls, **wrapper_kwargs):
    """Inside the block, `wrap(module)` wraps with `wrapper_cls(module, **wrapper_kwargs)`."""
    if _ConfigAutoWrap.in_autowrap_context:
        raise NotImplementedError(
            "You are already within an autowrap context and we currently "
            "do not supported nested autowrap."
        )
    _ConfigAutoWrap.in_autowrap_context = True
    _ConfigAutoWrap.wrapper_cls = wrapper_cls
    _ConfigAutoWrap.kwargs = wrapper_kwargs
    try:
        yield
    finally:
        _ConfigAutoWrap.in_autowrap_context = False
        _ConfigAutoWrap.wrapper_cls = None
        _ConfigAutoWrap.kwargs = {}


def wrap(module, **wrap_overrides):
    """Wraps `module` inside `enable_wrap`; outside it returns the module as it is."""
    if _ConfigAutoWrap.in_autowrap_context:
        return _wrap(
            module, _ConfigAutoWrap.wrapper_cls, **{**_ConfigAutoWrap.kwargs, **wrap_overrides}
        )
    return module


def _wrap(module, wrapper_cls, **kwargs):
    if hasattr(module, "_wrap_overrides"):
        return wrapper_cls(module, **{**kwargs, **module._wrap_overrides})
    return wrapper_cls(module, **kwargs)


def _recursive_wrap(
    module,
    auto_wrap_policy,
    wrapper_cls,
    ignored_modules: set,
    ignored_params: set,
    only_wrap_children: bool = False,
    **kwargs,
):
    """Wraps `module`'s tree bottom-up where the policy says; returns (module, wrapped numel)."""
    for _, child in module.named_modules():
        if child in ignored_modules:
            continue
        if isinstance(wrapper_cls, type) and isinstance(child, wrapper_cls):
            raise AssertionError(f"Child module {child} is already wrapped by {wrapper_cls}")
    nonwrapped = sum(
        p.numel() for p in module.parameters() if not any(p is q for q in ignored_params)
    )
    if not auto_wrap_policy(module=module, recurse=True, nonwrapped_numel=nonwrapped):
        return module, 0
    wrapped_total = 0
    for name, child in module.named_children():
        if child in ignored_modules:
            continue
        new_child, n = _recursive_wrap(
            child, auto_wrap_policy, wrapper_cls, ignored_modules, ignored_params, **kwargs
        )
        setattr(module, name, new_child)
        wrapped_total += n
    remainder = nonwrapped - wrapped_total
    if not only_wrap_children and auto_wrap_policy(
        module=module, recurse=False, nonwrapped_numel=remainder
    ):
        return _wrap(module, wrapper_cls, **kwargs), nonwrapped
    return module, wrapped_total
