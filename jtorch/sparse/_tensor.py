"""The sparse tensor: PyTorch's COO and CSR layouts over plain index and value tensors.

Representation. A COO tensor is what PyTorch stores: an int64 `indices` tensor of shape
(sparse_dim, nnz), a `values` tensor of shape (nnz, *dense_shape), the size, and the
coalesced flag; a CSR tensor is `crow_indices` (rows + 1), `col_indices` (nnz) and
`values` (nnz). They are ordinary jtorch tensors, not `jax.experimental.sparse` arrays:
BCOO/BCSR have no uncoalesced state, no coalesced flag and no per-entry duplicate order,
all of which PyTorch programs observe (`_nnz()`, `is_coalesced()`, printing), and their
operations would sit outside jtorch's autograd tape. Here every sparse computation is a
composition of registry ops on the value tensor (gathers, `index_add`), so autograd,
`jtorch.compile` tracing and devices work as for dense tensors; index bookkeeping that
PyTorch does on the host (coalescing, merging) is done with numpy on the indices.

Autograd follows the values: a sparse tensor requires grad when its values do, its
`grad_fn` is a node over the values' history (named as PyTorch names it), and a sparse
leaf's `.grad` is the sparse tensor of its values' gradient. Dense tensors pay nothing:
a sparse tensor's `_array` raises `SparseOperand`, which the op registry catches only on
that path and hands to `jtorch.sparse._dispatch`.
"""

from __future__ import annotations

import math

from .. import _device, _dtype
from .._layout import layout, sparse_coo, sparse_csr
from .._tensor import Size, SparseOperand, Tensor
from .._torch_function import disabled_torch_function_impl

__all__ = ["SparseTensor", "is_sparse_layout"]


def is_sparse_layout(t) -> bool:
    return isinstance(t, SparseTensor)


class _SparseNode:
    """A sparse tensor's `grad_fn`: PyTorch's node name over the values' own history."""

    def __init__(self, name: str, values: Tensor):
        self._node_name = name
        self._values = values

    def name(self) -> str:
        return self._node_name

    @property
    def next_functions(self) -> tuple:
        fn = self._values.grad_fn
        return ((fn, 0),) if fn is not None else ()

    @property
    def metadata(self) -> dict:
        return {}

    def __repr__(self) -> str:
        return f"<{self._node_name} object at {hex(id(self))}>"


# Set by `jtorch.sparse` (its `_rebuild_sparse_tensor`, which builds through the public
# constructors): what a pickled sparse tensor calls, as PyTorch's `torch._utils` function.
rebuild_sparse_tensor = None


