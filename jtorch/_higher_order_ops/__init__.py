"""`torch._higher_order_ops`: PyTorch's operators that take functions.

Model code imports these directly (transformers' Mamba family reaches for
`torch._higher_order_ops.associative_scan` on every forward). They run eagerly as PyTorch's
eager versions do, from ordinary tensor ops, so autograd and `jtorch.compile` see them as
any other code.
"""

from .._control_flow import cond, while_loop
from .associative_scan import associative_scan
from .scan import scan

__all__ = ["associative_scan", "cond", "scan", "while_loop"]
