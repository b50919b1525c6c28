"""Distances: `cosine_similarity`, `pairwise_distance`, `pdist`."""

import jax.numpy as jnp
import numpy as np

from ..._dtype import c10_name
from ..._tensor import wrap_dim
from .._kernel_helpers import accumulate
from .._registry import INT_TO_FLOAT, T, op
from .normalization import vector_norm


@op(
    name="nn.functional.cosine_similarity",
    method=False,
    out=False,
    aliases=("cosine_similarity",),
    node="SumBackward1",  # (a composite in PyTorch, ending in a sum)
)
def cosine_similarity(x1: T, x2: T, dim=1, eps=1e-8):
    if not jnp.issubdtype(x1.dtype, jnp.floating):
        raise RuntimeError(
            f"expected common dtype to be floating point, yet common dtype is {c10_name(x1.dtype)}"
        )
    a, b = jnp.broadcast_arrays(accumulate(x1), accumulate(x2))
    d = wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        a, b = a[None], b[None]
    na = jnp.maximum(vector_norm(a, 2.0, d, True), eps)
    nb = jnp.maximum(vector_norm(b, 2.0, d, True), eps)
    return jnp.sum((a / na) * (b / nb), axis=d)


@op(
    name="nn.functional.pairwise_distance",
    method=False,
    out=False,
    promote=INT_TO_FLOAT,
    aliases=("pairwise_distance",),
)
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
