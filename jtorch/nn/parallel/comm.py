"""`torch.nn.parallel.comm`: the same functions as `torch.cuda.comm` (where they live in
jtorch, below `nn`)."""

from ...cuda.comm import (  # noqa: F401
    __all__,
    broadcast,
    broadcast_coalesced,
    gather,
    reduce_add,
    reduce_add_coalesced,
    scatter,
)
