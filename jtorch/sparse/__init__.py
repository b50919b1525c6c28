"""`torch.sparse` and the sparse layouts: COO and CSR tensors (see `_tensor.py` for the
representation and why it is not `jax.experimental.sparse`).

This package adds, at import: the `torch.sparse` functions, `torch.sparse_coo_tensor`,
`torch.sparse_csr_tensor` and `torch.spmm`, the sparse conversions on dense tensors
(`to_sparse`, `to_sparse_csr`, `sparse_mask`, ...), and the registry hook that runs
registry ops called with a sparse argument.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import _device, _dtype
from .._layout import sparse_coo, sparse_csr
from .._ops import _dispatch as _op_dispatch
from .._ops import _registry
from .._ops.conversion import _parse_to
from .._tensor import Tensor
from . import _dispatch, _grad, _tensor  # noqa: F401  (_grad: sparse embedding gradients)
from . import _math as M
from ._tensor import SparseTensor, _impl_name, _layout_name, _not_implemented, warn_once

__all__ = [
    "addmm",
    "check_sparse_tensor_invariants",
    "mm",
    "sum",
    "softmax",
    "log_softmax",
    "sampled_addmm",
    "spsolve",
    "as_sparse_gradcheck",
    "to_sparse_semi_structured",
    "SparseSemiStructuredTensor",
]

_op_dispatch.sparse_hook = _dispatch.dispatch

_INVARIANTS = {"enabled": False, "explicit": False}
_NO_CHECKS = (
    "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) "
    "will occur when operating on a sparse tensor which violates the invariants, but "
    "checks incur performance overhead. To silence this warning, explicitly opt in "
    "or out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance. "
)
_CSR_BETA = (
    "Sparse CSR tensor support is in beta state. If you miss a functionality in the "
    "sparse tensor support, please submit a feature request to "
    "https://github.com/pytorch/pytorch/issues."
)


# ---------------------------------------------------------------------------
# Construction


def _as_tensor(data, dtype=None, device=None) -> Tensor:
    from .._ops.creation import tensor as _tensor

    if isinstance(data, Tensor):
        out = data
        if dtype is not None and out.dtype is not dtype:
            out = out.to(dtype)
        return out if device is None else out.to(device)
    return _tensor(data, dtype=dtype, device=device)


def _checks_on(check_invariants) -> bool:
    if check_invariants is None:
        if not _INVARIANTS["explicit"]:
            warn_once("invariants", _NO_CHECKS)
        return _INVARIANTS["enabled"]
    return bool(check_invariants)


def sparse_coo_tensor(
    indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
    is_coalesced=None,
) -> Tensor:
    """Matches `torch.sparse_coo_tensor`: indices and values are shared, not copied."""
    values = _as_tensor(values, dtype, device)
    indices = _as_tensor(indices, device=values.device if device is None else device)
    if indices.dtype is not _dtype.int64:
        indices = indices.to(_dtype.int64)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    sd, nnz = indices.shape
    if values.ndim == 0:
        values = values.reshape(1)
    if values.shape[0] != nnz:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: "
            f"{nnz}, nnz from values: {values.shape[0]}"
        )
    if size is None:
        idx = M.host(indices)
        size = tuple(int(n) for n in (idx.max(1) + 1 if nnz else np.zeros(sd, np.int64))) + tuple(
            values.shape[1:]
        )
    size = tuple(int(n) for n in size)
    if len(size) != sd + values.ndim - 1:
        raise RuntimeError(
            f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
            f"= {len(size)}, sparse_dim = {sd}, dense_dim = {values.ndim - 1}"
        )
    if _checks_on(check_invariants) and nnz:
        idx = M.host(indices)
        for d in range(sd):
            lo, hi = int(idx[d].min()), int(idx[d].max())
            if lo < 0:
                raise RuntimeError(f"found negative index {lo} for dim {d}")
            if hi >= size[d]:
                raise RuntimeError(
                    f"size is inconsistent with indices: for dim {d}, size is "
                    f"{size[d]} but found index {hi}"
                )
    if values.requires_grad:
        vals = values.view_as(values)  # a node of its own: the sparse tensor is no leaf
    else:
        vals = values.detach()
        if requires_grad:
            vals.requires_grad_()
    # one entry or none is coalesced by definition (PyTorch sets the flag then)
    return SparseTensor._coo(
        indices.detach(),
        vals,
        size,
        bool(is_coalesced) or nnz < 2,
        "SparseCooTensorWithDimsAndTensorsBackward0",
    )


def sparse_csr_tensor(
    crow_indices,
    col_indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
) -> Tensor:
    """Matches `torch.sparse_csr_tensor` (2-D, no batch or dense dims)."""
    warn_once("csr", _CSR_BETA)
    values = _as_tensor(values, dtype, device)
    crow = _as_tensor(crow_indices, device=values.device)
    col = _as_tensor(col_indices, device=values.device)
    if crow.ndim != 1 or col.ndim != 1 or values.ndim != 1:
        raise RuntimeError(
            "jtorch supports 2-D sparse CSR tensors only (1-D crow_indices, col_indices and values)"
        )
    if crow.dtype is not col.dtype:
        raise RuntimeError(
            f"compressed_indices and plain_indices must have the same dtype, "
            f"bot got {_dtype.c10_name(crow.dtype)} and "
            f"{_dtype.c10_name(col.dtype)}, respectively"
        )
    if col.shape[0] != values.shape[0]:
        raise RuntimeError(
            f"plain_indices and values must have the same number of elements, "
            f"but got {col.shape[0]} and {values.shape[0]}, respectively"
        )
    if size is None:
        c = M.host(col)
        size = (crow.shape[0] - 1, int(c.max()) + 1 if c.size else 0)
    size = tuple(int(n) for n in size)
    if _checks_on(check_invariants):
        if crow.shape[0] != size[0] + 1:
            raise RuntimeError("`crow_indices.size(-1) == nrows + 1` is not satisfied.")
        cr, c = M.host(crow), M.host(col)
        if cr[0] != 0 or cr[-1] != c.size or np.any(np.diff(cr) < 0):
            raise RuntimeError(
                "`crow_indices[..., 0] == 0` and `crow_indices[..., -1] == nnz` "
                "and crow_indices must be non-decreasing"
            )
        if c.size and (c.min() < 0 or c.max() >= size[1]):
            raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")
    vals = values.view_as(values) if values.requires_grad else values.detach()
    if requires_grad and not values.requires_grad:
        vals.requires_grad_()
    return SparseTensor._csr(
        crow.to(_dtype.int64).detach(),
        col.to(_dtype.int64).detach(),
        vals,
        size,
        "SparseCsrTensorBackward0",
    )


def sparse_compressed_tensor(
    compressed_indices,
    plain_indices,
    values,
    size=None,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
) -> Tensor:
    """Matches `torch.sparse_compressed_tensor` for `layout=torch.sparse_csr`."""
    if layout is not sparse_csr:
        raise NotImplementedError(
            f"jtorch has the sparse_coo and sparse_csr layouts only (got {layout})"
        )
    return sparse_csr_tensor(
        compressed_indices,
        plain_indices,
        values,
        size,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        check_invariants=check_invariants,
    )


def _rebuild_sparse_tensor(layout, data):
    """`torch._utils._rebuild_sparse_tensor`: what PyTorch's pickles of sparse tensors call."""
    if layout is sparse_coo:
        indices, values, size = data[:3]
        coalesced = data[3] if len(data) > 3 else None
        return sparse_coo_tensor(
            indices, values, size, check_invariants=False, is_coalesced=coalesced
        )
    if layout is sparse_csr:
        crow, col, values, size = data
        return sparse_csr_tensor(crow, col, values, size, check_invariants=False)
    raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")


