"""View ops (DESIGN 2): each returns the `Step`(s) that derive the view from its input.

Implementations here see the input *Tensor* (its shape and strides), not an
array: a view is metadata plus a replayable step, never a copy. Ops that are
views only when the layout allows (`reshape`, `flatten`, `contiguous`) are
composites that pick a view or a copy.
"""

import functools
import math
import warnings

from .. import _dtype, _views
from .._dtype import c10_name
from .._tensor import Tensor, meta, wrap_dim
from . import _dispatch
from ._registry import NONE, T, composite, op

view_op = functools.partial(op, view=True, promote=NONE, out=False)


def shape_arg(shape) -> tuple:
    """`f(2, 3)`, `f((2, 3))`, `f([2, 3])` and `f(torch.Size(...))` all mean (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(n) for n in shape)


def infer_size(shape, numel: int) -> tuple:
    """Resolves one -1 in `shape`, raising PyTorch's errors for impossible shapes."""
    shape = list(shape)
    infer = [i for i, n in enumerate(shape) if n == -1]
    if len(infer) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for n in shape:
        if n < -1:
            raise RuntimeError(f"invalid shape dimension {n}")
    known = math.prod(n for n in shape if n != -1)
    if infer:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[infer[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _reshape_step(input, shape):
    shape = infer_size(shape_arg(shape), input.numel())
    stride = _views.view_strides(tuple(input.shape), input.stride(), shape)
    return None if stride is None else _views.Reshape(shape, stride)


@view_op(method=True)
def _view(input: T, *shape):
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return _view_dtype(input, shape[0])
    step = _reshape_step(input, shape)
    if step is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at "
            "least one dimension spans across two contiguous subspaces). Use "
            ".reshape(...) instead."
        )
    return step


def _view_dtype(input, dt):
    """`view(dtype)`: same-size dtypes reinterpret each element; otherwise the last dimension
    (which must have stride 1) is reinterpreted, with PyTorch's checks and messages."""
    old = input.dtype
    if dt.itemsize == old.itemsize and not ({old._kind, dt._kind} & {"b", "c"}):
        return _views.Bitcast(dt.np)
    what = f"to view {c10_name(old)} as {c10_name(dt)} (different element sizes)"
    if dt.itemsize == old.itemsize:  # bool or complex: reinterpreted through bytes
        return _views.BitcastResize(dt.np, old.itemsize)
    if input.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    stride = input.stride()
    if stride[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {stride[-1]}")
    if dt.itemsize > old.itemsize:
        k = dt.itemsize // old.itemsize
        if input.shape[-1] % k:
            raise RuntimeError(
                f"self.size(-1) must be divisible by {k} {what}, but got {input.shape[-1]}"
            )
        if input.storage_offset() % k:
            raise RuntimeError(
                f"self.storage_offset() must be divisible by {k} {what}, but "
                f"got {input.storage_offset()}"
            )
        for i, s in enumerate(stride[:-1]):
            if s % k:
                raise RuntimeError(f"self.stride({i}) must be divisible by {k} {what}, but got {s}")
    return _views.BitcastResize(dt.np, old.itemsize)


def _shape_kw(shape, kwargs, name):
    """Varargs shape ops also take the shape by keyword (`view(size=...)`, `reshape(shape=...)`)."""
    if kwargs:
        if shape or set(kwargs) != {name}:
            raise TypeError(f"got unexpected keyword arguments {sorted(kwargs)}")
        return (tuple(kwargs[name]),)
    return shape


@composite(method="view", function=False)
def view(self, *shape, **kwargs):
    """Matches `torch.Tensor.view`: `view(*shape)`, `view(size=...)`, `view(dtype)`."""
    if not shape and set(kwargs) == {"dtype"}:
        shape = (_dtype.from_python_type(kwargs["dtype"]),)
    elif len(shape) == 1 and shape[0].__class__ is type:  # view(int): int64, as PyTorch
        shape = (_dtype.from_python_type(shape[0]),)
    if not (len(shape) == 1 and isinstance(shape[0], _dtype.dtype)):
        return _view(self, *_shape_kw(shape, kwargs, "size"))
    # view(dtype) shares storage but is not differentiable: PyTorch gives no grad_fn.
    out = _view(self.detach(), shape[0])
    out._mark_detached()
    return out


@composite(method=True, function=False)
def view_as(self, other):
    return _view(self, tuple(other.shape))


@composite
def reshape(input, *shape, **kwargs):
    """Matches `torch.reshape`: a view when the layout allows it, else a copy."""
    shape = _shape_kw(shape, kwargs, "shape")
    if _reshape_step(input, shape) is not None:
        return _view(input, *shape)
    return _view(input.clone(), *shape)


@composite(method=True, function=False)
def reshape_as(self, other):
    return reshape(self, tuple(other.shape))


@view_op(aliases=("swapaxes", "swapdims"))
def transpose(input: T, dim0, dim1):
    n = input.ndim
    perm = list(range(n))
    if n == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return _views.Alias()
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return _views.Permute(perm)


@view_op
def t(input: T):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return _views.Permute(tuple(reversed(range(input.ndim))))


@composite
def permute(input, *dims, **kwargs):
    """Matches `torch.permute` / `Tensor.permute(*dims)`."""
    return _permute(input, shape_arg(_shape_kw(dims, kwargs, "dims")))


@view_op(name="_permute", method=False)
def _permute(input: T, dims):
    n = input.ndim
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does "
            f"not match the length of the desired ordering of dimensions i.e. "
            f"input.dim() = {n} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = [wrap_dim(d, n) for d in dims]
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _views.Permute(wrapped)


@view_op
def adjoint(input: T):
    if input.ndim < 2:
        raise RuntimeError(
            "tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor."
        )
    return _views.Permute(tuple(range(input.ndim - 2)) + (input.ndim - 1, input.ndim - 2))


@composite(function=False)
def expand(input, *size, **kwargs):
    """Matches `torch.Tensor.expand`."""
    kwargs.pop("implicit", None)
    return _expand(input, shape_arg(_shape_kw(size, kwargs, "size")))


def _type_string(np_dtype) -> str:
    """c10's `toString` of a CPU tensor type, as expand's error prints it: the legacy name
    (`torch.LongTensor`) where the dtype has one, else `CPUBoolType`-style."""
    name = c10_name(np_dtype)
    if name in ("Float", "Double", "Half", "Byte", "Char", "Short", "Int", "Long"):
        return f"torch.{name}Tensor"
    return f"CPU{name}Type"


@view_op(name="_expand", method=False)
def _expand(input: T, size):
    shape = tuple(input.shape)
    if len(size) < len(shape):
        raise RuntimeError(
            f"expand({_type_string(input.dtype)}{{{list(shape)}}}, "
            f"size={list(size)}): the "
            f"number of sizes provided ({len(size)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({len(shape)})"
        )
    lead = len(size) - len(shape)
    out = list(size[:lead])
    for i, (n_old, n_new) in enumerate(zip(shape, size[lead:])):
        if n_new == -1:
            n_new = n_old
        elif n_old != 1 and n_old != n_new:
            raise RuntimeError(
                f"The expanded size of the tensor ({n_new}) must match the "
                f"existing size ({n_old}) at non-singleton dimension "
                f"{i + lead}.  Target sizes: {list(size)}.  Tensor sizes: "
                f"{list(shape)}"
            )
        out.append(n_new)
    if any(n < 0 for n in out[:lead]):
        raise RuntimeError(
            "The expanded size of the tensor (-1) isn't allowed in a leading, "
            "non-existing dimension 0"
        )
    return _views.Expand(out)


@composite(method=True, function=False)
def expand_as(self, other):
    return expand(self, tuple(other.shape))


@composite
def broadcast_to(input, size):
    return expand(input, tuple(size))


@composite
def squeeze(input, dim=None):
    """Matches `torch.squeeze`: all size-1 dims, one dim, or a tuple of dims."""
    if dim is None:
        return _squeeze(input)
    if isinstance(dim, (tuple, list)):
        return _squeeze_dims(input, tuple(dim))
    return _squeeze_dim(input, dim)


# Three ops because PyTorch's three overloads name their backward nodes apart.
@view_op(name="_squeeze", method=False, node="SqueezeBackward0")
def _squeeze(input: T):
    return _squeeze_step(input, None)


@view_op(name="_squeeze_dim", method=False, node="SqueezeBackward1")
def _squeeze_dim(input: T, dim):
    return _squeeze_step(input, dim)


@view_op(name="_squeeze_dims", method=False, node="SqueezeBackward2")
def _squeeze_dims(input: T, dim):
    return _squeeze_step(input, dim)


def _squeeze_step(input, dim):
    shape = tuple(input.shape)
    n = len(shape)
    if n == 0:
        for d in dim if isinstance(dim, (tuple, list)) else [] if dim is None else [dim]:
            wrap_dim(d, 0)
        return _views.Alias()
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = {wrap_dim(d, n) for d in dims}
        dims = {d for d in dims if shape[d] == 1}
    return _views.Reshape(*_drop_dims(input, dims))


def _drop_dims(input, dims):
    shape, stride = tuple(input.shape), input.stride()
    keep = [i for i in range(len(shape)) if i not in dims]
    return tuple(shape[i] for i in keep), tuple(stride[i] for i in keep)


@view_op
def unsqueeze(input: T, dim):
    shape, stride = list(input.shape), list(input.stride())
    d = wrap_dim(dim, len(shape) + 1)
    new_stride = shape[d] * stride[d] if d < len(shape) else 1
    shape.insert(d, 1)
    stride.insert(d, new_stride)
    return _views.Reshape(shape, stride)


def _slice_step(input, dim, start, length):
    idx = [slice(0, n, 1) for n in input.shape]
    idx[dim] = slice(start, start + length, 1)
    return _views.Index(tuple(idx), tuple(input.shape))


@view_op(node="SliceBackward0")
def narrow(input: T, dim, start, length):
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    start = int(start)
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})"
        )
    start = start + n if start < 0 else start
    if length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice_step(input, d, start, int(length))


