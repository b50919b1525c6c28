"""Convolution layers: `Conv1d/2d/3d`, `ConvTranspose1d/2d/3d` and their `Lazy*` forms."""

from __future__ import annotations

import math

from ... import empty, no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")
_NTUPLE = {1: _single, 2: _pair, 3: _triple}
_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _set_repr(values) -> str:
    # PyTorch formats its error messages with a Python set literal of these names.
    return "{" + ", ".join(repr(v) for v in values) + "}"


class _ConvNd(Module):
    """Shared state of every convolution: hyper-parameters, weight, bias, `extra_repr`."""

    _nd = 0

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple,
        stride: tuple,
        padding,
        dilation: tuple,
        transposed: bool,
        output_padding: tuple,
        groups: int,
        bias: bool,
        padding_mode: str,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of "
                    f"{_set_repr(('same', 'valid'))}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_set_repr(_PADDING_MODES)}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # The padding in F.pad's order (last dim first), used by the non-zero padding modes.
        if isinstance(padding, str):
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for i, (d, k) in enumerate(zip(dilation, kernel_size)):
                    total = d * (k - 1)
                    j = len(kernel_size) - 1 - i
                    pads[2 * j], pads[2 * j + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # kaiming_uniform_(a=sqrt(5)) is uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), as in Linear.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    """`ConvNd` for N = `_nd`: the constructor normalises its arguments to N-tuples."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        tup = _NTUPLE[self._nd]
        super().__init__(
            in_channels,
            out_channels,
            tup(kernel_size),
            tup(stride),
            padding if isinstance(padding, str) else tup(padding),
            tup(dilation),
            False,
            tup(0),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def _conv_forward(self, input, weight, bias):
        conv = _CONV[self._nd]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(
                padded, weight, bias, self.stride, _NTUPLE[self._nd](0), self.dilation, self.groups
            )
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """Matches `torch.nn.Conv1d`."""

    _nd = 1


class Conv2d(_Conv):
    """Matches `torch.nn.Conv2d`."""

    _nd = 2


class Conv3d(_Conv):
    """Matches `torch.nn.Conv3d`."""

    _nd = 3


class _ConvTransposeNd(_ConvNd):
    """Transposed convolutions: only zero padding; `forward` takes an optional `output_size`."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {self.__class__.__name__}'
            )
        tup = _NTUPLE[self._nd]
        super().__init__(
            in_channels,
            out_channels,
            tup(kernel_size),
            tup(stride),
            tup(padding),
            tup(dilation),
            True,
            tup(output_padding),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def _output_padding(
        self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None
    ) -> list:
        """The output_padding that makes the result `output_size` (PyTorch's rule and errors)."""
        if output_size is None:
            return _single(self.output_padding)
        batched = input.dim() == num_spatial_dims + 2
        non_spatial = 2 if batched else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                f"output_size must have {num_spatial_dims} or "
                f"{non_spatial + num_spatial_dims} elements (got "
                f"{len(output_size)})"
            )
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dil = dilation[d] if dilation is not None else 1
            size = (
                (input.size(d + non_spatial) - 1) * stride[d]
                - 2 * padding[d]
                + dil * (kernel_size[d] - 1)
                + 1
            )
            min_sizes.append(size)
            max_sizes.append(size + stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes "
                    f"range from {min_sizes} to {max_sizes} (for an input of "
                    f"{input.size()[2:]})"
                )
        return [o - lo for o, lo in zip(output_size, min_sizes)]

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(
                f"Only `zeros` padding mode is supported for {self.__class__.__name__}"
            )
        output_padding = self._output_padding(
            input, output_size, self.stride, self.padding, self.kernel_size, self._nd, self.dilation
        )
        return _CONV_T[self._nd](
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """Matches `torch.nn.ConvTranspose1d`."""

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Matches `torch.nn.ConvTranspose2d`."""

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Matches `torch.nn.ConvTranspose3d`."""

    _nd = 3


# ---------------------------------------------------------------------------
# Lazy convolutions: in_channels is read from the first input.


class _LazyConvXdMixin(LazyModuleMixin):
    """Matches PyTorch's `_LazyConvXdMixin`: materialises weight and bias at the first call."""

    def _make_lazy(self, out_channels: int, bias: bool, dtype) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        with no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        unbatched, batched = self._nd + 1, self._nd + 2
        if input.dim() not in (unbatched, batched):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {batched}D (batched) input "
                f"to {self.__class__.__name__}, but got input of size: "
                f"{input.shape}"
            )
        return input.shape[1] if input.dim() == batched else input.shape[0]


class _LazyConv(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        # in_channels 0 and no bias: the real parameters are created at the first call.
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            False,
            padding_mode,
            device=device,
            dtype=dtype,
        )
        self._make_lazy(out_channels, bias, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
            device=device,
            dtype=dtype,
        )
        self._make_lazy(out_channels, bias, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """Matches `torch.nn.LazyConv1d`: `in_channels` is inferred at the first call."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """Matches `torch.nn.LazyConv2d`: `in_channels` is inferred at the first call."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """Matches `torch.nn.LazyConv3d`: `in_channels` is inferred at the first call."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """Matches `torch.nn.LazyConvTranspose1d`: `in_channels` is inferred at the first call."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """Matches `torch.nn.LazyConvTranspose2d`: `in_channels` is inferred at the first call."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """Matches `torch.nn.LazyConvTranspose3d`: `in_channels` is inferred at the first call."""

    cls_to_become = ConvTranspose3d