_tensor.rebuild_sparse_tensor = _rebuild_sparse_tensor


# ---------------------------------------------------------------------------
# torch.sparse


def mm(mat1, mat2, reduce: str | None = None) -> Tensor:
    """Matches `torch.sparse.mm`: sparse @ dense (dense result) or sparse @ sparse; with
    `reduce` ("sum", "mean", "amax", "amin") a CSR `mat1`'s row entries are reduced so."""
    if reduce is not None:
        if not isinstance(mat1, SparseTensor) or mat1.layout is not sparse_csr:
            raise RuntimeError("sparse.mm with reduce: expected mat1 to be a sparse CSR tensor")
        return M.sparse_dense_mm(mat1, mat2, reduce)
    if not isinstance(mat1, SparseTensor) and not isinstance(mat2, SparseTensor):
        return mat1.mm(mat2)
    return M.matmul(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0) -> Tensor:
    """Matches `torch.sparse.addmm`: `beta * mat + alpha * (mat1 @ mat2)`."""
    return _dispatch._addmm(dict(input=mat, mat1=mat1, mat2=mat2, beta=beta, alpha=alpha))


def sum(input, dim=None, dtype=None) -> Tensor:  # noqa: A001 - torch.sparse.sum
    """Matches `torch.sparse.sum`."""
    if not isinstance(input, SparseTensor):
        return input.sum(dim, dtype=dtype) if dim is not None else input.sum(dtype=dtype)
    return M.sum_(input, dim, dtype)


