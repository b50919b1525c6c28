"""`BlockMask`, flex attention's block-sparse mask, and `create_block_mask`.

The format is PyTorch's, table for table: for each (batch, head) and each row of query blocks,
`kv_num_blocks` counts the key blocks that row attends to and `kv_indices` lists them first
(the rest of the row is unspecified); blocks the mask_mod leaves entirely unmasked go to the
`full_kv_*` tables instead, so a kernel can skip the mask there. `q_*` tables are the same
lists transposed (per key block, the query blocks), which PyTorch's backward reads. All of it
is written with tensor ops, so it runs eagerly and under `jtorch.compile` alike.
"""

from __future__ import annotations

import functools
import itertools
import operator
import warnings

import jax

from ... import accelerator, arange, argsort, ones, where, zeros
from ..._dtype import bool as _bool
from ..._dtype import int8, int32
from ..._tensor import Tensor
from .. import functional as F
from ._mods import _get_mod_type, _mask_mod_signature, _ModificationType, create_mask, noop_mask

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


def _sliced_mask_mod_error(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor):
    """The mask_mod of a sliced BlockMask: slicing drops the original mask_mod, as in PyTorch."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. "
        "When you slice a BlockMask using [], the mask_mod attribute is reset. "
        "You must set it from the original BlockMask's mask_mod."
        "\n\nIncorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(sliced_mask.mask_mod, offset)  # WRONG!"
        "\n\nCorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(base_mask.mask_mod, offset)  # Use base_mask!"
    )


# ---------------------------------------------------------------------------
# Block tables


def _ordered_to_dense(num_blocks_in_row: Tensor, col_indices: Tensor, num_cols: int) -> Tensor:
    """(num, indices) tables -> a dense int32 0/1 block matrix with `num_cols` columns."""
    *lead, entries = col_indices.shape
    device = col_indices.device
    listed = arange(entries, dtype=int32, device=device) < num_blocks_in_row.unsqueeze(-1)
    # Entries past a row's count are unspecified: send them to one column beyond the end.
    target = where(listed, col_indices, num_cols)
    grids = tuple(
        arange(n, device=device).view(*(n if i == j else 1 for j in range(len(lead))), 1)
        for i, n in enumerate(lead)
    )
    dense = col_indices.new_zeros(*lead, num_cols + 1, dtype=int32)
    dense[(*grids, target)] = 1
    return dense[..., :num_cols].contiguous()


def _dense_to_ordered(dense_mask: Tensor) -> tuple[Tensor, Tensor]:
    """A dense 0/1 block matrix -> (num, indices) tables, listed blocks first in column order."""
    dense_mask = dense_mask.to(dtype=int32)
    num_blocks_in_row = dense_mask.sum(dim=-1)
    col_indices = argsort(dense_mask, dim=-1, descending=True, stable=True)
    return num_blocks_in_row.to(int32).contiguous(), col_indices.to(int32).contiguous()


def _transpose_ordered(num_blocks_in_row: Tensor, col_indices: Tensor) -> tuple[Tensor, Tensor]:
    dense = _ordered_to_dense(num_blocks_in_row, col_indices, col_indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _adjust_num_blocks_and_indices(
    num_blocks: Tensor, indices: Tensor, new_num_rows: int, new_num_cols: int
) -> tuple[Tensor, Tensor]:
    indices = indices[:, :, :new_num_rows, :new_num_cols]
    num_blocks = num_blocks[:, :, :new_num_rows]
    num_blocks = where(num_blocks < new_num_cols, num_blocks, new_num_cols)
    num_blocks = (indices < num_blocks[:, :, :, None]).sum(dim=-1).to(int32)
    return num_blocks, indices


def _broadcast_to_dim(x: Tensor, dim: int) -> Tensor:
    while x.dim() < dim:
        x = x.unsqueeze(0)
    return x


def _round_up_to_multiple(x: int, multiple: int) -> int:
    return (x + multiple - 1) // multiple * multiple


def _convert_mask_to_block_mask(
    mask: Tensor,
    Q_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
    KV_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
    separate_full_blocks: bool = False,
):
    """A (B, H, Q, KV) bool mask -> int8 (partial, full) block matrices; full is None unless
    `separate_full_blocks` (then partial holds only the blocks that are not full)."""
    if mask.dtype != _bool:
        raise AssertionError(f"mask.dtype must be torch.bool, got {mask.dtype}")
    mask = _broadcast_to_dim(mask, 4)
    q_pad = _round_up_to_multiple(mask.shape[-2], Q_BLOCK_SIZE) - mask.shape[-2]
    kv_pad = _round_up_to_multiple(mask.shape[-1], KV_BLOCK_SIZE) - mask.shape[-1]
    mask = F.pad(mask, (0, kv_pad, 0, q_pad))
    B, H, Q, KV = mask.shape
    mask = mask.view(B, H, Q // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KV // KV_BLOCK_SIZE, KV_BLOCK_SIZE)
    block_sum = mask.permute(0, 1, 2, 4, 3, 5).sum(dim=[-2, -1])
    if separate_full_blocks:
        whole = Q_BLOCK_SIZE * KV_BLOCK_SIZE
        full = block_sum == whole
        partial = (block_sum > 0) & (block_sum < whole)
        return partial.to(dtype=int8), full.to(dtype=int8)
    return (block_sum > 0).to(dtype=int8), None


def _convert_block_mask_to_mask(
    block_mask: Tensor,
    KV_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
    Q_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
) -> Tensor:
    if block_mask.dim() != 4:
        raise AssertionError(f"block_mask.dim() must be 4, got {block_mask.dim()}")
    B, H, Q, KV = block_mask.shape
    block_mask = block_mask.expand(Q_BLOCK_SIZE, KV_BLOCK_SIZE, *block_mask.shape)
    return block_mask.permute(2, 3, 4, 0, 5, 1).reshape(B, H, Q * Q_BLOCK_SIZE, KV * KV_BLOCK_SIZE)


# ---------------------------------------------------------------------------
# BlockMask


class BlockMask:
    """Matches `torch.nn.attention.flex_attention.BlockMask`: flex attention's block-sparse
    mask (see the module docstring for the tables)."""

    _TENSOR_ATTRS = [
        "kv_num_blocks",
        "kv_indices",
        "full_kv_num_blocks",
        "full_kv_indices",
        "q_num_blocks",
        "q_indices",
        "full_q_num_blocks",
        "full_q_indices",
        "dq_write_order",
        "dq_write_order_full",
        "dq_kv_order",
    ]
    _CONTEXT_ATTRS = ["seq_lengths", "BLOCK_SIZE", "mask_mod", "dq_kv_order_spt"]

    def __init__(
        self,
        seq_lengths: tuple[int, int],
        kv_num_blocks: Tensor,
        kv_indices: Tensor,
        full_kv_num_blocks: Tensor | None,
        full_kv_indices: Tensor | None,
        q_num_blocks: Tensor | None,
        q_indices: Tensor | None,
        full_q_num_blocks: Tensor | None,
        full_q_indices: Tensor | None,
        BLOCK_SIZE: tuple[int, int] = (_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE),
        mask_mod: _mask_mod_signature = noop_mask,
        *,
        dq_write_order: Tensor | None = None,
        dq_write_order_full: Tensor | None = None,
        dq_kv_order: Tensor | None = None,
        dq_kv_order_spt: bool | None = None,
    ) -> None:
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if kv_num_blocks is None:
            raise AssertionError("kv_num_blocks must be provided")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted"
            )
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError(
                "full_q_num_blocks and full_q_indices must be both provided or omitted"
            )
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.dq_write_order = dq_write_order
        self.dq_write_order_full = dq_write_order_full
        self.dq_kv_order = dq_kv_order
        self.dq_kv_order_spt = dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(
        cls,
        kv_num_blocks: Tensor,
        kv_indices: Tensor,
        full_kv_num_blocks: Tensor | None = None,
        full_kv_indices: Tensor | None = None,
        BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
        mask_mod: _mask_mod_signature | None = None,
        seq_lengths: tuple[int, int] | None = None,
        compute_q_blocks: bool = True,
        *,
        dq_write_order: Tensor | None = None,
        dq_write_order_full: Tensor | None = None,
        dq_kv_order: Tensor | bool | None = None,
    ) -> BlockMask:
        """A BlockMask from its kv tables; the q tables are derived by transposing them."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted"
            )
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(
                    full_kv_num_blocks, full_kv_indices
                )
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        mask_mod = mask_mod if mask_mod is not None else noop_mask
        if seq_lengths is None:
            seq_lengths = (
                kv_indices.shape[-2] * BLOCK_SIZE[0],
                kv_indices.shape[-1] * BLOCK_SIZE[1],
            )
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(
            seq_lengths=seq_lengths,
            kv_num_blocks=kv_num_blocks,
            kv_indices=kv_indices,
            full_kv_num_blocks=full_kv_num_blocks,
            full_kv_indices=full_kv_indices,
            q_num_blocks=q_num_blocks,
            q_indices=q_indices,
            full_q_num_blocks=full_q_num_blocks,
            full_q_indices=full_q_indices,
            BLOCK_SIZE=BLOCK_SIZE,
            mask_mod=mask_mod,
            dq_write_order=dq_write_order,
            dq_write_order_full=dq_write_order_full,
            dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
            dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None,
        )

    def as_tuple(self, flatten: bool = True) -> tuple:
        """The attributes as a tuple (PyTorch's order); `flatten` spreads the two pairs."""
        block_size = tuple(self.BLOCK_SIZE) if flatten else (self.BLOCK_SIZE,)
        seq_lengths = tuple(self.seq_lengths) if flatten else (self.seq_lengths,)
        return (
            *seq_lengths,
            self.kv_num_blocks,
            self.kv_indices,
            self.full_kv_num_blocks,
            self.full_kv_indices,
            self.q_num_blocks,
            self.q_indices,
            self.full_q_num_blocks,
            self.full_q_indices,
            self.dq_write_order,
            self.dq_write_order_full,
            self.dq_kv_order,
            self.dq_kv_order_spt,
            *block_size,
            self.mask_mod,
        )

    @property
    def shape(self) -> tuple[int, ...]:
        *batch_dims, _, _ = self.kv_indices.shape
        return tuple(batch_dims) + tuple(self.seq_lengths)

    def __str__(self) -> str:
        s = f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
        s += self.to_string().strip()
        return s + "\n)"

    def __getitem__(self, index) -> BlockMask:
        """The BlockMask of some batches / heads / query-block rows (mask_mod is dropped)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Slicing BlockMask with tensor dq_kv_order is not supported yet. "
                "Construct a new BlockMask with matching precomputed dq_write_order metadata."
            )
        index = (index,) if not isinstance(index, tuple) else index
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        # An integer keeps its dimension (a size-1 slice), so the tables stay 4-D.
        index = tuple(
            (slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
            if isinstance(i, int)
            else i
            for i, n in zip(padded, sizes, strict=True)
        )
        full = (
            (None, None)
            if self.full_kv_num_blocks is None
            else (self.full_kv_num_blocks[index], self.full_kv_indices[index])
        )
        new = BlockMask.from_kv_blocks(
            self.kv_num_blocks[index],
            self.kv_indices[index],
            *full,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None,
        )
        new.dq_kv_order_spt = self.dq_kv_order_spt
        if self.dq_write_order is not None:
            new.dq_write_order, new.dq_write_order_full = _compute_dq_write_order_from_block_mask(
                new, dq_kv_order=new.dq_kv_order_spt
            )
        return new

    def __repr__(self) -> str:
        def shape_or_none(x):
            return x.shape if x is not None else None

        name = self.mask_mod.__name__ if hasattr(self.mask_mod, "__name__") else self.mask_mod
        return (
            f"BlockMask(\n"
            f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
            f"    kv_indices={self.kv_indices.shape},\n"
            f"    full_kv_num_blocks={shape_or_none(self.full_kv_num_blocks)},\n"
            f"    full_kv_indices={shape_or_none(self.full_kv_indices)},\n"
            f"    q_num_blocks={shape_or_none(self.q_num_blocks)},\n"
            f"    q_indices={shape_or_none(self.q_indices)},\n"
            f"    full_q_num_blocks={shape_or_none(self.full_q_num_blocks)},\n"
            f"    full_q_indices={shape_or_none(self.full_q_indices)},\n"
            f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
            f"    shape={self.shape},\n"
            f"    sparsity={self.sparsity():.2f}%,\n"
            f"    mask_mod={name}\n"
            f")"
        )

    def _adjust(self, new_q_len: int, new_kv_len: int) -> BlockMask:
        """The mask cropped (or its tables cut) to new lengths, keeping the upper-left part."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Adjusting BlockMask with tensor dq_kv_order is not supported yet. "
                "Construct a new BlockMask with matching precomputed dq_write_order metadata."
            )
        rows = (new_q_len + self.BLOCK_SIZE[0] - 1) // self.BLOCK_SIZE[0]
        cols = (new_kv_len + self.BLOCK_SIZE[1] - 1) // self.BLOCK_SIZE[1]
        kv = _adjust_num_blocks_and_indices(self.kv_num_blocks, self.kv_indices, rows, cols)
        full = (
            (None, None)
            if self.full_kv_num_blocks is None
            else _adjust_num_blocks_and_indices(
                self.full_kv_num_blocks, self.full_kv_indices, rows, cols
            )
        )
        new = self.from_kv_blocks(
            *kv,
            *full,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod,
            seq_lengths=(new_q_len, new_kv_len),
            compute_q_blocks=self.q_indices is not None,
        )
        new.dq_kv_order_spt = self.dq_kv_order_spt
        if self.dq_write_order is not None:
            new.dq_write_order, new.dq_write_order_full = _compute_dq_write_order_from_block_mask(
                new, dq_kv_order=new.dq_kv_order_spt
            )
        return new

    def numel(self) -> int:
        """Returns the number of elements (not accounting for sparsity) in the mask."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self) -> float:
        """The percentage of blocks that are skipped, PyTorch's formula (which counts whole
        blocks against the unpadded size, so it is negative for lengths short of a block)."""
        computed = self.kv_num_blocks.sum()
        if self.full_kv_num_blocks is not None:
            computed = computed + self.full_kv_num_blocks.sum()
        computed_size = computed.item() * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed_size / self.numel())

    def to_dense(self) -> Tensor:
        """Returns a dense block that is equivalent to the block mask."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            return dense | _ordered_to_dense(
                self.full_kv_num_blocks, self.full_kv_indices, self.full_kv_indices.shape[-1]
            )
        return dense

    def to_string(self, grid_size: int | tuple[int, int] = (20, 20), limit: int = 4) -> str:
        """A picture of the block mask: █ all blocks listed, ░ some, blank none.

        If grid_size is -1, prints out an uncompressed version.
        """
        dense_mask = self.to_dense()
        *batch_dims, num_rows, num_cols = dense_mask.shape
        if isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        if grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        values = dense_mask.tolist()
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))

        def block_vis(*batch_idx):
            cur = values
            for i in batch_idx:
                cur = cur[i]
            vis = f"{batch_idx}\n"
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    cells = [x for row in cur[r : r + row_step] for x in row[c : c + col_step]]
                    mean = sum(cells) / len(cells)
                    vis += ("█" if mean == 1 else " " if mean == 0 else "░") * 2
                vis += "\n"
            return vis

        total = []
        for n, batch_idx in enumerate(itertools.product(*[range(i) for i in batch_dims])):
            if n == limit:
                total.append("...")
                total.append("To print out more, set BlockMask.to_string(limit=N)")
                total.append(
                    "You can also index (BlockMask[batch, head]) to choose a specific batch or head"
                )
                break
            total.append(block_vis(*batch_idx))
        return "\n".join(total)

    def to(self, device) -> BlockMask:
        """A BlockMask with its tables on `device`."""
        tables = {
            a: None if getattr(self, a) is None else getattr(self, a).to(device)
            for a in self._TENSOR_ATTRS
        }
        return BlockMask(
            seq_lengths=self.seq_lengths,
            **tables,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod,
            dq_kv_order_spt=self.dq_kv_order_spt,
        )


