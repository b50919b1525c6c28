"""`ChannelShuffle`: interleaves the channels of `groups` groups."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Matches `torch.nn.ChannelShuffle`."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