def softmax(input, dim: int, *, dtype=None) -> Tensor:
    """Matches `torch.sparse.softmax`."""
    return M.softmax(_need_sparse(input, "softmax"), dim, False, dtype)


def log_softmax(input, dim: int, *, dtype=None) -> Tensor:
    """Matches `torch.sparse.log_softmax`."""
    return M.softmax(_need_sparse(input, "log_softmax"), dim, True, dtype)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None) -> Tensor:
    """Matches `torch.sparse.sampled_addmm`: `beta * input + alpha * (mat1 @ mat2)` at the
    entries of the sparse CSR `input`."""
    if not isinstance(input, SparseTensor) or input.layout is not sparse_csr:
        raise RuntimeError("sampled_addmm: Expected input to have sparse_csr layout")
    c = M.csr_to_coo(input)
    rows, cols = c._idx[0], c._idx[1]
    prod = (mat1.index_select(0, rows) * mat2.t().index_select(0, cols)).sum(-1)
    vals = input._vals * beta + prod * alpha
    return input._like(vals, "SparseSampledAddmmBackward0")


def spsolve(A, B, *, left=True):
    raise NotImplementedError(
        "torch.sparse.spsolve needs a sparse direct solver (cuDSS), "
        "which jtorch does not have; use torch.linalg.solve on "
        "A.to_dense()"
    )


def as_sparse_gradcheck(gradcheck):
    """Matches `torch.sparse.as_sparse_gradcheck`: jtorch's gradcheck as it is."""
    return gradcheck


def to_sparse_semi_structured(original, transposed=False):
    raise NotImplementedError(
        "semi-structured (2:4) sparsity needs NVIDIA's CUTLASS or "
        "cuSPARSELt kernels, which jtorch does not have"
    )


class SparseSemiStructuredTensor:
    """Matches the name `torch.sparse.SparseSemiStructuredTensor` (not constructible here)."""

    def __init__(self, *args, **kwargs):
        to_sparse_semi_structured(None)


def _need_sparse(t, what: str) -> SparseTensor:
    if not isinstance(t, SparseTensor):
        raise NotImplementedError(
            f"Could not run 'aten::_sparse_{what}' with arguments from the 'CPU' backend."
        )
    return t


