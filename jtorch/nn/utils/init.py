"""`torch.nn.utils.skip_init`: build a module without initializing its parameters."""

from __future__ import annotations

import inspect

from ... import random
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """Matches `torch.nn.utils.skip_init`: the module with uninitialized parameters/buffers.

    PyTorch builds the module on the `meta` device and then allocates empty storage.
    jtorch has no meta tensors: it runs the constructor on the target device with the
    random state forked (so, as in PyTorch, the global generator does not advance), then
    replaces every parameter and buffer with an empty tensor (`Module.to_empty`).
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    with random.fork_rng(devices=[]):
        module = module_cls(*args, device=device, **kwargs)
    return module.to_empty(device=device)
