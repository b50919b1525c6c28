"""Sparse gradients: `nn.Embedding(sparse=True)`'s weight gradient, and how the autograd
engine adds, accumulates and (for any node but a leaf's) densifies such gradients.

PyTorch's embedding backward with `sparse=True` gives the weight a COO gradient whose
indices are the looked-up rows in order (uncoalesced) and whose values are the output
gradient's rows. Here a custom autograd Function returns exactly that tensor; the engine
hands it to AccumulateGrad as it is (`_edges.sparse_grads`, installed with the first such
gradient, so dense backward passes never check for one).
"""

from __future__ import annotations

from .._ops.nn import embedding as nn_embedding
from .._tensor import Tensor
from ..autograd import _edges
from ..autograd.function import Function
from . import _math as M
from ._tensor import SparseTensor


class _SparseGrads:
    """The engine's view of sparse gradients (see `_edges.sparse_grads`)."""

    @staticmethod
    def is_sparse(g) -> bool:
        return isinstance(g, SparseTensor)

    @staticmethod
    def add(a, b):
        sa, sb = isinstance(a, SparseTensor), isinstance(b, SparseTensor)
        if sa and sb:
            return M.add_sparse(a, b)
        if sa or sb:
            s, d = (a, b) if sa else (b, a)
            dense = d._array if isinstance(d, Tensor) else d
            return dense + M.to_dense(s).detach()._array
        return a + b

    @staticmethod
    def densify(grads):
        if not any(isinstance(g, SparseTensor) for g in grads):
            return grads
        return [M.to_dense(g)._array if isinstance(g, SparseTensor) else g for g in grads]

    @staticmethod
    def accumulate(t: Tensor, g: SparseTensor) -> None:
        """AccumulateGrad for a sparse gradient: kept sparse, added sparse + sparse (PyTorch's
        merge), or densified into a dense `.grad`."""
        g = g.detach()
        if g.dtype is not t.dtype:
            g = g.to(t.dtype)
        old = t._grad
        if old is None:
            t._grad = g
        elif isinstance(old, SparseTensor):
            t._grad = M.add_sparse(old, g)
        else:
            old._write(old._array + M.to_dense(g)._array)
        m = t._grad_state
        if m is not None and m.post_hooks:
            for hook in list(m.post_hooks.values()):
                hook(t)


class _EmbeddingSparse(Function):
    """`F.embedding(..., sparse=True)` with the weight's gradient as PyTorch's COO tensor."""

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.indices = indices
        ctx.padding_idx = padding_idx
        ctx.scale = scale_grad_by_freq
        ctx.weight_shape = tuple(weight.shape)
        return nn_embedding.embedding(weight, indices, padding_idx, scale_grad_by_freq, False)

    @staticmethod
    def backward(ctx, grad):
        if ctx.scale:
            raise RuntimeError(
                "embedding_backward: scale_grad_by_freq not supported with sparse gradients"
            )
        indices, dim = ctx.indices.reshape(-1), grad.shape[-1]
        values = grad.reshape(-1, dim)
        if ctx.padding_idx is not None and ctx.padding_idx >= 0:
            keep = indices != ctx.padding_idx
            indices, values = indices[keep], values[keep]
        index = indices.reshape(1, -1).to(M._dtype.int64)
        _edges.sparse_grads = _ENGINE
        return (
            SparseTensor._coo(index, values, ctx.weight_shape, index.shape[1] < 2),
            None,
            None,
            None,
        )


_ENGINE = _SparseGrads()


def embedding(weight, indices, padding_idx, scale_grad_by_freq):
    """The `sparse=True` path of `F.embedding` (`nn_embedding.sparse_embedding`)."""
    return _EmbeddingSparse.apply(weight, indices, padding_idx, scale_grad_by_freq)


nn_embedding.sparse_embedding = embedding
