"""`torch.distributed.algorithms.ddp_comm_hooks.post_localSGD_hook`: local SGD after a warm-up.

Until `start_localSGD_iter` the hook averages gradients over the whole group; after it, over
`subgroup` (or not at all when `post_local_gradient_allreduce` is off), leaving model
averaging to a `PeriodicModelAverager`.
"""

from __future__ import annotations

from .default_hooks import _allreduce_fut

__all__ = ["PostLocalSGDState", "post_localSGD_hook"]


class PostLocalSGDState:
    """Matches `PostLocalSGDState`: the groups and the iteration local SGD starts at."""

    __slots__ = [
        "process_group",
        "subgroup",
        "start_localSGD_iter",
        "post_local_gradient_allreduce",
        "iter",
    ]

    def __init__(
        self,
        process_group,
        subgroup,
        start_localSGD_iter: int,
        post_local_gradient_allreduce: bool = True,
    ):
        self.process_group = process_group
        self.subgroup = subgroup
        self.start_localSGD_iter = start_localSGD_iter
        self.post_local_gradient_allreduce = post_local_gradient_allreduce
        self.iter = 0

    def maybe_increase_iter(self, bucket) -> None:
        if bucket.is_last():
            self.iter += 1


def post_localSGD_hook(state: PostLocalSGDState, bucket):
    """Matches PyTorch's `post_localSGD_hook` (see the module doc)."""
    from .....futures import Future

    input_tensor = bucket.buffer()
    if state.iter < state.start_localSGD_iter:
        state.maybe_increase_iter(bucket)
        return _allreduce_fut(state.process_group, input_tensor)
    if not state.post_local_gradient_allreduce:
        fut = Future()
        fut.set_result(input_tensor)
        return fut
    return _allreduce_fut(state.subgroup, input_tensor)