class SparseTensor(Tensor):
    """Matches a PyTorch tensor of layout `torch.sparse_coo` or `torch.sparse_csr`."""

    # A layout, not a user subclass: it takes no part in `__torch_function__` dispatch
    # (which would rewrap results as SparseTensor), as PyTorch's sparse tensors do not.
    __torch_function__ = disabled_torch_function_impl

    # -- construction (internal) -------------------------------------------

    @staticmethod
    def _coo(
        indices: Tensor, values: Tensor, size, coalesced: bool, node: str | None = None
    ) -> SparseTensor:
        t = object.__new__(SparseTensor)
        t.__dict__.update(
            _lay=sparse_coo,
            _idx=indices,
            _vals=values,
            _size=tuple(size),
            _coal=bool(coalesced),
            _node=node,
            _crow=None,
        )
        return t

    @staticmethod
    def _csr(
        crow: Tensor, col: Tensor, values: Tensor, size, node: str | None = None
    ) -> SparseTensor:
        t = object.__new__(SparseTensor)
        t.__dict__.update(
            _lay=sparse_csr,
            _idx=col,
            _vals=values,
            _size=tuple(size),
            _coal=False,
            _node=node,
            _crow=crow,
        )
        return t

    def _like(self, values: Tensor, node: str | None, coalesced=None) -> SparseTensor:
        """This tensor's pattern with other values."""
        if self._lay is sparse_csr:
            return SparseTensor._csr(self._crow, self._idx, values, self._size, node)
        return SparseTensor._coo(
            self._idx, values, self._size, self._coal if coalesced is None else coalesced, node
        )

    def _assign(self, other: SparseTensor) -> None:
        """In-place ops: this tensor takes `other`'s pattern and values."""
        self.__dict__.update(
            {
                k: other.__dict__[k]
                for k in ("_lay", "_idx", "_vals", "_size", "_coal", "_node", "_crow")
            }
        )

    # -- what dense kernels cannot read ------------------------------------

    @property
    def _array(self):
        raise SparseOperand(self._lay)

    def __jax_array__(self):
        raise SparseOperand(self._lay)

    @property
    def _chain(self):  # read first by every view op
        raise SparseOperand(self._lay)

    @property
    def _storage(self):
        raise SparseOperand(self._lay)

    # -- metadata -------------------------------------------------------------

    @property
    def layout(self) -> layout:
        return self._lay

    @property
    def is_sparse(self) -> bool:
        return self._lay is sparse_coo

    @property
    def is_sparse_csr(self) -> bool:
        return self._lay is sparse_csr

    @property
    def shape(self) -> Size:
        return Size(self._size)

    def _shape(self) -> tuple:
        return self._size

    @property
    def dtype(self) -> _dtype.dtype:
        return self._vals.dtype

    @property
    def device(self) -> _device.device:
        return self._vals.device

    @property
    def is_meta(self) -> bool:
        return self._vals.is_meta

    def stride(self, dim=None):
        strides = (0,) * len(self._size)  # what PyTorch reports for a sparse tensor
        return strides if dim is None else strides[dim]

    def storage_offset(self) -> int:
        return 0

    def is_contiguous(self, memory_format=None) -> bool:
        return False

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")

    storage = untyped_storage

    def sparse_dim(self) -> int:
        return 2 if self._lay is sparse_csr else self._idx.shape[0]

    def dense_dim(self) -> int:
        return len(self._size) - self.sparse_dim()

    def _nnz(self) -> int:
        return self._vals.shape[0]

    def is_coalesced(self) -> bool:
        self._need_coo("is_coalesced")
        return self._coal

    def _need_coo(self, what: str) -> None:
        if self._lay is not sparse_coo:
            raise RuntimeError(
                f"{what} expected sparse coordinate tensor layout but got {_layout_name(self)}"
            )

    def _need_csr(self, what: str) -> None:
        if self._lay is not sparse_csr:
            raise RuntimeError(
                f"{what} expected sparse row compressed tensor layout but got {_layout_name(self)}"
            )

    # -- the parts ------------------------------------------------------------

    def _indices(self) -> Tensor:
        """Matches `torch.Tensor._indices`: the indices as stored (no autograd)."""
        self._need_coo("_indices")
        return self._idx.detach()

    def _values(self) -> Tensor:
        """Matches `torch.Tensor._values`: the values as stored, outside autograd (as
        PyTorch's `_values()` is)."""
        if self._lay is sparse_csr:
            raise RuntimeError(
                f"Could not run 'aten::_values' with arguments from the "
                f"'{_impl_name(self)}' backend."
            )
        return self._vals.detach()

    def indices(self) -> Tensor:
        self._need_coo("indices")
        if not self._coal:
            raise RuntimeError(
                "Cannot get indices on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._idx.detach()

    def values(self) -> Tensor:
        """Matches `torch.Tensor.values`: differentiable, coalesced COO or CSR only."""
        if self._lay is sparse_coo and not self._coal:
            raise RuntimeError(
                "Cannot get values on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._vals

    def crow_indices(self) -> Tensor:
        self._need_csr("crow_indices")
        return self._crow.detach()

    def col_indices(self) -> Tensor:
        self._need_csr("col_indices")
        return self._idx.detach()

    def ccol_indices(self):
        raise RuntimeError(
            f"ccol_indices expected sparse column compressed tensor layout but "
            f"got {_layout_name(self)}"
        )

    def row_indices(self):
        raise RuntimeError(
            f"row_indices expected sparse column compressed tensor layout but "
            f"got {_layout_name(self)}"
        )

    # -- autograd (carried by the values) -------------------------------------

    @property
    def _rg(self) -> bool:
        return self._vals._rg

    @property
    def _vc(self):
        return self._vals._vc

    @property
    def requires_grad(self) -> bool:
        return self._vals.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._vals.requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        if self._vals.grad_fn is None:
            return None
        return _SparseNode(self._node or "SparseCooTensorWithDimsAndTensorsBackward0", self._vals)

    @property
    def is_leaf(self) -> bool:
        return self._vals.grad_fn is None

    @property
    def grad(self):
        g = self._vals.grad
        if g is None:
            return None
        if isinstance(g, SparseTensor):
            return g
        return self._like(g, None)

    @grad.setter
    def grad(self, value) -> None:
        if value is None:
            self._vals.grad = None
        elif isinstance(value, SparseTensor) and value._idx is self._idx:
            self._vals.grad = value._vals
        else:
            raise RuntimeError(
                "jtorch keeps a sparse tensor's gradient on its values: only "
                "None or a sparse tensor of the same pattern can be assigned "
                "to .grad"
            )

    def _grad_proxy(self) -> Tensor:
        """What `autograd.grad` differentiates for this tensor: its values."""
        return self._vals

    def retain_grad(self) -> None:
        self._vals.retain_grad()

    def detach(self) -> SparseTensor:
        return self._like(self._vals.detach(), None)

    def detach_(self) -> SparseTensor:
        self._vals = self._vals.detach()
        return self

    @property
    def data(self) -> SparseTensor:
        return self.detach()

    # -- Python protocol --------------------------------------------------------

    def __len__(self) -> int:
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def __hash__(self):
        return id(self)

    def __iter__(self):
        raise NotImplementedError(
            "iterating over a sparse tensor is not supported; use .to_dense() first"
        )

    def __bool__(self) -> bool:
        raise RuntimeError(
            "Boolean value of Tensor with more than one value is ambiguous"
            if math.prod(self._size) != 1
            else "bool() of a sparse tensor: use .to_dense() first"
        )

    def numpy(self, *, force: bool = False):
        raise TypeError(
            f"can't convert {_layout_word(self)} layout tensor to numpy. Use "
            "Tensor.to_dense() first."
        )

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def item(self):
        n = math.prod(self._size)
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        return self.to_dense().item()

    def __repr__(self, *, tensor_contents=None) -> str:
        from ._print import sparse_repr

        return sparse_repr(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = self._copy_with(self._vals.__deepcopy__(memo))
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol):
        return (rebuild_sparse_tensor, _reduce_args(self))

    def _copy_with(self, values: Tensor) -> SparseTensor:
        if self._lay is sparse_csr:
            return SparseTensor._csr(self._crow.clone(), self._idx.clone(), values, self._size)
        return SparseTensor._coo(self._idx.clone(), values, self._size, self._coal)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            from .._ops.tensor_methods import _legacy_name

            base = _legacy_name(self._vals)
            if self._lay is sparse_csr:
                raise RuntimeError(f"Unimplemented backend {_impl_name(self)}")
            return base.replace("torch.", "torch.sparse.", 1)
        raise NotImplementedError("Tensor.type(dtype) on a sparse tensor: use .to(dtype)")

    def element_size(self) -> int:
        return self.dtype.itemsize

    # dense-only methods PyTorch refuses on sparse layouts
    def view(self, *shape):
        raise NotImplementedError(_not_implemented("view", self))

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def contiguous(self, memory_format=None):
        raise RuntimeError("unsupported memory format option Contiguous")


def _reduce_args(t: SparseTensor) -> tuple:
    """PyTorch's pickled form (`torch._utils._rebuild_sparse_tensor(layout, data)`)."""
    if t._lay is sparse_csr:
        return (sparse_csr, (t._crow.detach(), t._idx.detach(), t._vals.detach(), t.shape))
    return (sparse_coo, (t._idx.detach(), t._vals.detach(), t.shape, t._coal))


def _impl_name(t: SparseTensor) -> str:
    """The TensorImpl / backend name PyTorch's messages print (`SparseCPU`, `SparseCsrCPU`)."""
    dev = "CUDA" if t.device.type == "cuda" else "CPU"
    return ("SparseCsr" if t._lay is sparse_csr else "Sparse") + dev


def _layout_name(t) -> str:
    """c10's layout name: `Sparse`, `SparseCsr`, `Strided`."""
    if not isinstance(t, SparseTensor):
        return "Strided"
    return "SparseCsr" if t._lay is sparse_csr else "Sparse"


def _layout_word(t) -> str:
    return "Sparse" if t._lay is sparse_coo else "SparseCsr"


def _not_implemented(name: str, t: SparseTensor) -> str:
    return (
        f"Could not run 'aten::{name}' with arguments from the '{_impl_name(t)}' backend. "
        "This could be because the operator doesn't exist for this backend, or was "
        "omitted during the selective/custom build process (if using custom build)."
    )


_warned: set = set()


def warn_once(key: str, message: str) -> None:
    """PyTorch's TORCH_WARN_ONCE: the first time per process, at the user's line."""
    if key not in _warned:
        _warned.add(key)
        from .._ops._index_forms import warn_at_caller

        warn_at_caller(message)


def _no_setitem(self, index, value):
    raise TypeError("Cannot assign to a sparse tensor")


SparseTensor.__setitem__ = _no_setitem
