"""`torch.distributed.nn.functional`: differentiable collectives.

Each returns new tensors connected to its inputs by autograd; the backward of a collective is
the matching collective of the gradients (an all-gather's is a reduce-scatter of sums, a
broadcast's a sum-reduce to the source). Over the one rank of today's world every collective
of a tensor is that tensor and every such backward is the identity, so results are
differentiable copies.
"""

from __future__ import annotations

from ..._tensor import Tensor
from .. import distributed_c10d as c10d

__all__ = [
    "all_gather",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "broadcast",
    "gather",
    "reduce",
    "reduce_scatter",
    "scatter",
]


def _one_rank(group, root: int | None = None) -> None:
    group = group if group is not None else c10d._get_default_group()
    if group.size() != 1:
        raise RuntimeError(
            "a group of more than one rank needs processes that this world of "
            "one process does not have"
        )
    if root is not None:
        c10d._check_root(root, "collective")


def _copy(t: Tensor) -> Tensor:
    return t.clone()


def _check_one(lst, what: str) -> None:
    if len(lst) != 1:
        raise ValueError(
            f"{what} must have exactly one element per rank (world size 1), got {len(lst)}"
        )


def broadcast(tensor: Tensor, src: int, group=c10d.group.WORLD) -> Tensor:
    _one_rank(group, src)
    return _copy(tensor)


def gather(tensor: Tensor, dst: int = 0, group=c10d.group.WORLD) -> tuple:
    _one_rank(group, dst)
    return (_copy(tensor),)


def scatter(tensors: list, src: int = 0, group=c10d.group.WORLD) -> Tensor:
    _one_rank(group, src)
    _check_one(tensors, "tensors")
    return _copy(tensors[0])


def reduce(tensor: Tensor, dst: int, op=c10d.ReduceOp.SUM, group=c10d.group.WORLD) -> Tensor:
    _one_rank(group, dst)
    c10d._check_op(op)
    return _copy(tensor)


def reduce_scatter(
    output: Tensor, input_list: list, op=c10d.ReduceOp.SUM, group=c10d.group.WORLD
) -> Tensor:
    _one_rank(group)
    _check_one(input_list, "input_list")
    return _copy(input_list[0]).reshape(output.shape)


def all_gather(tensor: Tensor, group=c10d.group.WORLD) -> tuple:
    _one_rank(group)
    return (_copy(tensor),)


def all_to_all(output_tensor_list: list, input_tensor_list: list, group=c10d.group.WORLD) -> tuple:
    _one_rank(group)
    _check_one(input_tensor_list, "input_tensor_list")
    return tuple(_copy(t) for t in input_tensor_list)


def all_to_all_single(
    output: Tensor,
    input: Tensor,
    output_split_sizes=None,
    input_split_sizes=None,
    group=c10d.group.WORLD,
) -> Tensor:
    _one_rank(group)
    return _copy(input).reshape(output.shape)


def all_reduce(tensor: Tensor, op=c10d.ReduceOp.SUM, group=c10d.group.WORLD) -> Tensor:
    _one_rank(group)
    c10d._check_op(op)
    return _copy(tensor)
