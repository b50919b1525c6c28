"""`torch.nn.modules`: the layer classes."""

from .container import (  # noqa: F401
    Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential,
)
from .flatten import Flatten, Unflatten  # noqa: F401
from .lazy import LazyModuleMixin  # noqa: F401
from .linear import Bilinear, Identity, LazyLinear, Linear  # noqa: F401
from .module import Module  # noqa: F401
