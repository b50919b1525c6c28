"""PyTorch subsystems jtorch does not have, as importable modules that say so.

A script that imports such a module (`import torch.ao.quantization`) still starts; reaching
a name (`from torch.utils.cpp_extension import BuildExtension`, `m.QuantStub`) raises an
ImportError whose message says what jtorch lacks and what to use instead, so
`try/except ImportError` fallbacks take their other branch. (An ImportError rather than an
AttributeError: `from m import name` would replace an AttributeError's message with its own.)
"""

from __future__ import annotations

__all__ = ["Unsupported", "unsupported_module_getattr"]


class Unsupported(ImportError):
    """A name of a PyTorch subsystem jtorch does not provide."""


def unsupported_module_getattr(module: str, reason: str):
    """A module-level `__getattr__` raising `Unsupported` for every public name."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise Unsupported(f"{module}.{name} is not available in jtorch: {reason}")

    return __getattr__
