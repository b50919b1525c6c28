"""`torch.utils`: `data` (the same module as `jtorch.data`), `dlpack`, `checkpoint`,
`hooks` and `_pytree`."""

import sys

from .. import data
from . import (  # noqa: F401
    _pytree,
    checkpoint,  # noqa: F401
    dlpack,  # noqa: F401
    hooks,
)

sys.modules.setdefault(__name__ + ".data", data)
data.register_aliases(__name__ + ".data")

__all__ = ["checkpoint", "data", "dlpack", "hooks"]
