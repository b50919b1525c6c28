"""nn kernels that are not activations or norms: linear, embedding, one_hot, pad, distances,
and scaled dot-product attention."""

import math

import jax
import jax.numpy as jnp
import numpy as np

from ... import _random, _meta
from ..._tensor import wrap, wrap_dim
from ..._dtype import c10_name
from .._registry import INT_TO_FLOAT, NONE, T, TI, broadcast_error, composite, op
from .._kernel_helpers import accumulate
from .activation import need_float, private_op
from .normalization import vector_norm

_HIGHEST = jax.lax.Precision.HIGHEST  # PyTorch does not use TF32 for matmuls by default


def _is_float(a) -> bool:
    return jnp.issubdtype(a.dtype, jnp.floating) or jnp.issubdtype(a.dtype, jnp.complexfloating)


def _mm(a, b):
    """A matmul with PyTorch's accumulation: float32 for half types, exact for integers."""
    if a.dtype in (jnp.float16, jnp.bfloat16):
        return jnp.matmul(a, b, precision=_HIGHEST,
                          preferred_element_type=jnp.float32).astype(a.dtype)
    return jnp.matmul(a, b, precision=_HIGHEST)


# ---------------------------------------------------------------------------
# Linear layers


@op(name="nn.functional.linear", method=False, promote=NONE)
def linear(input: T, weight: T, bias: T = None):
    if input.dtype != weight.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{jnp.dtype(input.dtype).name} != {jnp.dtype(weight.dtype).name}"
                           .replace("float32", "float").replace("float64", "double"))
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.ndim}D")
    k = input.shape[-1] if input.ndim else 1
    if input.ndim == 0 or weight.shape[-1] != k:
        rows = math.prod(input.shape[:-1]) if input.ndim else 1
        w = weight.shape if weight.ndim == 2 else (1,) + weight.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                           f"{w[1]}x{w[0]})")
    out = _mm(input, weight.T)
    if bias is not None:
        if bias.dtype != input.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                               f"{c10_name(bias.dtype)} and {c10_name(input.dtype)}")
        out = out + bias
    return out


@op(name="nn.functional.bilinear", method=False, out=False, aliases=("bilinear",))
def bilinear(input1: T, input2: T, weight: T, bias: T = None):
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    a, b, w = accumulate(input1), accumulate(input2), accumulate(weight)
    out = jnp.einsum("...i,oij,...j->...o", a, w, b, precision=_HIGHEST)
    if bias is not None:
        out = out + accumulate(bias)
    return out


# ---------------------------------------------------------------------------
# Embeddings


def _check_indices(indices, what="embedding"):
    if indices.dtype not in (jnp.int64, jnp.int32):
        name = c10_name(indices.dtype)
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got torch.{name}Tensor "
                           f"instead (while checking arguments for {what})")


def _index_values(t):
    """Concrete index values as numpy, or None when traced (value checks are then skipped)."""
    a = getattr(t, "_array", None)
    return None if a is None or _meta.no_values(a) or a.size == 0 else np.asarray(a)


def _check_embedding_range(weight, indices, *args, inplace=False, out=None):
    # A jax gather would clip an out-of-range index; PyTorch raises.
    v = _index_values(indices)
    if v is not None and v.dtype.kind in "iu" and weight.ndim == 2 and \
            ((v < 0) | (v >= weight.shape[0])).any():
        raise IndexError("index out of range in self")


