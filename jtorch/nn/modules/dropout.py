"""Dropout layers: `Dropout`, `Dropout1d/2d/3d`, `AlphaDropout`, `FeatureAlphaDropout`."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Matches `torch.nn.Dropout`: zeroes elements with probability `p`, scales by 1/(1-p)."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Matches `torch.nn.Dropout1d`: zeroes whole channels of (N, C, L) or (C, L) inputs."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Matches `torch.nn.Dropout2d`: zeroes whole channels of (N, C, H, W) inputs."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Matches `torch.nn.Dropout3d`: zeroes whole channels of (N, C, D, H, W) inputs."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Matches `torch.nn.AlphaDropout`: dropout that keeps SELU's mean and variance."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Matches `torch.nn.FeatureAlphaDropout`: alpha dropout of whole channels."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
