"""The mutable `Tensor` over immutable jax arrays.

A tensor is a `Storage` (one jax array, rebound on every write) plus a chain
of view steps from the storage's array to this tensor's elements (DESIGN 1, 2).
A tensor with an empty chain *is* the storage's array; a view caches its
derived array and re-derives it when the storage has been written since.
In-place ops compute a new array and call `_write`, which rebinds the storage
(scattering through the chain for views) and bumps the version counter.

Op methods (`add`, `view`, `sum`, ...) are installed on `Tensor` by the op
registry; this module holds what every tensor is, not what it can compute.
"""

from __future__ import annotations

import builtins
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from . import _device, _dtype, _layout, _meta, _storage, _views
from ._meta import MetaArray
from ._storage import Storage, UntypedStorage
from ._tensor_str import tensor_repr

__all__ = ["Tensor", "Size", "Storage", "AutogradMeta", "SparseOperand"]


class Size(tuple):
    """Matches `torch.Size`: a tuple of ints printed as `torch.Size([2, 3])`."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(int(n)) for n in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))


# Whether the legacy default type (what `torch.Tensor(...)` builds) is a `torch.cuda` one:
# `set_default_tensor_type(torch.cuda.FloatTensor)` sets it.
legacy_cuda = [False]
# How often a `.grad` was read, set or deleted: `jtorch.compile` keys a program that never
# touches `.grad` without the `.grad` it might find (a compiled module's forward).
grad_touches = [0]


class AutogradMeta:
    """A tensor's rarely-used autograd state (`Tensor._grad_state`).

    `output_nr`: which output of `grad_fn` the tensor is. `accumulator`: a leaf's
    AccumulateGrad (which also holds the leaf's tensor hooks). `post_hooks`: a leaf's
    post-accumulate-grad hooks. `detached`: shares storage with `_base` without being a
    differentiable view of it (`detach()`, `.data`).
    `retains_grad`: `retain_grad()` was called. `token`: for a view, the root's `grad_fn`
    when this view's `grad_fn` was made (a different root `grad_fn` means the root was
    written in place since, and the view's history is regenerated from it).
    `grad_dtype`: a leaf's `grad_dtype` when set (`...` means the tensor's own dtype).
    """

    __slots__ = (
        "output_nr",
        "accumulator",
        "post_hooks",
        "retains_grad",
        "token",
        "detached",
        "name",
        "grad_dtype",
    )

    def __init__(self, output_nr: int = 0):
        self.output_nr = output_nr
        self.accumulator = None
        self.post_hooks = None
        self.retains_grad = False
        self.token = None
        self.detached = False
        self.name = None
        self.grad_dtype = ...


def meta(t: Tensor) -> AutogradMeta:
    m = t._grad_state
    if m is None:
        m = t._grad_state = AutogradMeta()
    return m


def wrap_dim(dim: int, ndim: int) -> int:
    """Normalises a possibly negative dim, raising PyTorch's IndexError when out of range."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    return dim + ndim if dim < 0 else dim


class SparseOperand(NotImplementedError):
    """Raised when a dense kernel reads a sparse tensor's elements (`_array`): the op
    registry catches it and hands the call to `jtorch.sparse`; anywhere else it says that
    the operation has no sparse form."""

    def __init__(self, layout):
        super().__init__(
            f"this operation does not support sparse tensors (layout={layout}); "
            "convert with .to_dense() first"
        )