@op(method=False, out=False, promote=NONE, check=_check_embedding_range)
def embedding(weight: T, indices: TI, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    _check_indices(indices)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    out = jnp.take(weight, indices, axis=0, mode="clip")
    frozen = jax.lax.stop_gradient(out)
    if scale_grad_by_freq:
        # The gradient of each row is divided by how often it occurs in `indices`.
        counts = jnp.zeros((weight.shape[0],), weight.dtype).at[indices].add(1)
        scale = (1 / counts[indices])[..., None].astype(out.dtype)
        out = frozen + (out - frozen) * scale
    if padding_idx is not None and padding_idx >= 0:
        # The padding row receives no gradient.
        out = jnp.where((indices == padding_idx)[..., None], frozen, out)
    return out


def _renorm_kernel(weight: T, indices: TI, max_norm, norm_type):
    """`weight` with each row named in `indices` scaled down to norm at most `max_norm`."""
    used = jnp.zeros((weight.shape[0],), jnp.bool_).at[indices.reshape(-1)].set(True)
    norms = vector_norm(accumulate(weight), float(norm_type), 1, False)
    scale = jnp.where(used & (norms > max_norm), max_norm / (norms + 1e-7), 1.0)
    return (weight * scale[:, None].astype(weight.dtype)).astype(weight.dtype)


_renorm_call, _renorm_inplace = private_op(_renorm_kernel, promote=NONE)


@composite(method=False)
def embedding_renorm_(input, indices, max_norm, norm_type):
    """Matches `torch.embedding_renorm_`: renormalizes the rows of `input` named in `indices`."""
    return _renorm_inplace(input, indices, float(max_norm), float(norm_type))


def _padding_idx(padding_idx, n):
    if padding_idx is None:
        return -1
    if padding_idx > 0 and padding_idx >= n:
        raise AssertionError("Padding_idx must be within num_embeddings")
    if padding_idx < 0:
        if padding_idx < -n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx += n
    return padding_idx


def _renorm_no_grad(weight, indices, max_norm, norm_type):
    # PyTorch renormalizes under no_grad: the write is not part of the graph.
    new = _renorm_call(weight.detach(), indices, float(max_norm), float(norm_type))
    weight._write(new._array)


# Set by jtorch.sparse: `sparse_embedding(weight, indices, padding_idx, scale_grad_by_freq)`,
# the `sparse=True` lookup whose weight gradient is a sparse COO tensor.
sparse_embedding = None


@composite(name="nn.functional.embedding", method=False)
def _f_embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False):
    """Matches `torch.nn.functional.embedding` (`sparse=True`: a sparse weight gradient)."""
    padding_idx = _padding_idx(padding_idx, weight.shape[0])
    if max_norm is not None:
        _renorm_no_grad(weight, input, max_norm, norm_type)
    if sparse and weight.requires_grad and sparse_embedding is not None:
        return sparse_embedding(weight, input, padding_idx, scale_grad_by_freq)
    return embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _embedding_bag_kernel(weight: T, indices: TI, offsets: TI, per_sample_weights: T, mode,
                          include_last_offset, padding_idx, scale_grad_by_freq=False):
    _check_indices(indices, "embedding_bag")
    n = indices.shape[0]
    n_bags = offsets.shape[0] - (1 if include_last_offset else 0)
    # Bag of each index: how many offsets lie at or before its position, minus one.
    pos = jnp.arange(n, dtype=offsets.dtype)
    bag = jnp.searchsorted(offsets, pos, side="right") - 1
    keep = jnp.ones((n,), jnp.bool_) if padding_idx is None else indices != padding_idx
    bag = jnp.where(keep, bag, n_bags)  # out of range: dropped by the segment ops
    rows = jnp.take(weight, indices, axis=0, mode="clip")
    if scale_grad_by_freq:
        # PyTorch's CPU kernel means to divide each row's gradient by the row's count in
        # `indices`, but it looks the count up as counts[sorted_indices[k]] for the k-th
        # distinct row (its index into the sorted indices is off). jtorch reproduces that.
        frozen = jax.lax.stop_gradient(rows)
        counts = jnp.zeros((weight.shape[0],), weight.dtype).at[indices].add(1)
        rank = jnp.cumsum(counts > 0) - 1
        divisor = counts[jnp.sort(indices)[jnp.clip(rank, 0, n - 1)]]
        rows = frozen + (rows - frozen) * (1 / divisor[indices])[:, None].astype(rows.dtype)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    if mode == "max":
        out = jax.ops.segment_max(rows, bag, num_segments=n_bags)
        counts = jax.ops.segment_sum(jnp.ones((n,), jnp.int32), bag, num_segments=n_bags)
        return jnp.where(counts[:, None] > 0, out, jnp.zeros((), out.dtype))
    out = jax.ops.segment_sum(accumulate(rows), bag, num_segments=n_bags)
    if mode == "mean":
        counts = jax.ops.segment_sum(jnp.ones((n,), out.dtype), bag, num_segments=n_bags)
        out = out / jnp.maximum(counts, 1)[:, None]
    return out.astype(weight.dtype)


_embedding_bag_call, _ = private_op(_embedding_bag_kernel, promote=NONE)


@composite(name="nn.functional.embedding_bag", method=False)
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Matches `torch.nn.functional.embedding_bag`."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        b, length = input.shape
        offsets = np.arange(0, b * length, max(length, 1), dtype=np.int64)[:b]
        offsets = wrap(jnp.asarray(offsets))
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _renorm_no_grad(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if padding_idx is not None:
        padding_idx = _padding_idx(padding_idx, weight.shape[0])
    v = _index_values(input)
    if v is not None and v.dtype.kind in "iu":
        bad = np.flatnonzero((v < 0) | (v >= weight.shape[0]))
        if bad.size:
            raise RuntimeError(f"Index {bad[0]} of input takes value {v[bad[0]]} which is not in "
                               f"the valid range [0, {weight.shape[0]})")
    return _embedding_bag_call(weight, input, offsets, per_sample_weights, mode,
                               bool(include_last_offset), padding_idx, bool(scale_grad_by_freq))


@op(name="nn.functional.one_hot", method=False, out=False, promote=NONE, jit=False,
    differentiable=False)
def one_hot(tensor: TI, num_classes=-1):
    if tensor.dtype != jnp.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    concrete = not _meta.no_values(tensor)
    if num_classes == -1:
        if tensor.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        if not concrete:
            raise RuntimeError("one_hot: num_classes must be given when tracing")
        num_classes = int(jnp.max(tensor)) + 1
    if concrete and tensor.size:
        if int(jnp.min(tensor)) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(jnp.max(tensor)) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor[..., None] == jnp.arange(num_classes, dtype=jnp.int64)).astype(jnp.int64)


