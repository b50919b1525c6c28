"""`torch.nn`: modules, parameters, `functional`, `init`."""

from . import functional, init, parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from .parameter import (  # noqa: F401
    Buffer, Parameter, UninitializedBuffer, UninitializedParameter,
)
