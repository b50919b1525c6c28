"""Attention kernels: `scaled_dot_product_attention`, `multi_head_attention_forward` and
the kernels behind `torch.nn.attention.flex_attention`.

Flex attention is dense here: every (query, key) score is computed, the user's `score_mod` and
`mask_mod` (Python functions on Tensors, run by `jtorch.nn.attention.flex_attention`) modify
and mask them, and one kernel turns the masked scores into the output and its statistics.
PyTorch's math reference (`torch._higher_order_ops.flex_attention.math_attention`) computes
scores in float64 for float64 queries and in float32 otherwise; so do these kernels.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ... import _random
from .._kernel_helpers import accumulate, need_float, private_op
from .._registry import NONE, TI, S, T, broadcast_error, composite, kernel
from .._rows import AttentionRows

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
def flex_block_mask(
    kv_num_blocks: TI,
    kv_indices: TI,
    full_kv_num_blocks: TI,
    full_kv_indices: TI,
    mask: TI,
    shape,
    block_size,
):
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
        dense = (
            jnp.zeros((nb, nh, rows, cols + 1), jnp.bool_)
            .at[
                jnp.arange(nb)[:, None, None, None],
                jnp.arange(nh)[None, :, None, None],
                jnp.arange(rows)[None, None, :, None],
                jnp.where(listed, idx, cols),
            ]
            .set(True)
        )
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


# ---------------------------------------------------------------------------
# Attention


def _sdpa_kernel(
    query: T, key: T, value: T, attn_mask: TI, rng: TI, dropout_p, is_causal, scale, enable_gqa
):
    if not (query.dtype == key.dtype == value.dtype):
        names = [
            jnp.dtype(t.dtype).name.replace("float32", "float").replace("float64", "double")
            for t in (query, key, value)
        ]
        raise RuntimeError(
            f"Expected query, key, and value to have the same dtype, but got "
            f"query.dtype: {names[0]} key.dtype: {names[1]} and value.dtype: "
            f"{names[2]} instead."
        )
    need_float("scaled_dot_product_attention", query)
    q, k, v = accumulate(query), accumulate(key), accumulate(value)
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k = jnp.repeat(k, rep, axis=-3)
        v = jnp.repeat(v, rep, axis=-3)
    length, s = q.shape[-2], k.shape[-2]
    sc = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    logits = jnp.matmul(q, jnp.swapaxes(k, -1, -2), precision=_HIGHEST) * sc
    allowed = None
    if is_causal:
        allowed = jnp.tril(jnp.ones((length, s), jnp.bool_))
    if attn_mask is not None:
        if attn_mask.dtype == jnp.bool_:
            allowed = attn_mask if allowed is None else allowed & attn_mask
        else:
            logits = logits + accumulate(attn_mask)
    if allowed is not None:
        logits = jnp.where(allowed, logits, -jnp.inf)
    # With no mask, or the causal one alone, every query sees a key (key 0): no row is all
    # -inf, and the plain softmax (fewer operations: a third of this kernel's compile time,
    # half of its VJP's) gives the same values.
    plain = attn_mask is None and s > 0
    weights = _softmax(logits) if plain else _safe_softmax(logits)
    if dropout_p > 0:
        weights = _drop(weights, rng, dropout_p)
    out = jnp.matmul(weights, v, precision=_HIGHEST)
    return out.astype(query.dtype)


def _softmax(logits):
    """Softmax over the last dim of rows that have a finite entry."""
    e = jnp.exp(logits - jax.lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True)))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _safe_softmax(logits):
    """Softmax over the last dim; rows with nothing to attend to give zeros, as in PyTorch."""
    m = jnp.max(logits, axis=-1, keepdims=True)
    m = jnp.where(jnp.isfinite(m), m, 0)
    e = jnp.exp(logits - jax.lax.stop_gradient(m))
    denom = jnp.sum(e, axis=-1, keepdims=True)
    return jnp.where(denom > 0, e / jnp.where(denom > 0, denom, 1), 0)


def _drop(weights, rng, p):
    keep = jax.random.bernoulli(rng, 1 - p, weights.shape)
    return jnp.where(keep, weights / (1 - p), 0).astype(weights.dtype)


_sdpa_call, _ = private_op(_sdpa_kernel, promote=NONE, rows=AttentionRows())


@composite(name="nn.functional.scaled_dot_product_attention", method=False)
def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """Matches `torch.nn.functional.scaled_dot_product_attention`."""
    if not enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        err = broadcast_error(tuple(query.shape[:-2]), tuple(key.shape[:-2]))
        if err is not None:
            raise err
    rng = _random.key_for(None, query) if dropout_p > 0 else None
    return _sdpa_call(
        query,
        key,
        value,
        attn_mask,
        rng,
        float(dropout_p),
        bool(is_causal),
        None if scale is None else float(scale),
        bool(enable_gqa),
    )


def _mha_kernel(
    query: T,
    key: T,
    value: T,
    in_proj_weight: T,
    in_proj_bias: T,
    bias_k: T,
    bias_v: T,
    out_proj_weight: T,
    out_proj_bias: T,
    key_padding_mask: T,
    attn_mask: T,
    q_proj_weight: T,
    k_proj_weight: T,
    v_proj_weight: T,
    static_k: T,
    static_v: T,
    rng: TI,
    num_heads,
    add_zero_attn,
    dropout_p,
    need_weights,
    average_attn_weights,
    causal,
):
    """The body of `multi_head_attention_forward` after its argument checks."""
    dt = query.dtype
    batched = query.ndim == 3
    q_in, k_in, v_in = (
        accumulate(a) if batched else accumulate(a)[:, None] for a in (query, key, value)
    )
    kpm = key_padding_mask
    if kpm is not None and not batched:
        kpm = kpm[None]
    length, n, e = q_in.shape
    h, hd = num_heads, e // num_heads

    def canonical(m):  # a bool mask marks the positions to leave out
        if m is None:
            return None
        return (
            jnp.where(m, -jnp.inf, 0.0).astype(q_in.dtype)
            if m.dtype == jnp.bool_
            else accumulate(m)
        )

    kpm, am = canonical(kpm), canonical(attn_mask)

    def lin(x, w, b):
        y = jnp.matmul(x, accumulate(w).T, precision=_HIGHEST)
        return y if b is None else y + accumulate(b)

    if q_proj_weight is not None:
        ws = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        ws = jnp.split(in_proj_weight, 3)
    bs = (None,) * 3 if in_proj_bias is None else jnp.split(in_proj_bias, 3)
    q, k, v = (lin(x, w, b) for x, w, b in zip((q_in, k_in, v_in), ws, bs))
    if am is not None and am.ndim == 2:
        am = am[None]

    def pad_last(m):
        return None if m is None else jnp.pad(m, [(0, 0)] * (m.ndim - 1) + [(0, 1)])

    if bias_k is not None:
        k = jnp.concatenate([k, jnp.tile(accumulate(bias_k), (1, n, 1))])
        v = jnp.concatenate([v, jnp.tile(accumulate(bias_v), (1, n, 1))])
        am, kpm = pad_last(am), pad_last(kpm)
    q = q.reshape(length, n * h, hd).transpose(1, 0, 2)
    k = (
        accumulate(static_k)
        if static_k is not None
        else k.reshape(k.shape[0], n * h, hd).transpose(1, 0, 2)
    )
    v = (
        accumulate(static_v)
        if static_v is not None
        else v.reshape(v.shape[0], n * h, hd).transpose(1, 0, 2)
    )
    if add_zero_attn:
        k = jnp.concatenate([k, jnp.zeros((n * h, 1, hd), k.dtype)], 1)
        v = jnp.concatenate([v, jnp.zeros((n * h, 1, hd), v.dtype)], 1)
        am, kpm = pad_last(am), pad_last(kpm)
    s = k.shape[1]
    if kpm is not None:
        kpm = jnp.broadcast_to(kpm.reshape(n, 1, 1, s), (n, h, 1, s)).reshape(n * h, 1, s)
        am = kpm if am is None else am + kpm
    logits = jnp.matmul(q * math.sqrt(1.0 / hd), jnp.swapaxes(k, 1, 2), precision=_HIGHEST)
    if am is not None:
        logits = logits + am
    if causal:
        logits = jnp.where(jnp.tril(jnp.ones((length, s), jnp.bool_)), logits, -jnp.inf)
    # The need_weights path uses a plain softmax; the fused path a safe one.
    weights = jax.nn.softmax(logits, axis=-1) if need_weights else _safe_softmax(logits)
    if dropout_p > 0:
        weights = _drop(weights, rng, dropout_p)
    out = jnp.matmul(weights, v, precision=_HIGHEST)  # (n*h, length, hd)
    out = out.transpose(1, 0, 2).reshape(length * n, e)
    out = lin(out, out_proj_weight, out_proj_bias).reshape(length, n, e).astype(dt)
    if not need_weights:
        return (out if batched else out[:, 0]), None
    weights = weights.reshape(n, h, length, s)
    if average_attn_weights:
        weights = jnp.mean(weights, axis=1)
    weights = weights.astype(dt)
    return (out, weights) if batched else (out[:, 0], weights[0])


_mha_call, _ = private_op(_mha_kernel, promote=NONE)


def _mha_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's shape checks; True when the input is batched."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(
                f"For batched (3-D) `query`, expected `key` and `value` to be "
                f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                f"respectively"
            )
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(
                f"For batched (3-D) `query`, expected `key_padding_mask` to be "
                f"`None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                f"instead"
            )
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(
                f"For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                f"2-D or 3-D but found {attn_mask.ndim}-D tensor instead"
            )
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(
                f"For unbatched (2-D) `query`, expected `key` and `value` to be "
                f"2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                f"respectively"
            )
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(
                f"For unbatched (2-D) `query`, expected `key_padding_mask` to "
                f"be `None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                f"instead"
            )
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(
                    f"For unbatched (2-D) `query`, expected `attn_mask` to be "
                    f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                    f"instead"
                )
            if attn_mask.ndim == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(
                        f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                    )
        return False
    raise AssertionError(
        f"query should be unbatched 2D or batched 3D tensor but received "
        f"{query.ndim}-D query tensor"
    )


@composite(name="nn.functional.multi_head_attention_forward", method=False)
def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """Matches `torch.nn.functional.multi_head_attention_forward`."""
    batched = _mha_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    tgt_len = query.shape[0]
    embed_dim = query.shape[-1]
    src_len = key.shape[0]
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the "
            "Transformer module method `generate_square_subsequent_mask` to "
            "create this mask."
        )
    causal = False
    if is_causal and key_padding_mask is None and not need_weights:
        # The hint replaces the mask with the causal one.
        attn_mask, causal = None, True
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    if (embed_dim // num_heads) * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match "
                f"value's {value.shape[:2]}"
            )
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight is None")
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q_proj_weight = k_proj_weight = v_proj_weight = None
    if attn_mask is not None:
        bsz = query.shape[1] if batched else 1
        if attn_mask.ndim == 2 and tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                f"be {(tgt_len, src_len)}."
            )
        if attn_mask.ndim == 3 and tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                f"be {(bsz * num_heads, tgt_len, src_len)}."
            )
    if (bias_k is None) != (bias_v is None):
        raise AssertionError(
            "bias_k is set but bias_v is None"
            if bias_v is None
            else "bias_v is set but bias_k is None"
        )
    if bias_k is not None and (static_k is not None or static_v is not None):
        raise AssertionError(
            "bias cannot be added to static key."
            if static_k is not None
            else "bias cannot be added to static value."
        )
    if key_padding_mask is not None:
        # PyTorch checks the mask after padding it for bias_k and add_zero_attn.
        grow = (bias_k is not None) + bool(add_zero_attn)
        kpm_shape = (
            tuple(key_padding_mask.shape) if batched else (1,) + tuple(key_padding_mask.shape)
        )
        bsz = query.shape[1] if batched else 1
        src = (static_k.shape[1] if static_k is not None else key.shape[0]) + grow
        if kpm_shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got {kpm_shape[0]}"
            )
        if kpm_shape[1] + grow != src:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src}, but got {kpm_shape[1] + grow}"
            )
    p = float(dropout_p) if training else 0.0
    rng = _random.key_for(None, query) if p > 0 else None
    return _mha_call(
        query,
        key,
        value,
        in_proj_weight,
        in_proj_bias,
        bias_k,
        bias_v,
        out_proj_weight,
        out_proj_bias,
        key_padding_mask,
        attn_mask,
        q_proj_weight,
        k_proj_weight,
        v_proj_weight,
        static_k,
        static_v,
        rng,
        int(num_heads),
        bool(add_zero_attn),
        p,
        bool(need_weights),
        bool(average_attn_weights),
        causal,
    )
