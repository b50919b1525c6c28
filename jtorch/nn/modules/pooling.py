"""Pooling layers: max, average, power-average, adaptive, fractional pools and max-unpooling."""

from __future__ import annotations

from .. import functional as F
from .module import Module
from .utils import _pair, _single, _triple

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
]


class _MaxPoolNd(Module):
    """Max pooling over `_nd` trailing dims; PyTorch keeps the arguments as given."""

    _fn = None

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """Matches `torch.nn.MaxPool1d`."""

    _fn = F.max_pool1d


class MaxPool2d(_MaxPoolNd):
    """Matches `torch.nn.MaxPool2d`."""

    _fn = F.max_pool2d


class MaxPool3d(_MaxPoolNd):
    """Matches `torch.nn.MaxPool3d`."""

    _fn = F.max_pool3d


class _MaxUnpoolNd(Module):
    """Inverse of max pooling: scatters values to the indices a `MaxPool` returned."""

    _fn = None
    _tuple = None

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        tup = type(self)._tuple
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Matches `torch.nn.MaxUnpool1d`."""

    _fn = F.max_unpool1d
    _tuple = _single


class MaxUnpool2d(_MaxUnpoolNd):
    """Matches `torch.nn.MaxUnpool2d`."""

    _fn = F.max_unpool2d
    _tuple = _pair


class MaxUnpool3d(_MaxUnpoolNd):
    """Matches `torch.nn.MaxUnpool3d`."""

    _fn = F.max_unpool3d
    _tuple = _triple


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Matches `torch.nn.AvgPool1d` (1-tuples; no `divisor_override`, as in PyTorch)."""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )


class _AvgPoolWithDivisor(_AvgPoolNd):
    _fn = None

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AvgPool2d(_AvgPoolWithDivisor):
    """Matches `torch.nn.AvgPool2d`."""

    _fn = F.avg_pool2d


class AvgPool3d(_AvgPoolWithDivisor):
    """Matches `torch.nn.AvgPool3d`."""

    _fn = F.avg_pool3d


class _FractionalMaxPoolNd(Module):
    """Fractional max pooling (Graham, 2014): pseudo-random window starts per plane."""

    _nd = 0
    _fn = None

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        _random_samples=None,
    ) -> None:
        super().__init__()
        nd, name = self._nd, type(self).__name__
        tup = _pair if nd == 2 else _triple
        if nd == 3 and (
            (isinstance(kernel_size, int) and kernel_size <= 0)
            or (isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))
        ):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._fn(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Matches `torch.nn.FractionalMaxPool2d`."""

    _nd = 2
    _fn = F.fractional_max_pool2d


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Matches `torch.nn.FractionalMaxPool3d`."""

    _nd = 3
    _fn = F.fractional_max_pool3d


class _LPPoolNd(Module):
    """Power-average pooling: `(sum x^p) ^ (1/p)` over each window."""

    _fn = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Matches `torch.nn.LPPool1d`."""

    _fn = F.lp_pool1d


class LPPool2d(_LPPoolNd):
    """Matches `torch.nn.LPPool2d`."""

    _fn = F.lp_pool2d


class LPPool3d(_LPPoolNd):
    """Matches `torch.nn.LPPool3d`."""

    _fn = F.lp_pool3d


class _AdaptiveMaxPoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Matches `torch.nn.AdaptiveMaxPool1d`."""

    _fn = F.adaptive_max_pool1d


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Matches `torch.nn.AdaptiveMaxPool2d` (`None` in `output_size` keeps that dim)."""

    _fn = F.adaptive_max_pool2d


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Matches `torch.nn.AdaptiveMaxPool3d` (`None` in `output_size` keeps that dim)."""

    _fn = F.adaptive_max_pool3d


class _AdaptiveAvgPoolNd(Module):
    _fn = None

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Matches `torch.nn.AdaptiveAvgPool1d`."""

    _fn = F.adaptive_avg_pool1d


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Matches `torch.nn.AdaptiveAvgPool2d` (`None` in `output_size` keeps that dim)."""

    _fn = F.adaptive_avg_pool2d


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Matches `torch.nn.AdaptiveAvgPool3d` (`None` in `output_size` keeps that dim)."""

    _fn = F.adaptive_avg_pool3d