class check_sparse_tensor_invariants(contextlib.ContextDecorator):
    """Matches `torch.sparse.check_sparse_tensor_invariants`: a context manager and
    decorator that turns the invariant checks of the sparse constructors on."""

    @staticmethod
    def is_enabled() -> bool:
        return _INVARIANTS["enabled"]

    @staticmethod
    def enable() -> None:
        _INVARIANTS.update(enabled=True, explicit=True)

    @staticmethod
    def disable() -> None:
        _INVARIANTS.update(enabled=False, explicit=True)

    def __init__(self, enable: bool = True):
        self.state = enable
        self.saved = None

    def __enter__(self):
        if self.saved is not None:
            raise RuntimeError(
                "This context manager instance is already activated. Use a "
                "different context manager instance for context nesting."
            )
        self.saved = dict(_INVARIANTS)
        _INVARIANTS.update(enabled=self.state, explicit=True)
        return self

    def __exit__(self, *exc):
        _INVARIANTS.update(self.saved)
        self.saved = None


def spmm(input, mat2) -> Tensor:
    """Matches `torch.spmm`: `torch.mm` that also takes a sparse first operand."""
    if isinstance(input, SparseTensor) or isinstance(mat2, SparseTensor):
        return M.matmul(input, mat2)
    return input.mm(mat2)


def smm(input, mat) -> Tensor:
    """Matches `torch.smm`: sparse @ dense as a (coalesced) sparse result."""
    out = M.dense_to_coo(M.sparse_dense_mm(input, mat))
    out._coal = False  # PyTorch does not mark the product coalesced
    return out


def hspmm(mat1, mat2) -> Tensor:
    """Matches `torch.hspmm`: sparse @ dense as a hybrid COO tensor (rows sparse)."""
    out = M.dense_to_coo(M.sparse_dense_mm(mat1, mat2), 1)
    out._coal = False
    return out


def dsmm(input, mat2) -> Tensor:
    """Matches `torch.dsmm`: sparse @ dense, a dense result."""
    return M.sparse_dense_mm(input, mat2)


hsmm = hspmm  # PyTorch's other name of the hybrid product


def _no_layout_ctor(name, layout):
    def ctor(*args, **kwargs):
        raise NotImplementedError(
            f"torch.{name}: jtorch has the sparse_coo and sparse_csr "
            f"layouts, not {layout}; build a CSR tensor "
            "(torch.sparse_csr_tensor) or a COO one instead"
        )

    ctor.__name__ = ctor.__qualname__ = name
    return ctor


sparse_csc_tensor = _no_layout_ctor("sparse_csc_tensor", "torch.sparse_csc")
sparse_bsr_tensor = _no_layout_ctor("sparse_bsr_tensor", "torch.sparse_bsr")
sparse_bsc_tensor = _no_layout_ctor("sparse_bsc_tensor", "torch.sparse_bsc")


class _SemiStructured:
    """`torch.sparse.SparseSemiStructuredTensor*`: 2:4 sparsity needs NVIDIA kernels."""

    def __init__(self, *args, **kwargs):
        to_sparse_semi_structured(None)


SparseSemiStructuredTensorCUTLASS = type(
    "SparseSemiStructuredTensorCUTLASS", (_SemiStructured,), {"__module__": "torch.sparse"}
)
SparseSemiStructuredTensorCUSPARSELT = type(
    "SparseSemiStructuredTensorCUSPARSELT", (_SemiStructured,), {"__module__": "torch.sparse"}
)


# ---------------------------------------------------------------------------
# The `*_like` factories: a sparse input gives an empty sparse tensor, or PyTorch's error


def _sparse_like(factory, aten):
    def like(input, *args, **kwargs):
        if isinstance(input, SparseTensor):
            if aten is None:
                return M.empty_like(input, kwargs.get("dtype"))
            raise NotImplementedError(_not_implemented(aten, input))
        return factory(input, *args, **kwargs)

    like.__name__ = like.__qualname__ = factory.__name__
    like.__doc__ = factory.__doc__
    like.__module__ = "jtorch"
    return like


