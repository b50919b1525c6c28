"""`torch.utils.hooks`: `RemovableHandle` (the handle every `register_*_hook` returns),
`unserializable_hook`, `warn_if_has_hooks` and `BackwardHook`."""

from __future__ import annotations

import warnings

from ..autograd.graph import RemovableHandle
from ..nn.modules._hooks import BackwardHook

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def unserializable_hook(f):
    """Matches `torch.utils.hooks.unserializable_hook`: marks a hook that serialization
    should not warn about."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor) -> None:
    """Matches `torch.utils.hooks.warn_if_has_hooks`: warns for each backward hook of
    `tensor` that is not marked unserializable (they are not saved)."""
    hooks = getattr(tensor, "_backward_hooks", None)
    if not hooks:
        return
    for k in hooks:
        hook = hooks[k]
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(
                f"backward hook {repr(hook)} on tensor will not be serialized.  If "
                "this is expected, you can decorate the function with "
                "@torch.utils.hooks.unserializable_hook to suppress this warning",
                stacklevel=2,
            )
