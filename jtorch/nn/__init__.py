"""`torch.nn`: modules, parameters, `functional`, `init`, `utils`."""

import importlib as _importlib

from . import (  # noqa: F401
    attention,  # noqa: F401,E402
    functional,
    init,
    parallel,  # noqa: F401
    parameter,
)
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401

# `from .modules import *` also brings in the helper submodule `modules.utils` under the name
# `utils` (and `from . import utils` would keep it): bind the package explicitly.
utils = _importlib.import_module(".utils", __name__)
