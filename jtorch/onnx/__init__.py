"""`torch.onnx`: not available in jtorch (no ONNX exporter), with the way to get a jax
function instead (`jtorch.interop.functional`, which `jax.export` can serialize)."""

from __future__ import annotations

__all__ = ["export", "dynamo_export", "is_in_onnx_export", "OnnxExporterError"]

_NOT_AVAILABLE = ("torch.onnx.{what} is not available in jtorch: it has no ONNX exporter. "
                  "To get a jax function of a model, use jtorch.interop.functional(module) "
                  "-> (params, apply) (jax.export can serialize it).")


class OnnxExporterError(RuntimeError):
    """Matches `torch.onnx.OnnxExporterError`."""


def is_in_onnx_export() -> bool:
    """Matches `torch.onnx.is_in_onnx_export`: False (nothing is ever being exported)."""
    return False


def export(model, args=(), f=None, **kwargs):
    """Raises: see the module docstring."""
    raise OnnxExporterError(_NOT_AVAILABLE.format(what="export"))


def dynamo_export(model, *args, **kwargs):
    raise OnnxExporterError(_NOT_AVAILABLE.format(what="dynamo_export"))