@view_op
def select(input: T, dim, index):
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    index = int(index)
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(input.shape)} at dimension {d}"
        )
    idx = [slice(0, m, 1) for m in input.shape]
    idx[d] = index + n if index < 0 else index
    return _views.Index(tuple(idx), tuple(input.shape))


@view_op
def unbind(input: T, dim=0):
    d = wrap_dim(dim, input.ndim)
    steps = []
    for i in range(input.shape[d]):
        idx = [slice(0, m, 1) for m in input.shape]
        idx[d] = i
        steps.append(_views.Index(tuple(idx), tuple(input.shape)))
    return tuple(steps)


def _split_steps(tensor, split_size_or_sections, dim) -> list:
    """The slices of `tensor.split(split_size_or_sections, dim)`, with PyTorch's errors."""
    d = wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and not (size == 0 and n == 0):
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )
        sizes = [min(size, n - s) for s in range(0, n, size)] if size else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} "
                f"(input tensor's size at dimension {d}), but got "
                f"split_sizes={sizes}"
            )
    steps, start = [], 0
    for s in sizes:
        steps.append(_slice_step(tensor, d, start, s))
        start += s
    return steps


# PyTorch's split is two ATen ops, by the argument's type (Tensor.split picks one), whose
# nodes are SplitBackward0 and SplitWithSizesBackward0; unsafe_split(_with_sizes) differ
# from them only in autograd's view tracking (the pieces alias the input in both, and so
# they do here) and in their nodes' names.
@view_op(method=False)
def _split(tensor: T, split_size, dim=0):
    return tuple(_split_steps(tensor, split_size, dim))


