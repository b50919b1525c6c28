"""`torch.distributed.tensor.placement_types`: how a DTensor lies along each mesh dimension.

`Shard(dim)` splits tensor dimension `dim` over a mesh dimension as `torch.chunk` does (the
last shards may be short or empty), `Replicate()` gives every rank the whole tensor, and
`Partial(op)` holds per-rank values still to be reduced with `op`. Per mesh dimension, a
placement is one entry of a `jax.sharding.PartitionSpec`: `Shard(d)` puts the mesh axis on
tensor dimension d, the others leave the tensor whole (see `_api.named_sharding`).
"""

from __future__ import annotations

__all__ = ["Partial", "Placement", "Replicate", "Shard"]


class Placement:
    """Matches `torch.distributed.tensor.placement_types.Placement`: the placement base."""

    __slots__ = ()

    def is_shard(self, dim: int | None = None) -> bool:
        return False

    def is_replicate(self) -> bool:
        return False

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return False


class Shard(Placement):
    """Matches `torch.distributed.tensor.Shard`: tensor dimension `dim` split over a mesh dim."""

    __slots__ = ("dim",)

    def __init__(self, dim: int):
        object.__setattr__(self, "dim", dim)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field '{name}'")  # frozen, as PyTorch's

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self.dim

    @staticmethod
    def local_shard_size_and_offset(
        curr_local_size: int, num_chunks: int, rank: int
    ) -> tuple[int, int]:
        """The size and offset of chunk `rank` of `num_chunks` (`torch.chunk`'s split)."""
        if curr_local_size % num_chunks == 0:
            full = curr_local_size // num_chunks
            return full, full * rank
        full = (curr_local_size + num_chunks - 1) // num_chunks
        start = full * rank
        end = min(curr_local_size, start + full)
        return max(0, end - start), min(curr_local_size, start)

    def _local_shard_size_and_offset(
        self, curr_local_size: int, num_chunks: int, rank: int
    ) -> tuple[int, int]:
        return Shard.local_shard_size_and_offset(curr_local_size, num_chunks, rank)

    @staticmethod
    def _local_shard_size_on_dim(
        size_on_dim: int, num_chunks: int, rank: int, return_offset: bool = False
    ):
        size, offset = Shard.local_shard_size_and_offset(size_on_dim, num_chunks, rank)
        return (size, offset) if return_offset else (size, -1)

    def _split_tensor(
        self, tensor, num_chunks: int, *, with_padding: bool = True, contiguous: bool = True
    ) -> tuple[list, list]:
        """`torch.chunk` of `tensor` along `dim` into `num_chunks` shards (empty ones added),
        each padded to the full chunk size when `with_padding`; returns (shards, pad sizes)."""
        from ... import nn

        size = tensor.size(self.dim)
        full = (size + num_chunks - 1) // num_chunks
        shards, pads = [], []
        for rank in range(num_chunks):
            n, start = Shard.local_shard_size_and_offset(size, num_chunks, rank)
            shard = tensor.narrow(self.dim, start, n)
            pad = full - n
            if with_padding and pad:
                widths = [0, 0] * (tensor.dim() - 1 - self.dim) + [0, pad]
                shard = nn.functional.pad(shard, widths)
            shards.append(shard.contiguous() if contiguous else shard)
            pads.append(pad if with_padding else 0)
        return shards, pads

    def __eq__(self, other) -> bool:
        return type(other) is Shard and other.dim == self.dim

    def __hash__(self) -> int:
        return hash(self.dim)

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"

    def __reduce__(self):
        return (Shard, (self.dim,))


class _StridedShard(Placement):
    """Matches PyTorch's `_StridedShard`: tensor dimension `dim` split over a mesh dimension
    after an earlier mesh dimension already split it `split_factor` ways (FSDP over TP).
    Like PyTorch's, it is not a `Shard` and `is_shard()` is False."""

    __slots__ = ("dim", "split_factor")

    def __init__(self, dim: int, *, split_factor: int):
        object.__setattr__(self, "dim", dim)
        object.__setattr__(self, "split_factor", split_factor)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field '{name}'")

    def __eq__(self, other) -> bool:
        return (
            type(other) is _StridedShard
            and other.dim == self.dim
            and other.split_factor == self.split_factor
        )

    def __hash__(self) -> int:
        return hash((self.dim, self.split_factor))

    def __repr__(self) -> str:
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self) -> str:
        return f"_S({self.dim}, {self.split_factor})"

    def __reduce__(self):
        return (_make_strided_shard, (self.dim, self.split_factor))


def _make_strided_shard(dim: int, split_factor: int) -> _StridedShard:
    return _StridedShard(dim, split_factor=split_factor)


class Replicate(Placement):
    """Matches `torch.distributed.tensor.Replicate`: every rank holds the whole tensor."""

    __slots__ = ()

    def is_replicate(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return type(other) is Replicate

    def __hash__(self) -> int:
        return -1  # every Replicate is the same, as in PyTorch

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"

    def __reduce__(self):
        return (Replicate, ())


class Partial(Placement):
    """Matches `torch.distributed.tensor.Partial`: values pending a `reduce_op` over ranks."""

    __slots__ = ("reduce_op",)

    LINEAR_REDUCE_OPS = ("sum", "avg")
    ALL_REDUCE_OPS = ("sum", "avg", "min", "max", "product")

    def __init__(self, reduce_op: str = "sum"):
        object.__setattr__(self, "reduce_op", reduce_op)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field '{name}'")

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other) -> bool:
        return isinstance(other, Partial) and other.reduce_op == self.reduce_op

    def __hash__(self) -> int:
        return 1 + hash(self.reduce_op)

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"

    def __reduce__(self):
        return (Partial, (self.reduce_op,))


_Partial = Partial  # PyTorch keeps the old name for backward compatibility