def _flatten_block_mask(bm: BlockMask):
    return (
        tuple(getattr(bm, a) for a in BlockMask._TENSOR_ATTRS),
        tuple(getattr(bm, a) for a in BlockMask._CONTEXT_ATTRS),
    )


def _unflatten_block_mask(context, tables) -> BlockMask:
    seq_lengths, block_size, mask_mod, dq_kv_order_spt = context
    names = BlockMask._TENSOR_ATTRS
    return BlockMask(
        seq_lengths,
        *tables[:8],
        BLOCK_SIZE=block_size,
        mask_mod=mask_mod,
        **dict(zip(names[8:], tables[8:])),
        dq_kv_order_spt=dq_kv_order_spt,
    )


# A BlockMask crosses jax transforms as its tables, so `jtorch.compile(create_block_mask)`
# (what PyTorch recommends) returns one. PyTorch's own pytree does not know BlockMask (its
# `tree_flatten` keeps one as a leaf), so `torch.utils._pytree` is left alone.
jax.tree_util.register_pytree_node(BlockMask, _flatten_block_mask, _unflatten_block_mask)


def _compute_dq_write_order_from_block_mask(
    block_mask: BlockMask, dq_kv_order: bool | None = False
) -> tuple[Tensor, Tensor | None]:
    """Matches PyTorch's: for each q-table entry, the rank of that (q block, kv block) pair
    among its query row's blocks (ascending kv order, or descending with `dq_kv_order`)."""
    bm = block_mask
    if bm.q_num_blocks is None or bm.q_indices is None:
        raise ValueError("BlockMask must have q_num_blocks and q_indices to compute dq_write_order")
    shapes = [bm.kv_indices.shape[:2], bm.q_indices.shape[:2]]
    shapes += [t.shape[:2] for t in (bm.full_kv_indices, bm.full_q_indices) if t is not None]
    B, H = max(s[0] for s in shapes), max(s[1] for s in shapes)

    def expand(t):
        return None if t is None else t.expand(B, H, *t.shape[2:])

    num_m, num_n = bm.kv_indices.shape[2], bm.q_indices.shape[2]
    dense = _ordered_to_dense(expand(bm.kv_num_blocks), expand(bm.kv_indices), num_n)
    has_full = bm.full_kv_num_blocks is not None
    if has_full:
        dense = (
            dense
            + _ordered_to_dense(expand(bm.full_kv_num_blocks), expand(bm.full_kv_indices), num_n)
        ).clamp(max=1)
    cumsum = dense.cumsum(dim=-1)
    rank = (cumsum - dense).to(int32)
    if dq_kv_order:
        rank = (cumsum[:, :, :, -1:] - 1 - rank).to(int32)

    def gather(bwd_idx):
        dev = bwd_idx.device
        b = arange(B, device=dev)[:, None, None, None]
        h = arange(H, device=dev)[None, :, None, None]
        n = arange(bwd_idx.shape[2], device=dev)[None, None, :, None]
        return rank[b, h, bwd_idx.long().clamp(0, num_m - 1), n].to(int32)

    full = gather(bm.full_q_indices) if has_full and bm.full_q_indices is not None else None
    return gather(bm.q_indices), full


