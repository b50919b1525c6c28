"""`torch.distributed._functional_collectives`: collectives that return new tensors.

Unlike `torch.distributed.all_reduce`, which writes into its argument, these return their
result and leave the input as it is (PyTorch returns an `AsyncCollectiveTensor` that
`wait_tensor` resolves). The group is a `ProcessGroup`, a list of ranks, a `DeviceMesh` or a
`(mesh, mesh_dim)` pair. Over the one rank of today's world every reduction, gather, scatter
and all-to-all of a tensor is that tensor, so the result is a copy of the input; the
`*_autograd` forms are differentiable (the gradient of a one-rank collective is the identity).
"""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from . import distributed_c10d as c10d

__all__ = [
    "AsyncCollectiveTensor",
    "all_gather_into_tensor_coalesced",
    "all_gather_single",
    "all_gather_single_autograd",
    "all_gather_single_coalesced",
    "all_gather_tensor",
    "all_gather_tensor_autograd",
    "all_reduce",
    "all_reduce_coalesced",
    "all_to_all_single",
    "all_to_all_single_autograd",
    "broadcast",
    "permute_tensor",
    "reduce_scatter_single",
    "reduce_scatter_single_autograd",
    "reduce_scatter_single_coalesced",
    "reduce_scatter_tensor",
    "reduce_scatter_tensor_autograd",
    "reduce_scatter_tensor_coalesced",
    "wait_tensor",
]

_REDUCE_OPS = ("sum", "avg", "product", "min", "max", "band", "bor", "bxor", "premul_sum")


class AsyncCollectiveTensor(Tensor):
    """PyTorch's handle on a pending collective's result; results here are never pending."""


def _group_size(group) -> int:
    from .device_mesh import DeviceMesh

    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise ValueError(
                f"Only 1D mesh is supported, but got a mesh with {group.ndim} dimensions"
            )
        return group.size()
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return group[0].size(group[1])
    if isinstance(group, list):
        warnings.warn(
            "The combination of ranks + tag as process group identifier has been "
            "deprecated. Please switch to using ProcessGroup, DeviceMesh, or group "
            "name instead.",
            FutureWarning,
            stacklevel=4,
        )
        if group and isinstance(group[0], list):
            raise ValueError(
                "Invalid group: a list of rank lists (several groups) is not supported"
            )
        for r in group:
            c10d._check_rank(r, "rank")
        return len(group)
    if isinstance(group, c10d.ProcessGroup):
        return group.size()
    if isinstance(group, str):
        return c10d._get_default_group().size()
    raise ValueError(f"Invalid group type {type(group)}, {group}")


def _one_rank(group) -> None:
    c10d._get_default_group()
    if _group_size(group) != 1:
        raise RuntimeError(
            "a group of more than one rank needs processes that this world of "
            "one process does not have"
        )


def _check_op(reduce_op: str) -> None:
    if str(reduce_op).lower() not in _REDUCE_OPS:
        raise ValueError(f"Unrecognized reduce_op: {reduce_op}")


def wait_tensor(tensor: Tensor) -> Tensor:
    """Waits for a collective's result: here it is already there."""
    return tensor


def _copy(t: Tensor) -> Tensor:
    return t.detach().clone()


def all_reduce(self: Tensor, reduceOp: str, group, tag: str = "") -> Tensor:
    _check_op(reduceOp)
    _one_rank(group)
    return _copy(self)


def all_reduce_coalesced(self: list, reduceOp: str, group, tag: str = "") -> list:
    return [all_reduce(t, reduceOp, group, tag) for t in self]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"`torch.distributed._functional_collectives.{old}` is deprecated. Please use "
        f"`torch.distributed._functional_collectives.{new}` instead.",
        FutureWarning,
        stacklevel=3,
    )


def all_gather_single(self: Tensor, gather_dim: int, group, tag: str = "") -> Tensor:
    _one_rank(group)
    return _copy(self)


def all_gather_single_autograd(self: Tensor, gather_dim: int, group, tag: str = "") -> Tensor:
    _one_rank(group)
    return self.clone()


