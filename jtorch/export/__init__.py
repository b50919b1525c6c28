"""`torch.export`: not available in jtorch, with the way to get a jax function instead.

PyTorch's export traces a module into a standalone graph program (`ExportedProgram`).
jtorch's programs are jax programs: `jtorch.interop.functional(module)` gives
`(params, apply)` with `apply` a pure jax function (jit-able, exportable with
`jax.export`), and `jtorch.interop.jax_function(module)` the same with the parameters
bound.
"""

from __future__ import annotations

__all__ = [
    "export",
    "ExportedProgram",
    "Dim",
    "dims",
    "save",
    "load",
    "unflatten",
    "ExportBackwardSignature",
    "ExportGraphSignature",
    "ModuleCallSignature",
]

_NOT_AVAILABLE = (
    "torch.export.{what} is not available in jtorch: jtorch does not export "
    "graph programs. To get a jax function of a model (which jax.jit compiles "
    "and jax.export can save), use jtorch.interop.functional(module) -> "
    "(params, apply) or jtorch.interop.jax_function(module)."
)


def export(
    mod,
    args,
    kwargs=None,
    *,
    dynamic_shapes=None,
    strict=False,
    preserve_module_call_signature=(),
    prefer_deferred_runtime_asserts_over_guards=False,
):
    """Raises: see the module docstring (use `jtorch.interop`)."""
    raise RuntimeError(_NOT_AVAILABLE.format(what="export"))


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2) -> None:
    raise RuntimeError(_NOT_AVAILABLE.format(what="save"))


def load(f, *, extra_files=None, expected_opset_version=None):
    raise RuntimeError(_NOT_AVAILABLE.format(what="load"))


def unflatten(module, flat_args_adapter=None):
    raise RuntimeError(_NOT_AVAILABLE.format(what="unflatten"))


class ExportedProgram:
    """The type `torch.export.ExportedProgram`; jtorch never makes one."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(_NOT_AVAILABLE.format(what="ExportedProgram"))


class ExportGraphSignature(ExportedProgram):
    """The type `torch.export.ExportGraphSignature`; jtorch never makes one."""


class ExportBackwardSignature(ExportedProgram):
    """The type `torch.export.ExportBackwardSignature`; jtorch never makes one."""


class ModuleCallSignature(ExportedProgram):
    """The type `torch.export.ModuleCallSignature`; jtorch never makes one."""


class Dim:
    """Matches `torch.export.Dim(name, min=, max=)`: a named dynamic dimension (kept for
    `dynamic_shapes` specs; jtorch's programs are specialised to shapes)."""

    AUTO, STATIC, DYNAMIC = "AUTO", "STATIC", "DYNAMIC"

    def __init__(self, name: str, *, min=None, max=None):  # noqa: A002 - PyTorch's names
        self.__name__ = name
        self.min, self.max = min, max

    def __repr__(self) -> str:
        return f"Dim({self.__name__!r}, min={self.min}, max={self.max})"


def dims(*names: str, min=None, max=None) -> tuple:  # noqa: A002
    return tuple(Dim(n, min=min, max=max) for n in names)
