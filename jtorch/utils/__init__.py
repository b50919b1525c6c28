"""`torch.utils`: `data` (the same module as `jtorch.data`), `dlpack`, `checkpoint`,
`hooks` and `_pytree`."""

import sys

from .. import data
from . import dlpack  # noqa: F401
from . import checkpoint  # noqa: F401
from . import _pytree, hooks  # noqa: F401

sys.modules.setdefault(__name__ + ".data", data)
data.register_aliases(__name__ + ".data")

__all__ = ["checkpoint", "data", "dlpack", "hooks"]