class Tensor:
    """Matches `torch.Tensor`: a mutable, possibly viewing, tensor over jax arrays."""

    __slots__ = (
        "_storage",
        "_chain",
        "_value",
        "_seen",
        "_vc",
        "_meta",
        "_base",
        "_rg",
        "_grad",
        "grad_fn",
        "_grad_state",
        "__dict__",
        "__weakref__",
    )

    _inf = False  # an inference tensor (made under `inference_mode()`)
    _fw = None  # forward AD: the tangent in an open dual level (autograd/forward_ad.py)

    # Legacy constructor: torch.Tensor(2, 3), torch.Tensor([1, 2]), torch.Tensor(t): the
    # default legacy type's (`torch.FloatTensor(...)` for float32). The legacy types are
    # built on Tensor (`_legacy_types`): they are found in the assembled namespace.
    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and isinstance(args[0], Tensor) and not kwargs:
            return Tensor._make_subclass(cls, args[0])  # aliases, whatever its dtype
        import jtorch

        name = _dtype.legacy_type_name(_dtype.get_default_dtype()).rpartition(".")[2]
        t = getattr(jtorch.cuda if legacy_cuda[0] else jtorch, name)(*args, **kwargs)
        return t if cls is Tensor else Tensor._make_subclass(cls, t)

    def __init__(self, *args, **kwargs):
        pass

    # -- construction (internal) -------------------------------------------

    def _init_root(self, arr, requires_grad: bool = False):
        self._storage = Storage(arr)
        self._chain = ()
        self._value = None
        self._seen = 0
        self._vc = [0]
        self._meta = None
        self._base = None
        # (`_init_autograd`, inlined: every op's result is made here)
        self._rg = requires_grad
        self._grad = None
        self.grad_fn = None
        self._grad_state = None
        if inference_check is not None and inference_check():
            self._inf = True

    def _init_autograd(self, requires_grad: bool) -> None:
        """A fresh tensor's autograd state: no grad, no history."""
        self._rg = requires_grad
        self._grad = None
        self.grad_fn = None
        self._grad_state = None

    @staticmethod
    def _make_subclass(cls, data: Tensor, require_grad: bool = False):
        """A tensor of class `cls` sharing `data`'s storage (how `nn.Parameter` is built)."""
        t = object.__new__(cls)
        if cls is not Tensor and subclass_hook is not None:
            subclass_hook(cls)
        t._rebind(data)
        t._vc = data._vc
        t._init_autograd(require_grad)
        return t

    def _make_view(self, step: _views.Step) -> Tensor:
        """A new view: this tensor's chain plus `step` (or, for `Strided`, just `step`)."""
        if isinstance(step, _views.Strided):
            if any(s.changes_dtype for s in self._chain):
                raise NotImplementedError("as_strided on a dtype-changing view is not supported")
            chain = (step,)
        else:
            chain = self._chain + (step,)
        shape, stride, offset = step.meta(self._shape(), Tensor.stride(self), self.storage_offset())
        t = object.__new__(Tensor)
        t._storage = self._storage
        t._chain = chain
        t._value = None
        t._seen = -1
        t._vc = self._vc
        t._meta = (tuple(stride), offset, tuple(shape))
        t._base = self._base if self._base is not None else self
        t._init_autograd(False)
        if self._inf:
            t._inf = True
        return t

    def _restride(self, step: _views.Step) -> None:
        """Makes this tensor itself the view `step` derives from it (`t_()`, `squeeze_()`,
        `as_strided_()`): same storage and base, new shape, strides and offset."""
        if isinstance(step, _views.Strided):
            if any(s.changes_dtype for s in self._chain):
                raise NotImplementedError("as_strided on a dtype-changing view is not supported")
            chain = (step,)
        else:
            chain = self._chain + (step,)
        shape, stride, offset = step.meta(self._shape(), Tensor.stride(self), self.storage_offset())
        self._set_layout(chain, shape, stride, offset)

    def _set_layout(self, chain: tuple, shape, stride, offset: int) -> None:
        """Sets this tensor's chain from its storage and the layout it gives."""
        root_shape = self._storage.value.shape
        if (
            self._base is None
            and offset == 0
            and tuple(shape) == tuple(root_shape)
            and tuple(stride) == _views.contiguous_strides(root_shape)
            and not any(s.changes_dtype for s in chain)
        ):
            chain, layout = (), None  # back to the storage's own layout: a plain root
        else:
            layout = (tuple(stride), offset, tuple(shape))
        self._chain = chain
        self._meta = layout
        self._value = None
        self._seen = -1

    # -- the array ---------------------------------------------------------

    @property
    def _array(self):
        """The current jax array of this tensor (re-derived if its storage changed)."""
        chain = self._chain
        st = self._storage
        if not chain:
            return st.value
        if self._seen != st.gen:
            self._value = _views.replay(chain, st.value)
            self._seen = st.gen
        return self._value

    def _write(self, arr) -> None:
        """Rebinds this tensor's elements to `arr` (same shape; cast to this dtype)."""
        st = self._storage
        if arr.dtype != self.dtype.np:
            arr = arr.astype(self.dtype.np)
        if type(st.value) is MetaArray:  # a meta tensor stays one, whatever is written
            arr = _meta.like(arr)
        elif type(arr) is MetaArray:
            raise NotImplementedError(_meta.NO_DATA)
        if self._chain:
            shape, stride = self._shape(), Tensor.stride(self)
            if _views.has_internal_overlap(shape, stride):
                raise RuntimeError(
                    "unsupported operation: more than one element of the written-to tensor "
                    "refers to a single memory location. Please clone() the tensor before "
                    "performing the operation."
                )
            st.value = _views.writeback(self._chain, st.value, arr)
            self._value = arr
            st.gen += 1
            self._seen = st.gen
        else:
            st.value = arr
            st.gen += 1
        self._vc[0] += 1

    def _rebind(self, other: Tensor) -> None:
        """Makes this tensor share `other`'s storage and layout (`x.data = y`, `set_`)."""
        self._storage = other._storage
        self._chain = other._chain
        self._value = other._value
        self._seen = other._seen
        self._meta = other._meta
        self._base = other._base

    # -- metadata ----------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._shape())

    def _shape(self) -> tuple:
        # A view's shape is in its layout: reading it does not materialise the view.
        m = self._meta
        return self._storage.value.shape if m is None else m[2]

    def size(self, dim: int | None = None):
        """Matches `torch.Tensor.size`."""
        shape = self._shape()
        if dim is None:
            return Size(shape)
        return shape[wrap_dim(dim, len(shape))]

    @property
    def dtype(self) -> _dtype.dtype:
        chain = self._chain
        if chain and any(s.changes_dtype for s in chain):
            return _dtype.from_np(self._array.dtype)
        return _dtype.from_np(self._storage.value.dtype)

    @property
    def ndim(self) -> int:
        return len(self._shape())

    def dim(self) -> int:
        return len(self._shape())

    ndimension = dim

    def numel(self) -> int:
        return math.prod(self._shape())

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    @property
    def device(self) -> _device.device:
        arr = self._storage.value  # a view lives where its storage does
        if type(arr) is MetaArray:
            return _device.META
        if isinstance(arr, jax.core.Tracer):
            return (
                _device.CPU
                if jax.default_backend() == "cpu"
                else _device.from_jax(jax.local_devices()[0])
            )
        return _device.from_jax(next(iter(arr.devices())))

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    is_sparse = False
    is_quantized = False

    @property
    def is_meta(self) -> bool:
        return type(self._storage.value) is MetaArray

    is_mkldnn = False
    is_nested = False
    is_sparse_csr = False
    # Device kinds jtorch never reports (an accelerator is 'cuda', DESIGN 8).
    is_xla = is_xpu = is_mps = is_ipu = is_vulkan = is_maia = is_mtia = False
    layout = _layout.strided

    def get_device(self) -> int:
        d = self.device
        return -1 if d.type == "cpu" else (d.index or 0)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def stride(self, dim: int | None = None):
        """Matches `torch.Tensor.stride`: element strides PyTorch would report."""
        strides = (
            self._meta[0]
            if self._meta is not None
            else _views.contiguous_strides(self._storage.value.shape)
        )
        if dim is None:
            return tuple(strides)
        return strides[wrap_dim(dim, len(strides))]

    def storage_offset(self) -> int:
        return self._meta[1] if self._meta is not None else 0

    def is_contiguous(self, memory_format=None) -> bool:
        return self._meta is None or _views.is_contiguous(self._meta[2], self._meta[0])

    def is_non_overlapping_and_dense(self) -> bool:
        return _views.non_overlapping_and_dense(tuple(self.shape), self.stride())

    def data_ptr(self) -> int:
        """Matches `torch.Tensor.data_ptr`: the address of the first element (see
        `_storage.address`: real memory, which libraries may read)."""
        base = _storage.address(self._storage)
        return base + self.storage_offset() * self.dtype.itemsize if base else 0

    def untyped_storage(self) -> UntypedStorage:
        return UntypedStorage(self._storage)

    def is_set_to(self, other: Tensor) -> bool:
        return (
            self._storage is other._storage
            and self.shape == other.shape
            and self.stride() == other.stride()
            and self.storage_offset() == other.storage_offset()
        )

    @property
    def _version(self) -> int:
        return self._vc[0]

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = builtins.bool(value)
        if self.grad_fn is not None:
            msg = "you can only change requires_grad flags of leaf variables."
            if not value:
                msg += (
                    " If you want to use a computed variable in a subgraph that doesn't "
                    "require differentiation use var_no_grad = var.detach()."
                )
            raise RuntimeError(msg)
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self._rg = value

    @property
    def grad(self):
        """Matches `torch.Tensor.grad`, warning as PyTorch does when read on a non-leaf."""
        grad_touches[0] += 1
        g = self._grad
        if g is None and self.grad_fn is not None:
            m = self._grad_state
            if m is None or not m.retains_grad:
                warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value) -> None:
        grad_touches[0] += 1
        if value is not None:
            _check_grad(self, value)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        grad_touches[0] += 1
        self._grad = None

    @property
    def grad_dtype(self):
        """Matches `torch.Tensor.grad_dtype`: the dtype `.grad` must have (None: any)."""
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        m = self._grad_state
        return self.dtype if m is None or m.grad_dtype is ... else m.grad_dtype

    @grad_dtype.setter
    def grad_dtype(self, value) -> None:
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, _dtype.dtype):
            raise RuntimeError(
                f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}"
            )
        g = self._grad
        if g is not None and value is not None and g.dtype != value:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{_dtype.c10_name(value)}' because "
                f"there is already a gradient with dtype "
                f"'{_dtype.cpp_name(g.dtype)}'. "
                "Please clear the gradient (.grad = None) before changing "
                "grad_dtype, or ensure the new grad_dtype matches the existing "
                "gradient's dtype."
            )
        meta(self).grad_dtype = value

    def _is_view(self) -> bool:
        return self._base is not None

    # -- Python protocol ---------------------------------------------------

    def __hash__(self):
        return id(self)

    def __len__(self) -> int:
        shape = self._array.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    # numpy defers to Tensor's reflected operators (np.float64(2) * t is a Tensor).
    __array_priority__ = 1000

    def __contains__(self, element) -> bool:
        """Matches `torch.Tensor.__contains__`: `(element == self).any()`."""
        if not isinstance(element, (Tensor, int, float, complex, bool, np.number, np.bool_)):
            raise RuntimeError(
                f"Tensor.__contains__ only supports Tensor or scalar, but you "
                f"passed in a {type(element)}."
            )
        return builtins.bool((self == element).any().item())

    def item(self):
        """Matches `torch.Tensor.item`: a Python number from a one-element tensor."""
        arr = self._array
        if arr.size != 1:
            raise RuntimeError(f"a Tensor with {arr.size} elements cannot be converted to Scalar")
        if type(arr) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return _to_python(np.asarray(arr).reshape(()))

    def tolist(self):
        arr = np.asarray(self._array)
        if arr.ndim == 0:
            return _to_python(arr)
        if arr.dtype == jnp.bfloat16:
            arr = arr.astype(np.float32)
        return arr.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """Matches `torch.Tensor.numpy`; the result is a read-only copy of the jax array."""
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use "
                "tensor.detach().numpy() instead."
            )
        if self.device.type != "cpu" and not force:
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use "
                "Tensor.cpu() to copy the tensor to host memory first."
            )
        return np.asarray(self._array)

    def __array__(self, dtype=None, copy=None):
        arr = np.asarray(self._array)
        return arr if dtype is None else arr.astype(dtype)

    def __bool__(self) -> bool:
        arr = self._array
        if arr.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with no values is ambiguous"
                if not arr.size
                else "Boolean value of Tensor with more than one value is ambiguous"
            )
        if type(arr) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return builtins.bool(np.asarray(arr).reshape(()))

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __repr__(self, *, tensor_contents=None) -> str:
        return tensor_repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild_from_numpy, (np.asarray(self._array), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        t = object.__new__(type(self))
        t._init_root(self._array, self.requires_grad)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        t.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_inf"})
        memo[id(self)] = t
        return t

    def __jax_array__(self):
        return self._array

    # torch.Tensor.data: a tensor sharing storage, outside autograd.
    @property
    def data(self) -> Tensor:
        t = Tensor._make_subclass(Tensor, self)
        t._vc = [self._vc[0]]
        t._mark_detached()
        return t

    def _mark_detached(self) -> None:
        """Marks a tensor that shares storage with `_base` but not its autograd history."""
        if self._base is not None:
            meta(self).detached = True

    @data.setter
    def data(self, other: Tensor) -> None:
        self._rebind(other)


# Set by `jtorch._torch_function`: told the class of each Tensor subclass instance made.
subclass_hook = None

# Set by `jtorch.autograd.grad_mode` once `inference_mode()` is first entered: tells whether
# this thread is in inference mode (tensors created there are inference tensors).
inference_check = None

_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)


