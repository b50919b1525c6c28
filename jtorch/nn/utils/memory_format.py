"""`torch.nn.utils.convert_conv{2,3}d_weight_memory_format`.

In jtorch a memory format is a layout hint: XLA picks the physical layout of
every array, so a channels-last tensor reports the same (contiguous) strides as
any other. These functions therefore do what PyTorch's do at the API level (replace
each matching convolution's weight data with a copy in the requested format,
recursively) and leave the numbers, and the reported layout, unchanged.
"""

from __future__ import annotations

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Matches `torch.nn.utils.convert_conv2d_weight_memory_format` (Conv2d, ConvTranspose2d)."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Matches `torch.nn.utils.convert_conv3d_weight_memory_format` (Conv3d, ConvTranspose3d)."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
