"""Kernels behind `torch.nn.attention.flex_attention`.

Flex attention is dense here: every (query, key) score is computed, the user's `score_mod` and
`mask_mod` (Python functions on Tensors, run by `jtorch.nn.attention.flex_attention`) modify
and mask them, and one kernel turns the masked scores into the output and its statistics.
PyTorch's math reference (`torch._higher_order_ops.flex_attention.math_attention`) computes
scores in float64 for float64 queries and in float32 otherwise; so do these kernels.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._registry import NONE, TI, S, kernel

_HIGHEST = jax.lax.Precision.HIGHEST  # PyTorch does not use TF32 for these matmuls


def working_dtype(dtype):
    """Flex attention's working precision: float64 for float64 queries, float32 otherwise."""
    return jnp.float64 if dtype == jnp.float64 else jnp.float32


def _grouped(x, groups: int):
    """(B, Hq, L, D) -> (B, Hkv, groups * L, D): the query heads that share a key/value head
    (heads h * groups ... h * groups + groups - 1, as `repeat_interleave` pairs them)."""
    b, h, length, d = x.shape
    return x.reshape(b, h // groups, groups * length, d)


@kernel(promote=NONE)
def flex_scores(query: TI, key: TI, scale: S, groups):
    """`scale * query @ key^T` in the working precision: (B, Hq, L, S)."""
    wp = working_dtype(query.dtype)
    q, k = query.astype(wp), key.astype(wp)
    b, h, length, _ = q.shape
    s = jnp.matmul(_grouped(q, groups), jnp.swapaxes(k, -1, -2), precision=_HIGHEST)
    return (s.reshape(s.shape[0], h, length, s.shape[-1]) * scale).astype(wp)


@kernel(promote=NONE, differentiable=False)
def flex_block_mask(kv_num_blocks: TI, kv_indices: TI, full_kv_num_blocks: TI,
                    full_kv_indices: TI, mask: TI, shape, block_size):
    """Which (b, h, q, kv) positions a BlockMask lets through, as FlexAttention's kernels read
    it: a full block is attended as it is, a partial block where `mask` (the mask_mod's
    values) holds, a block not listed not at all. Block tables of batch or head size 1
    broadcast; other sizes repeat (the kernels index them modulo their size).
    """
    b, h, length, s = shape
    qb = jnp.arange(length) // block_size[0]
    kb = jnp.arange(s) // block_size[1]

    def positions(num, idx):
        idx = idx.reshape((1,) * (4 - idx.ndim) + idx.shape)
        num = num.reshape(idx.shape[:-1])
        nb, nh, rows, entries = idx.shape
        cols = -(-s // block_size[1])
        listed = (jnp.arange(entries) < num[..., None]) & (idx >= 0) & (idx < cols)
        # a scatter of the listed blocks into a (rows, cols) table; the rest go to a spare column
        dense = jnp.zeros((nb, nh, rows, cols + 1), jnp.bool_).at[
            jnp.arange(nb)[:, None, None, None], jnp.arange(nh)[None, :, None, None],
            jnp.arange(rows)[None, None, :, None], jnp.where(listed, idx, cols)].set(True)
        dense = dense[..., :cols]
        bi = jnp.arange(b) % nb if nb not in (1, b) else slice(None)
        hi = jnp.arange(h) % nh if nh not in (1, h) else slice(None)
        dense = dense[bi][:, hi]
        return dense[:, :, qb][:, :, :, kb]

    allowed = positions(kv_num_blocks, kv_indices) & mask
    if full_kv_num_blocks is not None:
        allowed = allowed | positions(full_kv_num_blocks, full_kv_indices)
    return allowed


@kernel(promote=NONE)
def flex_softmax(scores: TI, allowed: TI, value: TI, shape, groups, out_dtype):
    """Masked softmax of the modified scores, then the weighted values.

    Returns (output, logsumexp, max score). A row with nothing to attend to (all masked or all
    -inf) gives a zero output row and -inf statistics, as PyTorch's flex attention does.
    """
    s = jnp.broadcast_to(scores, shape)
    if allowed is not None:
        s = jnp.where(allowed, s, -jnp.inf)
    row_max = jnp.max(s, axis=-1, keepdims=True)
    shift = jax.lax.stop_gradient(jnp.where(jnp.isfinite(row_max), row_max, 0))
    e = jnp.exp(s - shift)
    denom = jnp.sum(e, axis=-1, keepdims=True)
    some = denom > 0
    safe = jnp.where(some, denom, 1)
    probs = e / safe
    lse = jnp.where(some, jnp.log(safe) + shift, -jnp.inf)[..., 0]
    v = value.astype(s.dtype)
    out = jnp.matmul(_grouped(probs, groups), v, precision=_HIGHEST)
    out = out.reshape(tuple(shape[:3]) + (v.shape[-1],))
    return out.astype(out_dtype.np), lse, row_max[..., 0]
