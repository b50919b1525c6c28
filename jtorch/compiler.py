"""`torch.compiler`: `disable`, `is_compiling`, `reset`; and jtorch's `stats()`."""

from ._compile import compile, disable, is_compiling, reset  # noqa: F401
from ._programs import stats  # noqa: F401


def is_dynamo_compiling() -> bool:
    return is_compiling()
