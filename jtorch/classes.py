"""`torch.classes`: TorchScript custom classes registered from C++ (`torch::class_`).

jtorch loads no C++ extensions, so no class is ever registered: naming one raises PyTorch's
error for an unregistered class.
"""

from __future__ import annotations

__all__ = ["load_library"]


class _Unregistered(RuntimeError, AttributeError):
    """PyTorch raises RuntimeError for an unregistered class; being an AttributeError too
    keeps `hasattr` and pickle's search of `sys.modules` (which only skip AttributeError)
    working while jtorch is imported."""


class _ClassNamespace:
    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise _Unregistered(
            f"Tried to instantiate class '{self.name}.{attr}', but it does not "
            "exist! Ensure that it is registered via torch::class_"
        )


def __getattr__(name: str) -> _ClassNamespace:
    if name.startswith("__"):
        raise AttributeError(name)
    return _ClassNamespace(name)


def load_library(path: str) -> None:
    """Raises: jtorch cannot load C++ extension libraries (see `torch.ops.load_library`)."""
    from .library import ops

    ops.load_library(path)