_NS = _registry.NAMESPACES[""]
zeros_like = _sparse_like(_NS["zeros_like"], None)
empty_like = _sparse_like(_NS["empty_like"], None)
ones_like = _sparse_like(_NS["ones_like"], "fill_.Scalar")
full_like = _sparse_like(_NS["full_like"], "fill_.Scalar")
rand_like = _sparse_like(_NS["rand_like"], "uniform_")
randn_like = _sparse_like(_NS["randn_like"], "normal_")
_NS.update(
    zeros_like=zeros_like,
    empty_like=empty_like,
    ones_like=ones_like,
    full_like=full_like,
    rand_like=rand_like,
    randn_like=randn_like,
)


# ---------------------------------------------------------------------------
# Tensor methods: on dense tensors (conversions) and on sparse ones


def _to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
    """Matches `torch.Tensor.to_sparse`: `to_sparse(sparse_dim)` or `to_sparse(layout=...)`."""
    sparse_dim = args[0] if args else None
    if blocksize is not None or dense_dim is not None:
        raise NotImplementedError(
            "to_sparse(blocksize=..., dense_dim=...) is not supported by jtorch"
        )
    if layout is sparse_csr:
        return _to_sparse_csr(self)
    if layout not in (None, sparse_coo):
        raise NotImplementedError(
            f"jtorch has the sparse_coo and sparse_csr layouts only (got {layout})"
        )
    if isinstance(self, SparseTensor):
        if self.layout is sparse_csr:
            return M.csr_to_coo(self)
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(
                "to_sparse: conversion from Sparse to Sparse with sparse_dim "
                "argument != self.sparse_dim() is not supported"
            )
        return self
    return M.dense_to_coo(self, sparse_dim)


def _to_sparse_csr(self, dense_dim=None):
    """Matches `torch.Tensor.to_sparse_csr` (2-D)."""
    warn_once("csr", _CSR_BETA)
    if isinstance(self, SparseTensor):
        return self if self.layout is sparse_csr else M.coo_to_csr(self)
    if self.ndim != 2:
        raise RuntimeError(f"to_sparse_csr: jtorch supports 2-D tensors only (got {self.ndim}-D)")
    return M.coo_to_csr(M.dense_to_coo(self))


def _sparse_mask(self, mask):
    """Matches `torch.Tensor.sparse_mask`."""
    if not isinstance(mask, SparseTensor):
        raise RuntimeError("sparse_mask expects mask to be sparse")
    return M.sparse_mask(self if not isinstance(self, SparseTensor) else M.to_dense(self), mask)


def _dense_only(name, message):
    def method(self, *args, **kwargs):
        raise message(self)

    method.__name__ = name
    return method


def _no_layout(what, expected):
    return lambda self: RuntimeError(
        f"{what} expected {expected} tensor layout but got {_layout_name(self)}"
    )


def _not_run(name):
    return lambda self: NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build)."
    )


for _name, _message in [
    ("coalesce", _no_layout("coalesce", "sparse coordinate")),
    ("is_coalesced", _no_layout("is_coalesced", "sparse coordinate")),
    ("indices", _no_layout("indices", "sparse coordinate")),
    ("values", _no_layout("values", "sparse")),
    ("crow_indices", _no_layout("crow_indices", "sparse row compressed")),
    ("col_indices", _no_layout("col_indices", "sparse row compressed")),
    ("_nnz", _not_run("_nnz")),
    ("_values", _not_run("_values")),
    ("_indices", _not_run("_indices")),
]:
    setattr(Tensor, _name, _dense_only(_name, _message))
Tensor.sparse_dim = lambda self: 0
Tensor.dense_dim = lambda self: self.ndim
Tensor.to_sparse = _to_sparse
Tensor.to_sparse_coo = lambda self: _to_sparse(self)
Tensor.to_sparse_csr = _to_sparse_csr
Tensor.sparse_mask = _sparse_mask