def all_gather_single_coalesced(self: list, group, tag: str = "") -> list:
    return [all_gather_single(t, 0, group, tag) for t in self]


def all_gather_tensor(self: Tensor, gather_dim: int, group, tag: str = "") -> Tensor:
    _deprecated("all_gather_tensor", "all_gather_single")
    return all_gather_single(self, gather_dim, group, tag)


def all_gather_tensor_autograd(self: Tensor, gather_dim: int, group, tag: str = "") -> Tensor:
    _deprecated("all_gather_tensor_autograd", "all_gather_single_autograd")
    return all_gather_single_autograd(self, gather_dim, group, tag)


def all_gather_into_tensor_coalesced(self: list, group, tag: str = "") -> list:
    _deprecated("all_gather_into_tensor_coalesced", "all_gather_single_coalesced")
    return all_gather_single_coalesced(self, group, tag)


def reduce_scatter_single(
    self: Tensor, reduceOp: str, scatter_dim: int, group, tag: str = ""
) -> Tensor:
    _check_op(reduceOp)
    _one_rank(group)
    return _copy(self)


def reduce_scatter_single_autograd(
    self: Tensor, reduceOp: str, scatter_dim: int, group, tag: str = ""
) -> Tensor:
    _check_op(reduceOp)
    _one_rank(group)
    return self.clone()


def reduce_scatter_single_coalesced(
    inputs: list, reduceOp: str, scatter_dim: list, group, tag: str = ""
) -> list:
    return [reduce_scatter_single(t, reduceOp, d, group, tag) for t, d in zip(inputs, scatter_dim)]


def reduce_scatter_tensor(
    self: Tensor, reduceOp: str, scatter_dim: int, group, tag: str = ""
) -> Tensor:
    _deprecated("reduce_scatter_tensor", "reduce_scatter_single")
    return reduce_scatter_single(self, reduceOp, scatter_dim, group, tag)


def reduce_scatter_tensor_autograd(
    self: Tensor, reduceOp: str, scatter_dim: int, group, tag: str = ""
) -> Tensor:
    _deprecated("reduce_scatter_tensor_autograd", "reduce_scatter_single_autograd")
    return reduce_scatter_single_autograd(self, reduceOp, scatter_dim, group, tag)


def reduce_scatter_tensor_coalesced(
    inputs: list, reduceOp: str, scatter_dim: list, group, tag: str = ""
) -> list:
    _deprecated("reduce_scatter_tensor_coalesced", "reduce_scatter_single_coalesced")
    return reduce_scatter_single_coalesced(inputs, reduceOp, scatter_dim, group, tag)


def _check_splits(t: Tensor, splits, what: str) -> None:
    if splits is not None and (len(splits) != 1 or splits[0] != t.size(0)):
        raise ValueError(
            f"{what} {list(splits)} do not split a tensor of {t.size(0)} rows over one rank"
        )


def all_to_all_single(
    self: Tensor, output_split_sizes, input_split_sizes, group, tag: str = ""
) -> Tensor:
    _one_rank(group)
    _check_splits(self, input_split_sizes, "input_split_sizes")
    _check_splits(self, output_split_sizes, "output_split_sizes")
    return _copy(self)


def all_to_all_single_autograd(
    self: Tensor, output_split_sizes, input_split_sizes, group, tag: str = ""
) -> Tensor:
    _one_rank(group)
    _check_splits(self, input_split_sizes, "input_split_sizes")
    _check_splits(self, output_split_sizes, "output_split_sizes")
    return self.clone()


def broadcast(self: Tensor, src: int, group, tag: str = "") -> Tensor:
    _one_rank(group)
    c10d._check_rank(src, "source rank")
    return _copy(self)


def permute_tensor(self: Tensor, src_dst: list, group, tag: str = "") -> Tensor:
    _one_rank(group)
    if list(src_dst) != [0]:
        raise ValueError(f"src_dst {list(src_dst)} is not a permutation of one rank")
    return _copy(self)
