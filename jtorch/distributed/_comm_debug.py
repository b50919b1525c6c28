"""Which collectives run: the record that `CommDebugMode` reads.

PyTorch's `torch.distributed.tensor.debug.CommDebugMode` counts the collective operators that
run while it is active, keyed by operator: `torch.ops.c10d.*` for the process-group API
(`dist.all_reduce` is `c10d.allreduce_`) and `torch.ops.c10d_functional.*` for the functional
collectives that DTensor's redistributions issue (a `Partial` made whole is one
`c10d_functional.all_reduce`). Each collective here calls `note` with the name PyTorch's
operator has; the modes listening turn names into `torch.ops` keys.
"""

from __future__ import annotations

__all__ = ["COLLECTIVES", "LISTENERS", "note"]

# The operator names PyTorch's CommDebugMode counts, per `torch.ops` namespace.
COLLECTIVES = {
    "c10d": frozenset(
        (
            "_allgather_base_",
            "_reduce_scatter_base_",
            "allgather_",
            "allgather_coalesced_",
            "allgather_into_tensor_coalesced_",
            "allreduce_",
            "allreduce_coalesced_",
            "alltoall_",
            "alltoall_base_",
            "broadcast_",
            "gather_",
            "scatter_",
            "reduce_",
            "reduce_scatter_",
            "reduce_scatter_tensor_coalesced_",
        )
    ),
    "c10d_functional": frozenset(
        (
            "all_gather_into_tensor",
            "all_gather_into_tensor_coalesced",
            "all_reduce",
            "all_reduce_coalesced",
            "all_to_all_single",
            "broadcast",
            "reduce_scatter_tensor",
            "reduce_scatter_tensor_coalesced",
        )
    ),
}

# Callables `(namespace, name)`: the active CommDebugModes.
LISTENERS: list = []


def note(namespace: str, name: str) -> None:
    """Records that the collective `torch.ops.<namespace>.<name>` runs now."""
    for listener in LISTENERS:
        listener(namespace, name)
