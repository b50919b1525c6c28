"""Registry ops called with a sparse argument: PyTorch's sparse kernels, or its error.

The op registry hands a call here when a sparse tensor's `_array` was read
(`_dispatch.sparse_hook`). One table maps op names to their sparse forms; an op that is
not in it raises PyTorch's NotImplementedError for the SparseCPU backend. In-place calls
update the sparse tensor's pattern and values (or, for `dense.add_(sparse)`, the dense
tensor); `out=` calls write a dense result.
"""

from __future__ import annotations

import numbers

from .._layout import sparse_coo
from .._ops import _registry
from .._tensor import SparseOperand, Tensor
from . import _math as M
from ._tensor import SparseTensor, _not_implemented

# Zero-preserving pointwise ops PyTorch runs on sparse COO values (it coalesces first).
_UNARY = (
    "abs",
    "sqrt",
    "sin",
    "tan",
    "tanh",
    "asin",
    "atan",
    "sinh",
    "asinh",
    "atanh",
    "relu",
    "log1p",
    "expm1",
    "sign",
    "sgn",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "erf",
    "erfinv",
    "deg2rad",
    "rad2deg",
    "isnan",
    "isinf",
    "nan_to_num",
    "signbit",
    "square",
    "isposinf",
    "isneginf",
    "arcsin",
    "arctan",
    "arcsinh",
    "arctanh",
    "absolute",
    "fix",
)
_NODE = {
    "abs": "AbsBackward0",
    "sqrt": "SqrtBackward0",
    "relu": "ReluBackward0",
    "square": "PowBackward0",
    "tanh": "TanhBackward0",
    "sin": "SinBackward0",
}


def _sparse(x) -> bool:
    return isinstance(x, SparseTensor)


def _scalar(x) -> bool:
    return isinstance(x, numbers.Number) or (
        isinstance(x, Tensor) and not _sparse(x) and x.ndim == 0
    )


def _add(kw, sign=1):
    a, b, alpha = kw["input"], kw["other"], kw.get("alpha", 1) * sign
    if _sparse(a) and _sparse(b):
        return M.add_sparse(a, b, alpha)
    if _sparse(a):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    return M.add_dense_sparse(a, b, alpha)


def _mul(kw):
    a, b = kw["input"], kw["other"]
    if _sparse(a) and _sparse(b):
        return M.mul_sparse(a, b)
    s, other = (a, b) if _sparse(a) else (b, a)
    if isinstance(other, numbers.Number):
        return M.scale(s, other, "MulBackward0")
    return M.mul_dense(s, other)


def _div(kw):
    a, b = kw["input"], kw["other"]
    if not _sparse(a) or not _scalar(b):
        shape = list(b.shape) if isinstance(b, Tensor) else []
        raise RuntimeError(
            f"Sparse division requires a scalar or zero-dim dense tensor "
            f"divisor (got shape {shape} for divisor)"
        )
    mode = kw.get("rounding_mode")
    vals = a._vals / b if mode is None else a._vals.div(b, rounding_mode=mode)
    return a._like(vals, "DivBackward0")


def _pow(kw):
    a, p = kw["input"], kw["exponent"]
    if not _sparse(a) or not _scalar(p):
        raise NotImplementedError(_not_implemented("pow.Tensor_Tensor", _first_sparse(kw)))
    return M.map_values(a, lambda v: v**p, "PowBackward0")


def _matmul(kw, names=("input", "other")):
    a, b = kw[names[0]], kw[names[1]]
    return M.matmul(a, b)


def _addmm(kw):
    inp, m1, m2 = kw["input"], kw["mat1"], kw["mat2"]
    beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
    prod = M.matmul(m1, m2)
    if _sparse(prod):
        prod = M.to_dense(prod)
    if _sparse(inp):
        inp = M.to_dense(inp)
    return (inp if beta == 1 else inp * beta) + (prod if alpha == 1 else prod * alpha)