def _check_grad(t: Tensor, g) -> None:
    """PyTorch's checks when `.grad` is assigned (THPVariable_set_grad)."""
    if not isinstance(g, Tensor):
        raise TypeError(
            f"assigned grad expected to be a Tensor or None but got grad of type {type(g).__name__}"
        )
    if g is t:
        raise RuntimeError("can't assign Variable as its own grad")
    m = t._grad_state
    want = t.dtype if m is None or m.grad_dtype is ... else m.grad_dtype
    if want is not None and g.dtype != want:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{_dtype.cpp_name(g.dtype)}' to a tensor "
            f"with grad_dtype '{_dtype.c10_name(want)}'. The gradient must match the tensor's "
            "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
            "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with "
            "caution. Diverging the dtypes of a tensor and its gradient may break downstream "
            "systems that assume they match."
        )
    if g.device.type != t.device.type:
        raise RuntimeError(
            f"attempting to assign a gradient with device type "
            f"'{g.device.type}' to a tensor with device type '{t.device.type}'. "
            "Please ensure that the gradient and the tensor are on the same "
            "device"
        )
    if tuple(g.shape) != tuple(t.shape):
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(g.shape)}' to a "
            f"tensor of size '{list(t.shape)}'. Please ensure that the gradient "
            "and the tensor are the same size"
        )


