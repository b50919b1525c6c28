"""Activation layers: thin modules over `torch.nn.functional`'s activations."""

from __future__ import annotations

import warnings

from ... import empty, sigmoid, tanh
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "Threshold",
    "ReLU",
    "RReLU",
    "Hardtanh",
    "ReLU6",
    "Sigmoid",
    "Hardsigmoid",
    "Tanh",
    "SiLU",
    "Mish",
    "Hardswish",
    "ELU",
    "CELU",
    "SELU",
    "GLU",
    "GELU",
    "Hardshrink",
    "LeakyReLU",
    "LogSigmoid",
    "Softplus",
    "Softshrink",
    "PReLU",
    "Softsign",
    "Tanhshrink",
    "Softmin",
    "Softmax",
    "Softmax2d",
    "LogSoftmax",
]


def _inplace_suffix(inplace: bool, lead: str = ", ") -> str:
    return f"{lead}inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation whose only option is `inplace` (shown in the repr only when True)."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return _inplace_suffix(self.inplace, "")


class Threshold(Module):
    """Matches `torch.nn.Threshold`: `value` where `input <= threshold`, else `input`."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class ReLU(_Inplace):
    """Matches `torch.nn.ReLU`."""

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class RReLU(Module):
    """Matches `torch.nn.RReLU`: random negative slopes in training, their mean in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """Matches `torch.nn.Hardtanh`: clamps to `[min_val, max_val]`."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn(
                "keyword argument `min_value` is deprecated and renamed to `min_val`",
                FutureWarning,
                stacklevel=2,
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and renamed to `max_val`",
                FutureWarning,
                stacklevel=2,
            )
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"
            )

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """Matches `torch.nn.ReLU6`: `Hardtanh(0, 6)`."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_suffix(self.inplace, "")


class Sigmoid(Module):
    """Matches `torch.nn.Sigmoid`."""

    def forward(self, input):
        return sigmoid(input)


class Hardsigmoid(_Inplace):
    """Matches `torch.nn.Hardsigmoid` (its repr never shows `inplace`)."""

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Tanh(Module):
    """Matches `torch.nn.Tanh`."""

    def forward(self, input):
        return tanh(input)


class SiLU(_Inplace):
    """Matches `torch.nn.SiLU`: `x * sigmoid(x)`."""

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """Matches `torch.nn.Mish`: `x * tanh(softplus(x))`."""

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardswish(_Inplace):
    """Matches `torch.nn.Hardswish` (its repr never shows `inplace`)."""

    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class ELU(Module):
    """Matches `torch.nn.ELU`."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(Module):
    """Matches `torch.nn.CELU`."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """Matches `torch.nn.SELU`."""

    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(Module):
    """Matches `torch.nn.GLU`: `a * sigmoid(b)` of the halves of `input` along `dim`."""

    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """Matches `torch.nn.GELU`; `approximate` is 'none' or 'tanh'."""

    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """Matches `torch.nn.Hardshrink`: zero inside `[-lambd, lambd]`."""

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class LeakyReLU(Module):
    """Matches `torch.nn.LeakyReLU`."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class LogSigmoid(Module):
    """Matches `torch.nn.LogSigmoid`."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    """Matches `torch.nn.Softplus`: linear where `beta * input > threshold`."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """Matches `torch.nn.Softshrink`: shrinks towards zero by `lambd`."""

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class PReLU(Module):
    """Matches `torch.nn.PReLU`: a learnt negative slope, one or one per channel (dim 1)."""

    __constants__ = ["num_parameters"]

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None
    ) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """Matches `torch.nn.Softsign`: `x / (1 + |x|)`."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """Matches `torch.nn.Tanhshrink`: `x - tanh(x)`."""

    def forward(self, input):
        return F.tanhshrink(input)


class _SoftmaxBase(Module):
    """Softmax-like layers along `dim`; `dim=None` picks PyTorch's legacy dim with a warning."""

    __constants__ = ["dim"]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    """Matches `torch.nn.Softmin`."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_SoftmaxBase):
    """Matches `torch.nn.Softmax`."""

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Matches `torch.nn.Softmax2d`: softmax over the channel dim of (N, C, H, W) or (C, H, W)."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    """Matches `torch.nn.LogSoftmax`."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


# PyTorch defines MultiheadAttention in this module; jtorch keeps it in its own file.
try:
    from .multihead import MultiheadAttention  # noqa: E402,F401

    __all__.append("MultiheadAttention")
except ImportError:  # pragma: no cover - only while multihead.py is absent
    pass