def _sum(kw):
    s = kw["input"]
    return M.sum_(s, kw.get("dim"), kw.get("dtype"), kw.get("keepdim", False))


def _transpose(kw):
    return M.transpose(kw["input"], kw["dim0"], kw["dim1"])


def _norm(kw):
    s = M.coalesce(M.as_coo(kw["input"]))
    p = kw.get("p", "fro")
    if kw.get("dim") is not None:
        raise NotImplementedError(_not_implemented("norm.ScalarOpt_dim", kw["input"]))
    return s._vals.norm(2 if p == "fro" else p)


def _clone(kw):
    s = kw["input"]
    return s._copy_with(s._vals.clone())


def _zeros_like(kw):
    return M.empty_like(kw["input"], kw.get("dtype"))


def _select(kw):
    s, dim, index = M.as_coo(kw["input"]), kw["dim"], kw["index"]
    from .._tensor import wrap_dim

    dim = wrap_dim(dim, s.ndim)
    if dim >= s.sparse_dim():
        raise NotImplementedError(_not_implemented("select.int", s))
    n = s._size[dim]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(s._size)} at dimension {dim}"
        )
    index %= n
    idx = M.host(s._idx)
    keep = (idx[dim] == index).nonzero()[0]
    rows = [d for d in range(s.sparse_dim()) if d != dim]
    pos = M.long_tensor(keep, s._idx)
    new_idx = s._idx[rows][:, pos] if rows else s._idx[:0, pos]
    size = s._size[:dim] + s._size[dim + 1 :]
    vals = s._vals.index_select(0, pos)
    if not rows:  # every sparse dim selected away: the (summed) dense values
        return vals.sum(0)
    return SparseTensor._coo(new_idx, vals, size, s._coal, "SelectBackward0")


def _index_select(kw):
    s, dim, index = M.as_coo(kw["input"]), kw["dim"], kw["index"]
    from .._tensor import wrap_dim

    dim = wrap_dim(dim, s.ndim)
    if dim >= s.sparse_dim():
        raise NotImplementedError(_not_implemented("index_select", s))
    idx, want = M.host(s._idx), M.host(index).reshape(-1)
    src, dst = [], []
    for j, w in enumerate(want.tolist()):  # PyTorch's order: by output position
        hits = (idx[dim] == w).nonzero()[0]
        src.extend(hits.tolist())
        dst.extend([j] * len(hits))
    pos = M.long_tensor(src, s._idx)
    new_idx = s._idx[:, pos].clone()
    new_idx[dim] = M.long_tensor(dst, s._idx)
    size = list(s._size)
    size[dim] = len(want)
    return SparseTensor._coo(
        new_idx, s._vals.index_select(0, pos), size, False, "IndexSelectBackward0"
    )


def _cat(kw):
    ts, dim = kw["tensors"], kw.get("dim", 0)
    if not all(_sparse(t) for t in ts):
        raise RuntimeError("cat(): all input tensors must be sparse (or all dense)")
    ts = [M.as_coo(t) for t in ts]
    from .._tensor import wrap_dim

    dim = wrap_dim(dim, ts[0].ndim)
    if dim >= ts[0].sparse_dim():
        raise NotImplementedError(_not_implemented("cat", ts[0]))
    parts, offset = [], 0
    for t in ts:
        idx = t._idx.clone()
        if offset:
            idx[dim] = idx[dim] + offset
        parts.append(idx)
        offset += t._size[dim]
    size = list(ts[0]._size)
    size[dim] = offset
    return SparseTensor._coo(
        M.T.cat(parts, 1), M.T.cat([t._vals for t in ts]), size, False, "CatBackward0"
    )


def _copy(kw):
    dst, src = kw["self"], kw["src"]
    if not (_sparse(dst) and _sparse(src)):
        raise RuntimeError(
            "copy_() between dense and sparse Tensors is not implemented! "
            "Found self type = {} and src type = {}".format(_type_str(dst), _type_str(src))
        )
    return src._copy_with(src._vals.clone().to(dst.dtype))


