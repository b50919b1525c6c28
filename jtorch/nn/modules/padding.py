"""Padding layers: constant/zero, reflection, replication and circular, in 1, 2 and 3 dims."""

from __future__ import annotations

from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]

# An int pads every side; a tuple gives (left, right[, top, bottom[, front, back]]).
_SIDES = {1: _pair, 2: _quadruple, 3: _ntuple(6)}


class _PadNd(Module):
    """`F.pad(input, padding, mode)`; the padding is normalised to 2 * `_nd` entries."""

    _nd = 0
    _mode = ""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _SIDES[self._nd](padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise ValueError(f"expected {nd + 1}D or {nd + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Matches `torch.nn.CircularPad1d`."""

    _nd = 1


class CircularPad2d(_CircularPadNd):
    """Matches `torch.nn.CircularPad2d`."""

    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Matches `torch.nn.CircularPad3d`."""

    _nd = 3


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Matches `torch.nn.ReflectionPad1d`."""

    _nd = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Matches `torch.nn.ReflectionPad2d`."""

    _nd = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Matches `torch.nn.ReflectionPad3d`."""

    _nd = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Matches `torch.nn.ReplicationPad1d`."""

    _nd = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Matches `torch.nn.ReplicationPad2d`."""

    _nd = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Matches `torch.nn.ReplicationPad3d`."""

    _nd = 3


class _ConstantPadNd(Module):
    """`F.pad(input, padding, 'constant', value)`."""

    _nd = 0

    def __init__(self, padding, value: float) -> None:
        super().__init__()
        self.value = value
        self.padding = _SIDES[self._nd](padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Matches `torch.nn.ConstantPad1d`."""

    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Matches `torch.nn.ConstantPad2d`."""

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Matches `torch.nn.ConstantPad3d`."""

    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Matches `torch.nn.ZeroPad1d` (a `ConstantPad1d` with value 0)."""


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Matches `torch.nn.ZeroPad2d` (a `ConstantPad2d` with value 0)."""


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Matches `torch.nn.ZeroPad3d` (a `ConstantPad3d` with value 0)."""