def _sparse_to(self, *args, **kwargs):
    """Matches `torch.Tensor.to` on a sparse tensor: the values (and indices) moved/cast."""
    device, dtype, _, copy = _parse_to(args, kwargs)
    vals = self._vals.to(device=device, dtype=dtype, copy=copy)
    if vals is self._vals:
        return self
    out = self._like(vals, "ToCopyBackward0")
    if device is not None:
        out._idx = out._idx.to(device)
        if out._crow is not None:
            out._crow = out._crow.to(device)
    return out


def _cast(dt):
    return lambda self, memory_format=None: _sparse_to(self, dtype=dt)


for _name, _dt in [
    ("float", _dtype.float32),
    ("double", _dtype.float64),
    ("half", _dtype.float16),
    ("bfloat16", _dtype.bfloat16),
    ("long", _dtype.int64),
    ("int", _dtype.int32),
    ("short", _dtype.int16),
    ("char", _dtype.int8),
    ("byte", _dtype.uint8),
    ("bool", _dtype.bool),
    ("cfloat", _dtype.complex64),
    ("cdouble", _dtype.complex128),
]:
    setattr(SparseTensor, _name, _cast(_dt))


def _sparse_copy_(self, src, non_blocking=False):
    self._assign(_dispatch._copy(dict(self=self, src=src)))
    return self


def _sparse_zero_(self):
    self._assign(M.empty_like(self))
    return self


def _sparse_index_select(self, dim, index):
    return _dispatch._index_select(dict(input=self, dim=dim, index=index))


def _sparse_sum(self, dim=None, keepdim=False, dtype=None):
    return M.sum_(self, dim, dtype, keepdim)


for _name, _fn in [
    ("to", _sparse_to),
    ("cpu", lambda self, memory_format=None: _sparse_to(self, "cpu")),
    (
        "cuda",
        lambda self, device=None, non_blocking=False, memory_format=None: _sparse_to(
            self, _device.device("cuda") if device is None else device
        ),
    ),
    ("type_as", lambda self, other: _sparse_to(self, dtype=other.dtype)),
    (
        "to_dense",
        lambda self, dtype=None, *, masked_grad=None: (
            M.to_dense(self) if dtype is None else M.to_dense(self).to(dtype)
        ),
    ),
    ("coalesce", M.coalesce),
    ("to_sparse", _to_sparse),
    ("to_sparse_coo", _to_sparse),
    ("to_sparse_csr", _to_sparse_csr),
    ("sparse_mask", _sparse_mask),
    ("copy_", _sparse_copy_),
    ("zero_", _sparse_zero_),
    ("index_select", _sparse_index_select),
    ("sum", _sparse_sum),
    ("t", lambda self: M.transpose(self, 0, 1)),
    ("transpose", lambda self, dim0, dim1: M.transpose(self, dim0, dim1)),
    ("mm", lambda self, mat2: M.matmul(self, mat2)),
    ("matmul", lambda self, other: M.matmul(self, other)),
    ("clone", lambda self, *, memory_format=None: self._copy_with(self._vals.clone())),
]:
    setattr(SparseTensor, _name, _fn)
SparseTensor.T = property(lambda self: M.transpose(self, 0, 1) if self.ndim == 2 else _not_2d(self))


def _not_2d(self):
    raise RuntimeError(
        f"The use of `x.T` on tensors of dimension other than 2 to reverse "
        f"their shape is not supported. ({_impl_name(self)})"
    )


_LEGACY_NAMES = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
]


def _legacy_sparse_type(name: str):
    def new(cls, *args, **kwargs):
        raise TypeError(
            f"torch.sparse.{name} is a legacy constructor jtorch does not "
            "provide: use torch.sparse_coo_tensor(indices, values, size)"
        )

    return type(name, (), {"__new__": new, "__module__": "torch.sparse"})


globals().update({n: _legacy_sparse_type(n) for n in _LEGACY_NAMES})