def _type_str(t) -> str:
    return t.type() if _sparse(t) else "torch." + type(t).__name__


def _unary(name):
    node = _NODE.get(name, name.capitalize() + "Backward0")
    return lambda kw: M.map_values(kw["input"], lambda v: getattr(v, name)(), node)


def _neg(kw):
    s = kw["input"]
    return s._like(-s._vals, "NegBackward0")


def _positive(kw):
    return kw["input"]


TABLE = {
    "add": _add,
    "sub": lambda kw: _add(kw, -1),
    "subtract": lambda kw: _add(kw, -1),
    "mul": _mul,
    "multiply": _mul,
    "div": _div,
    "true_divide": _div,
    "divide": _div,
    "pow": _pow,
    "neg": _neg,
    "negative": _neg,
    "positive": _positive,
    "mm": lambda kw: _matmul(kw, ("input", "mat2")),
    "matmul": _matmul,
    "mv": lambda kw: _matmul(kw, ("input", "vec")),
    "addmm": _addmm,
    "sum": _sum,
    "t": lambda kw: M.transpose(kw["input"], 0, 1),
    "transpose": _transpose,
    "swapaxes": lambda kw: M.transpose(kw["input"], kw["axis0"], kw["axis1"]),
    "swapdims": _transpose,
    "norm": _norm,
    "clone": _clone,
    "zeros_like": _zeros_like,
    "select": _select,
    "index_select": _index_select,
    "cat": _cat,
    "concat": _cat,
    "concatenate": _cat,
    "copy_": _copy,
}
for _name in _UNARY:
    TABLE.setdefault(_name, _unary(_name))


def _first_sparse(kw):
    for v in kw.values():
        if _sparse(v):
            return v
        if isinstance(v, (list, tuple)):
            for x in v:
                if _sparse(x):
                    return x
    return None


# The ATen overload PyTorch names in its error, where it is not the op's own name.
_ATEN = {
    "softmax": "_softmax",
    "log_softmax": "_log_softmax",
    "mean": "mean.dim",
    "amax": "amax",
    "max": "max",
    "min": "min",
}
_SCALAR_OR_TENSOR = (
    "eq",
    "ne",
    "gt",
    "lt",
    "ge",
    "le",
    "greater",
    "less",
    "greater_equal",
    "less_equal",
    "not_equal",
    "fmod",
    "remainder",
    "maximum",
    "minimum",
)


def _aten_name(name: str, kw: dict) -> str:
    if name in _SCALAR_OR_TENSOR:
        other = kw.get("other")
        return f"{name}.{'Scalar' if isinstance(other, numbers.Number) else 'Tensor'}"
    return _ATEN.get(name, name)


def dispatch(op, args: tuple, mode: str, out):
    """`_dispatch.sparse_hook`: runs `op` on arguments of which one is sparse."""
    kw = dict(zip([p.name for p in op.params], args))
    if mode == "inplace" and "self" not in kw and op.params:
        kw.setdefault("input", args[0])
    first = _first_sparse(kw)
    if first is None:
        raise SparseOperand(sparse_coo)  # not from this call's arguments: not ours
    handler = TABLE.get(op.name)
    if handler is None:
        raise NotImplementedError(_not_implemented(_aten_name(op.name, kw), first))
    result = handler(kw)
    if mode == "inplace":
        target = args[0]
        if _sparse(target):
            if not _sparse(result):
                raise RuntimeError(
                    f"{op.name}_(): the result of an in-place op on a sparse tensor must be sparse"
                )
            target._assign(
                result
                if result.dtype is target.dtype
                else result._like(result._vals.to(target.dtype), result._node)
            )
            return target
        _registry.write_inplace(target, result if not _sparse(result) else M.to_dense(result))
        return target
    if mode == "out" and out is not None:
        if _sparse(result):
            raise RuntimeError("jtorch does not write sparse results into out= tensors")
        return _registry.write_out(result, out)
    return result