# ---------------------------------------------------------------------------
# Padding


def _constant_pad(input, pad, value):
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    cfg = [(0, 0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if input.shape[d] + lo + hi < 0:
            raise RuntimeError(f"The input size {input.shape[d]}, plus negative padding {lo} and "
                               f"{hi} resulted in a negative output size, which is invalid. "
                               f"Check dimension {d} of your input.")
        cfg[d] = (lo, hi, 0)
    return jax.lax.pad(input, jnp.asarray(value).astype(input.dtype), cfg)


def _index_pad(input, pad, mode):
    """reflect / replicate / circular padding as a gather along each padded dim."""
    n_dims = len(pad) // 2
    if len(pad) % 2 or n_dims > 3 or input.ndim not in (n_dims + 1, n_dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = input
    for i in range(n_dims):
        d = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = input.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} "
                               f"of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi < 0:
            raise RuntimeError(f"input tensor must fit into output tensor: the padded size "
                               f"{n + lo + hi} of dimension {d} is negative")
        idx = np.arange(n + lo + hi) - lo
        if mode == "replicate":
            idx = np.clip(idx, 0, n - 1)
        elif mode == "reflect":
            idx = np.abs(idx)
            idx = np.where(idx > n - 1, 2 * (n - 1) - idx, idx)
        else:
            # PyTorch first crops by the negative pads, then wraps the cropped range.
            start, m = max(-lo, 0), n - max(-lo, 0) - max(-hi, 0)
            idx = start + np.mod(np.arange(m + max(lo, 0) + max(hi, 0)) - max(lo, 0), m)
        out = jnp.take(out, jnp.asarray(idx, jnp.int32), axis=d)
    return out


@op(name="nn.functional.pad", method=False, out=False, promote=NONE)
def pad(input: T, pad, mode="constant", value=None):
    pad = tuple(int(p) for p in pad)
    if mode == "constant":
        return _constant_pad(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    return _index_pad(input, pad, mode)


@op(method=False, out=False, promote=NONE)
def constant_pad_nd(input: T, pad, value=0):
    return _constant_pad(input, tuple(int(p) for p in pad), value)


# ---------------------------------------------------------------------------
# Distances


@op(name="nn.functional.cosine_similarity", method=False, out=False,
    aliases=("cosine_similarity",))
def cosine_similarity(x1: T, x2: T, dim=1, eps=1e-8):
    if not jnp.issubdtype(x1.dtype, jnp.floating):
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{c10_name(x1.dtype)}")
    a, b = jnp.broadcast_arrays(accumulate(x1), accumulate(x2))
    d = wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        a, b = a[None], b[None]
    na = jnp.maximum(vector_norm(a, 2.0, d, True), eps)
    nb = jnp.maximum(vector_norm(b, 2.0, d, True), eps)
    return jnp.sum((a / na) * (b / nb), axis=d)


@op(name="nn.functional.pairwise_distance", method=False, out=False, promote=INT_TO_FLOAT,
    aliases=("pairwise_distance",))
def pairwise_distance(x1: T, x2: T, p=2.0, eps=1e-6, keepdim=False):
    diff = accumulate(x1 - x2) + eps
    ndim = max(jnp.ndim(x1), jnp.ndim(x2))
    if ndim == 0:
        return vector_norm(diff, float(p), None, False)
    return vector_norm(diff, float(p), ndim - 1, keepdim)


@op(name="nn.functional.pdist", method=False, out=False, aliases=("pdist",))
def pdist(input: T, p=2):
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not jnp.issubdtype(input.dtype, jnp.floating):
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    x = accumulate(input)
    return vector_norm(x[i] - x[j], float(p), 1, False)


# ---------------------------------------------------------------------------
# Attention


def _sdpa_kernel(query: T, key: T, value: T, attn_mask: TI, rng: TI, dropout_p, is_causal,
                 scale, enable_gqa):
    if not (query.dtype == key.dtype == value.dtype):
        names = [jnp.dtype(t.dtype).name.replace("float32", "float").replace("float64", "double")
                 for t in (query, key, value)]
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {names[0]} key.dtype: {names[1]} and value.dtype: "
                           f"{names[2]} instead.")
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
    weights = _safe_softmax(logits)
    if dropout_p > 0:
        weights = _drop(weights, rng, dropout_p)
    out = jnp.matmul(weights, v, precision=_HIGHEST)
    return out.astype(query.dtype)


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


_sdpa_call, _ = private_op(_sdpa_kernel, promote=NONE)


@composite(name="nn.functional.scaled_dot_product_attention", method=False)
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """Matches `torch.nn.functional.scaled_dot_product_attention`."""
    if not enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        err = broadcast_error(tuple(query.shape[:-2]), tuple(key.shape[:-2]))
        if err is not None:
            raise err
    rng = _random.key_for(None) if dropout_p > 0 else None
    return _sdpa_call(query, key, value, attn_mask, rng, float(dropout_p), bool(is_causal),
                      None if scale is None else float(scale), bool(enable_gqa))



def _mha_kernel(query: T, key: T, value: T, in_proj_weight: T, in_proj_bias: T, bias_k: T,
                bias_v: T, out_proj_weight: T, out_proj_bias: T, key_padding_mask: T,
                attn_mask: T, q_proj_weight: T, k_proj_weight: T, v_proj_weight: T, static_k: T,
                static_v: T, rng: TI, num_heads, add_zero_attn, dropout_p, need_weights,
                average_attn_weights, causal):
    """The body of `multi_head_attention_forward` after its argument checks."""
    dt = query.dtype
    batched = query.ndim == 3
    q_in, k_in, v_in = (accumulate(a) if batched else accumulate(a)[:, None]
                        for a in (query, key, value))
    kpm = key_padding_mask
    if kpm is not None and not batched:
        kpm = kpm[None]
    length, n, e = q_in.shape
    h, hd = num_heads, e // num_heads

    def canonical(m):  # a bool mask marks the positions to leave out
        if m is None:
            return None
        return jnp.where(m, -jnp.inf, 0.0).astype(q_in.dtype) if m.dtype == jnp.bool_ else \
            accumulate(m)

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
    k = accumulate(static_k) if static_k is not None else \
        k.reshape(k.shape[0], n * h, hd).transpose(1, 0, 2)
    v = accumulate(static_v) if static_v is not None else \
        v.reshape(v.shape[0], n * h, hd).transpose(1, 0, 2)
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
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                                 f"instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                                 f"instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                     f"instead")
            if attn_mask.ndim == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


@composite(name="nn.functional.multi_head_attention_forward", method=False)
def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Matches `torch.nn.functional.multi_head_attention_forward`."""
    batched = _mha_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    tgt_len = query.shape[0]
    embed_dim = query.shape[-1]
    src_len = key.shape[0]
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    causal = False
    if is_causal and key_padding_mask is None and not need_weights:
        # The hint replaces the mask with the causal one.
        attn_mask, causal = None, True
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    if (embed_dim // num_heads) * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight is None")
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q_proj_weight = k_proj_weight = v_proj_weight = None
    if attn_mask is not None:
        bsz = query.shape[1] if batched else 1
        if attn_mask.ndim == 2 and tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        if attn_mask.ndim == 3 and tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_v is None else
                             "bias_v is set but bias_k is None")
    if bias_k is not None and (static_k is not None or static_v is not None):
        raise AssertionError("bias cannot be added to static key." if static_k is not None else
                             "bias cannot be added to static value.")
    if key_padding_mask is not None:
        # PyTorch checks the mask after padding it for bias_k and add_zero_attn.
        grow = (bias_k is not None) + bool(add_zero_attn)
        kpm_shape = tuple(key_padding_mask.shape) if batched else \
            (1,) + tuple(key_padding_mask.shape)
        bsz = query.shape[1] if batched else 1
        src = (static_k.shape[1] if static_k is not None else key.shape[0]) + grow
        if kpm_shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{kpm_shape[0]}")
        if kpm_shape[1] + grow != src:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src}, but got "
                                 f"{kpm_shape[1] + grow}")
    p = float(dropout_p) if training else 0.0
    rng = _random.key_for(None) if p > 0 else None
    return _mha_call(query, key, value, in_proj_weight, in_proj_bias, bias_k, bias_v,
                     out_proj_weight, out_proj_bias, key_padding_mask, attn_mask, q_proj_weight,
                     k_proj_weight, v_proj_weight, static_k, static_v, rng, int(num_heads),
                     bool(add_zero_attn), p, bool(need_weights), bool(average_attn_weights),
                     causal)
