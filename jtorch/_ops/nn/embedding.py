"""Embeddings: `nn.functional.embedding` (with `max_norm` renormalization and the sparse
gradient hook), `embedding_bag` and `one_hot`."""

import jax
import jax.numpy as jnp
import numpy as np

from ... import _meta
from ..._dtype import c10_name
from ..._tensor import wrap
from .._kernel_helpers import accumulate, private_op
from .._registry import NONE, TI, T, composite, op
from .normalization import vector_norm


def _check_indices(indices, what="embedding"):
    if indices.dtype not in (jnp.int64, jnp.int32):
        name = c10_name(indices.dtype)
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the "
            f"following scalar types: Long, Int; but got torch.{name}Tensor "
            f"instead (while checking arguments for {what})"
        )


def _index_values(t):
    """Concrete index values as numpy, or None when traced (value checks are then skipped)."""
    a = getattr(t, "_array", None)
    return None if a is None or _meta.no_values(a) or a.size == 0 else np.asarray(a)


def _check_embedding_range(weight, indices, *args, inplace=False, out=None):
    # A jax gather would clip an out-of-range index; PyTorch raises.
    v = _index_values(indices)
    if (
        v is not None
        and v.dtype.kind in "iu"
        and weight.ndim == 2
        and ((v < 0) | (v >= weight.shape[0])).any()
    ):
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
def _f_embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """Matches `torch.nn.functional.embedding` (`sparse=True`: a sparse weight gradient)."""
    padding_idx = _padding_idx(padding_idx, weight.shape[0])
    if max_norm is not None:
        _renorm_no_grad(weight, input, max_norm, norm_type)
    if sparse and weight.requires_grad and sparse_embedding is not None:
        return sparse_embedding(weight, input, padding_idx, scale_grad_by_freq)
    return embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _embedding_bag_kernel(
    weight: T,
    indices: TI,
    offsets: TI,
    per_sample_weights: T,
    mode,
    include_last_offset,
    padding_idx,
    scale_grad_by_freq=False,
):
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


_embedding_bag_call, _ = private_op(
    _embedding_bag_kernel, promote=NONE, node="EmbeddingBagBackward0"
)


@composite(name="nn.functional.embedding_bag", method=False)
def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """Matches `torch.nn.functional.embedding_bag`."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
            f"not None, then it must have the same shape as the input "
            f"({input.shape})"
        )
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                f"if input is 2D, then offsets has to be None, as input is treated "
                f"is a mini-batch of fixed length sequences. However, found offsets "
                f"of type {type(offsets)}"
            )
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
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _renorm_no_grad(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. "
            f"per_sample_weights is only supported for mode='sum' (got "
            f"mode='{mode}'). Please open a feature request on GitHub."
        )
    if padding_idx is not None:
        padding_idx = _padding_idx(padding_idx, weight.shape[0])
    v = _index_values(input)
    if v is not None and v.dtype.kind in "iu":
        bad = np.flatnonzero((v < 0) | (v >= weight.shape[0]))
        if bad.size:
            raise RuntimeError(
                f"Index {bad[0]} of input takes value {v[bad[0]]} which is not in "
                f"the valid range [0, {weight.shape[0]})"
            )
    return _embedding_bag_call(
        weight,
        input,
        offsets,
        per_sample_weights,
        mode,
        bool(include_last_offset),
        padding_idx,
        bool(scale_grad_by_freq),
    )


@op(
    name="nn.functional.one_hot",
    method=False,
    out=False,
    promote=NONE,
    jit=False,
    differentiable=False,
)
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
