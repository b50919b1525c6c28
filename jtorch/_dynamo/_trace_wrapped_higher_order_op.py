"""`torch._dynamo._trace_wrapped_higher_order_op`: the one name libraries import from it.

PyTorch's `TransformGetItemToIndex` is a torch-function mode that turns `A[q_idx]`, with
`q_idx` a 0-dim index tensor, into an `aten.index` call, because PyTorch's `vmap` cannot
index by a batched scalar tensor otherwise (it would call `.item()`). jtorch's `vmap` runs on
jax's, where indexing by a traced 0-dim tensor is already a gather, so the mode leaves every
call as it is.
"""

from ..overrides import BaseTorchFunctionMode


class TransformGetItemToIndex(BaseTorchFunctionMode):
    """Matches `torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex`: in
    jtorch, `A[idx]` with 0-dim index tensors already works under `vmap` (see the module)."""