def create_block_mask(
    mask_mod: _mask_mod_signature,
    B: int | None,
    H: int | None,
    Q_LEN: int,
    KV_LEN: int,
    device=None,
    BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
    _compile=False,
    separate_full_blocks: bool = True,
    compute_dq_write_order: bool = False,
    dq_kv_order: bool = True,
) -> BlockMask:
    """Matches `torch.nn.attention.flex_attention.create_block_mask`: the BlockMask of a
    mask_mod over (B, H, Q_LEN, KV_LEN) (B, H None: 1, broadcast over batches / heads)."""
    if device is None:
        device = accelerator.current_accelerator() or "cpu"
    if _get_mod_type(mask_mod) != _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B = 1 if B is None else B
    H = 1 if H is None else H
    q_bs, kv_bs = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        # PyTorch compiles create_block_mask here; the tables are the same computed eagerly,
        # and a mask_mod closure made afresh for every call would compile every call.
        warnings.warn(
            "_compile flag on create_block_mask was originally added to work around a "
            "torch.compile limitation. That limitation has since been addressed. So, to "
            "compile create_block_mask, we suggest doing torch.compile(create_block_mask). "
            "This still works for now, but will be removed in the future.",
            DeprecationWarning,
            stacklevel=2,
        )
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(
        mask, Q_BLOCK_SIZE=q_bs, KV_BLOCK_SIZE=kv_bs, separate_full_blocks=separate_full_blocks
    )
    kv = _dense_to_ordered(partial)
    full_kv = (None, None) if full is None else _dense_to_ordered(full)
    block_mask = BlockMask.from_kv_blocks(
        *kv, *full_kv, BLOCK_SIZE=(q_bs, kv_bs), mask_mod=mask_mod, seq_lengths=(Q_LEN, KV_LEN)
    )
    if compute_dq_write_order:
        block_mask.dq_write_order, block_mask.dq_write_order_full = (
            _compute_dq_write_order_from_block_mask(block_mask, dq_kv_order=dq_kv_order)
        )
        block_mask.dq_kv_order = None
        block_mask.dq_kv_order_spt = dq_kv_order
    return block_mask


def _create_empty_block_mask(query: Tensor, key: Tensor) -> BlockMask:
    """The block mask of no mask: one block covering everything."""
    device = query.device
    return BlockMask.from_kv_blocks(
        kv_num_blocks=ones([1, 1, 1], dtype=int32, device=device),
        kv_indices=zeros([1, 1, 1, 1], dtype=int32, device=device),
        BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE,
        seq_lengths=(1, 1),
    )