def zero_grads(params, set_to_none: bool = True) -> None:
    """Clears the `.grad` of each tensor in `params`: what `Module.zero_grad` and
    `Optimizer.zero_grad` do.

    `set_to_none=False` zeroes the gradient in place, first detaching it from any graph
    (a grad made under `create_graph=True`), as PyTorch does.
    """
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if p.grad.grad_fn is not None:
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()


def _rebuild_from_numpy(arr, requires_grad):
    t = object.__new__(Tensor)
    t._init_root(jnp.asarray(arr), requires_grad)
    return t


def _to_python(scalar: np.ndarray):
    if scalar.dtype == jnp.bfloat16:
        scalar = scalar.astype(np.float32)
    return scalar.item()


def wrap(arr) -> Tensor:
    """A new root tensor over a jax array (the dispatcher's fast path)."""
    t = object.__new__(Tensor)
    t._init_root(arr)
    return t


def _set_obj_state(obj, state):
    """Matches `torch._utils._set_obj_state`: a pickled object's `__dict__` (and slots)."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        for k, v in (part or {}).items():
            setattr(obj, k, v)
    return obj


def _rebuild_from_type_v2(func, new_type, args, state):
    """Matches `torch._tensor._rebuild_from_type_v2`: how a Tensor subclass instance is
    unpickled: `func(*args)` made an instance of `new_type`, then its state restored."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    setstate = getattr(ret.__class__, "__setstate__", None)
    if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None):
        ret.__setstate__(state)
    else:
        ret = _set_obj_state(ret, state)
    return ret