@composite(method=True)
def split(
    tensor: Tensor, split_size_or_sections: int | list[int] | tuple[int, ...], dim: int = 0
) -> tuple[Tensor, ...]:
    """Matches `torch.split` / `Tensor.split`: `split_with_sizes` for a list of sizes."""
    if isinstance(split_size_or_sections, int):
        return _split(tensor, split_size_or_sections, dim)
    return split_with_sizes(tensor, split_size_or_sections, dim)


@view_op(method=True)
def split_with_sizes(input: T, split_sizes, dim=0):
    return tuple(_split_steps(input, list(split_sizes), dim))


@view_op(method=True)
def unsafe_split(input: T, split_size, dim=0):
    return tuple(_split_steps(input, split_size, dim))


@view_op(method=True)
def unsafe_split_with_sizes(input: T, split_sizes, dim=0):
    return tuple(_split_steps(input, list(split_sizes), dim))


@composite
def chunk(input, chunks, dim=0):
    """Matches `torch.chunk`."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = input.shape[wrap_dim(dim, input.ndim)]
    return split(input, max(-(-n // chunks), 1), dim)


@view_op
def diagonal(input: T, offset=0, dim1=0, dim2=1):
    n = input.ndim
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _views.Diagonal(offset, d1, d2)


@view_op(node="PermuteBackward0")
def movedim(input: T, source, destination):
    n = input.ndim
    src = [wrap_dim(d, n) for d in (source if isinstance(source, (tuple, list)) else [source])]
    dst = [
        wrap_dim(d, n)
        for d in (destination if isinstance(destination, (tuple, list)) else [destination])
    ]
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) "
            f"should contain the same number of dims as destination ({dst} dims)"
        )
    perm = [-1] * n
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(i for i in range(n) if i not in src)
    perm = [p if p != -1 else next(rest) for p in perm]
    return _views.Permute(perm)


@composite
def moveaxis(input, source, destination):
    return movedim(input, source, destination)


@view_op
def as_strided(input: T, size, stride, storage_offset=None):
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    needed = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    storage_numel = int(input._storage.value.size)
    if needed > storage_numel:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
            f"offset {offset}, and itemsize {input.dtype.itemsize} requiring a "
            f"storage size of {needed * input.dtype.itemsize} are out of bounds "
            f"for storage of size {storage_numel * input.dtype.itemsize}"
        )
    return _views.Strided(size, stride, offset)


@view_op
def unfold(input: T, dimension, size, step):
    n = input.ndim
    d = wrap_dim(dimension, max(n, 1))
    shape, stride = list(input.shape) or [1], list(input.stride()) or [1]
    if size > shape[d]:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {shape[d]} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (shape[d] - size) // step + 1
    new_shape = shape[:d] + [count] + shape[d + 1 :] + [size]
    new_stride = stride[:d] + [stride[d] * step] + stride[d + 1 :] + [stride[d]]
    if n == 0:
        new_shape, new_stride = [size], [1]
    return _views.Strided(new_shape, new_stride, input.storage_offset())


@view_op(differentiable=False)
def detach(input: T):
    return _views.Detach()


def detach_(input: Tensor) -> Tensor:
    """Matches `torch.detach_`: `input.detach_()`."""
    return input.detach_()


@view_op
def alias(input: T):
    return _views.Alias()


@view_op
def view_as_real(input: T):
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _views.AsReal()


@view_op
def view_as_complex(input: T):
    shape, stride = tuple(input.shape), input.stride()
    if input.dtype not in (_dtype.float32, _dtype.float64, _dtype.float16):
        raise RuntimeError(
            f"view_as_complex is only supported for float and double tensors, but "
            f"got a tensor of scalar type: {input.dtype}"
        )
    if not shape or shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    return _views.AsComplex()


@view_op(method=False)
def real(input: T):
    return _views.RealPart() if input.dtype.is_complex else _views.Alias()


@view_op(method=False)
def imag(input: T):
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _views.ImagPart()


@composite
def flatten(input, start_dim=0, end_dim=-1):
    """Matches `torch.flatten`: a view when the layout allows it."""
    n = input.ndim
    if n == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = tuple(input.shape)
    return reshape(input, shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :])


@composite
def unflatten(input, dim, sizes):
    d = wrap_dim(dim, input.ndim)
    shape = tuple(input.shape)
    sizes = infer_size(tuple(sizes), shape[d])
    return reshape(input, shape[:d] + sizes + shape[d + 1 :])


@composite(method=True)
def contiguous(input, memory_format=None):
    """Matches `torch.Tensor.contiguous`: self when already contiguous, else a copy."""
    return input if input.is_contiguous() else input.clone()


@op(promote=NONE, out=False, jit=False)
def clone(input: T, *, memory_format=None):
    """Matches `torch.clone`: a new storage (jax arrays are immutable, so no copy is made)."""
    return input


# ---------------------------------------------------------------------------
# In-place view ops: the tensor itself takes the view's shape and strides (same storage).


def _view_inplace(self, view_fn, node_name: str, *args):
    """Applies `view_fn`'s step to `self` in place; autograd sees the view op's backward."""
    op = view_fn._op
    step = op.impl(self, *args)
    view = self._make_view(step)
    if _dispatch.record_view is not None:
        _dispatch.record_view(op, step, self, view)
        if view.grad_fn is not None:  # grad mode is on and self requires grad
            _check_not_leaf(self)
            view.grad_fn._name = node_name
    self._restride(step)
    if _dispatch.forward_ad is not None and isinstance(self.__dict__.get("_fw"), Tensor):
        self._fw._restride(step)  # its tangent is laid out as it is: restride it alike
    self._vc[0] += 1
    if view.grad_fn is not None:
        self.grad_fn = view.grad_fn
        m = meta(self)
        m.output_nr = 0
        m.token = view._grad_state.token if self._base is not None else None
    return self


def _check_not_leaf(self) -> None:
    m = self._grad_state
    if self.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    root = self._base
    if (
        root is not None
        and not (m is not None and m.detached)
        and root._rg
        and root.grad_fn is None
    ):
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


@composite(method=True, function=False)
def t_(self):
    """Matches `torch.Tensor.t_`."""
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return _view_inplace(self, t, "TBackward1")


@composite(method=True, function=False)
def transpose_(self, dim0, dim1):
    """Matches `torch.Tensor.transpose_`."""
    return _view_inplace(self, transpose, "TransposeBackward1", dim0, dim1)


@composite(method=True, function=False)
def swapaxes_(self, axis0, axis1):
    """Matches `torch.Tensor.swapaxes_`."""
    return _view_inplace(self, transpose, "TransposeBackward1", axis0, axis1)


@composite(method=True, function=False)
def swapdims_(self, dim0, dim1):
    """Matches `torch.Tensor.swapdims_`."""
    return _view_inplace(self, transpose, "TransposeBackward1", dim0, dim1)


@composite(method=True, function=False)
def squeeze_(self, dim=None):
    """Matches `torch.Tensor.squeeze_` (no dim, one dim, or a tuple of dims)."""
    # PyTorch numbers the in-place overloads' nodes apart: squeeze_(), (int), (dims).
    if dim is None:
        return _view_inplace(self, _squeeze, "SqueezeBackward3")
    if isinstance(dim, (tuple, list)):
        return _view_inplace(self, _squeeze_dims, "SqueezeBackward5", tuple(dim))
    return _view_inplace(self, _squeeze_dim, "SqueezeBackward4", dim)


@composite(method=True, function=False)
def unsqueeze_(self, dim):
    """Matches `torch.Tensor.unsqueeze_`."""
    return _view_inplace(self, unsqueeze, "UnsqueezeBackward1", dim)


@composite(method=True)
def as_strided_(input, size, stride, storage_offset=None):
    """Matches `torch.as_strided_`: the tensor itself takes the given layout of its storage."""
    return _view_inplace(input, as_strided, "AsStridedBackward1", size, stride, storage_offset)


# Tensor properties that are views.
Tensor.T = property(lambda self: _permute(self, tuple(reversed(range(self.ndim)))))
Tensor.mT = property(lambda self: transpose(self, -2, -1))


def _matrix_H(self):
    """Matches `Tensor.H`: a matrix's conjugate transpose (`mH`); other ranks are refused,
    except 0-D (deprecated: the tensor itself, conjugated if complex)."""
    if self.ndim == 0:
        warnings.warn(
            "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", stacklevel=2
        )
        return self.conj() if self.dtype.is_complex else self
    if self.ndim != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
            + hint
        )
    return self.mH


Tensor.H = property(_matrix_H)
Tensor.mH = property(
    lambda self: (
        transpose(self, -2, -1).conj() if self.dtype.is_complex else transpose(self, -2, -1)
    )
)
Tensor.real = property(real, lambda self, v: real(self).copy_(v))
Tensor.imag = property(imag, lambda self, v: imag(self).copy_(v))
