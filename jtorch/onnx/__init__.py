"""`torch.onnx`: PyTorch's public names; jtorch has no ONNX exporter.

`export` raises OnnxExporterError with the way to get a jax function of a model instead
(`jtorch.interop.functional`, which `jax.export` can serialize). What a script touches
without exporting works: the enums (`TrainingMode`, `OperatorExportTypes`), the errors,
`is_in_onnx_export()` (always False), `select_model_mode_for_export`, subclassing
`ExportableModule`, and registering custom symbolics (recorded; only export would use them).
"""

from __future__ import annotations

import abc
import contextlib
import enum
import warnings

from .. import nn
from ..version import __version__ as _version
from . import errors, ops
from .errors import OnnxExporterError

__all__ = [
    "errors",
    "ops",
    "export",
    "is_in_onnx_export",
    "OnnxExporterError",
    "ONNXProgram",
    "ExportableModule",
    "InputObserver",
]

producer_name = "pytorch"
producer_version = _version.split("+")[0]

_NOT_AVAILABLE = (
    "torch.onnx.{what} is not available in jtorch: it has no ONNX exporter. "
    "To get a jax function of a model, use jtorch.interop.functional(module) "
    "-> (params, apply) (jax.export can serialize it)."
)


class TrainingMode(enum.Enum):
    """Matches `torch.onnx.TrainingMode`."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.Enum):
    """Matches `torch.onnx.OperatorExportTypes`."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def is_in_onnx_export() -> bool:
    """Matches `torch.onnx.is_in_onnx_export`: False (nothing is ever being exported)."""
    return False


def export(model, args=(), f=None, **kwargs):
    """Raises: see the module docstring."""
    raise OnnxExporterError(_NOT_AVAILABLE.format(what="export"))


class ONNXProgram:
    """Matches the name `torch.onnx.ONNXProgram`; only `export` makes one, so never here."""

    def __init__(self, *args, **kwargs):
        raise OnnxExporterError(_NOT_AVAILABLE.format(what="ONNXProgram"))


class ExportableModule(nn.Module, abc.ABC):
    """Matches `torch.onnx.ExportableModule`: subclasses define `example_arguments` (and
    optionally `dynamic_shapes`, `input_names`, `output_names`); `to_onnx` raises here."""

    @abc.abstractmethod
    def example_arguments(self):
        raise NotImplementedError

    def dynamic_shapes(self):
        return None

    def input_names(self):
        return None

    def output_names(self):
        return None

    def to_onnx(self, **kwargs):
        raise OnnxExporterError(_NOT_AVAILABLE.format(what="ExportableModule.to_onnx"))


class InputObserver:
    """Matches the name `torch.onnx.InputObserver` (it feeds an export; raises here)."""

    def __init__(self, *args, **kwargs):
        raise OnnxExporterError(_NOT_AVAILABLE.format(what="InputObserver"))


_CUSTOM_SYMBOLICS: dict = {}


def register_custom_op_symbolic(symbolic_name: str, symbolic_fn, opset_version: int) -> None:
    """Matches `torch.onnx.register_custom_op_symbolic`: recorded, as only an export (which
    jtorch does not have) would call it."""
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    _CUSTOM_SYMBOLICS[(symbolic_name, opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name: str, opset_version: int) -> None:
    """Matches `torch.onnx.unregister_custom_op_symbolic`."""
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    _CUSTOM_SYMBOLICS.pop((symbolic_name, opset_version), None)


@contextlib.contextmanager
def select_model_mode_for_export(model, mode: TrainingMode):
    """Matches `torch.onnx.select_model_mode_for_export` (deprecated in PyTorch 2.7): the
    model in `mode`'s training state inside the block."""
    warnings.warn(
        "Please set training mode before exporting the model", DeprecationWarning, stacklevel=3
    )
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got '{type(mode)}'.")
    was_training = getattr(model, "training", False)
    if hasattr(model, "train") and mode is not TrainingMode.PRESERVE:
        model.train(mode is TrainingMode.TRAINING)
    try:
        yield
    finally:
        if hasattr(model, "train") and mode is not TrainingMode.PRESERVE:
            model.train(was_training)


for _cls in (
    OnnxExporterError,
    ONNXProgram,
    ExportableModule,
    InputObserver,
    TrainingMode,
    OperatorExportTypes,
):
    _cls.__module__ = "torch.onnx"
