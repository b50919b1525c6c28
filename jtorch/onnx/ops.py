"""`torch.onnx.ops`: ONNX operators usable inside a model being exported. jtorch exports no
ONNX graph, so calling them raises (see `torch.onnx`)."""

from __future__ import annotations

from .errors import OnnxExporterError

__all__ = ["symbolic", "symbolic_multi_out", "rotary_embedding", "attention"]

_MESSAGE = (
    "torch.onnx.ops.{name} only exists inside an ONNX export, which jtorch does not "
    "have (see torch.onnx.export)"
)


def _unavailable(name):
    def op(*args, **kwargs):
        raise OnnxExporterError(_MESSAGE.format(name=name))

    op.__name__ = op.__qualname__ = name
    return op


symbolic = _unavailable("symbolic")
symbolic_multi_out = _unavailable("symbolic_multi_out")
rotary_embedding = _unavailable("rotary_embedding")
attention = _unavailable("attention")
