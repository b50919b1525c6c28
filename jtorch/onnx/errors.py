"""`torch.onnx.errors`: the exporter's exception types (jtorch raises OnnxExporterError)."""

from __future__ import annotations

__all__ = [
    "OnnxExporterError",
    "OnnxExporterWarning",
    "SymbolicValueError",
    "UnsupportedOperatorError",
]


class OnnxExporterError(RuntimeError):
    """Matches `torch.onnx.OnnxExporterError`."""


class OnnxExporterWarning(UserWarning):
    """Matches `torch.onnx.errors.OnnxExporterWarning`."""


class SymbolicValueError(OnnxExporterError):
    """Matches `torch.onnx.errors.SymbolicValueError`."""


class UnsupportedOperatorError(OnnxExporterError):
    """Matches `torch.onnx.errors.UnsupportedOperatorError`."""


OnnxExporterError.__module__ = "torch.onnx"
