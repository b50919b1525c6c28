"""Shape and joining ops: cat/stack, splits, repeat/tile, flips and rolls, triangles, diagonals.

Ops that produce views in PyTorch (`tensor_split`, `hsplit`, `atleast_1d`, `broadcast_tensors`)
are composites over the view ops of `views.py`; the rest compute new arrays. The `*_copy`
variants live in `view_functional.py`.
"""

import builtins
import itertools
import math
import numbers

import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _meta
from .._dtype import c10_name
from .._tensor import Tensor, wrap, wrap_dim
from . import views
from ._registry import NONE, TI, TL, T, broadcast_error, composite, op
from .reduction import sum as _sum
from .views import shape_arg

shape_op = op(promote=NONE)  # shape ops keep (or promote themselves) their inputs' dtypes


def _common(arrays):
    """Casts `arrays` to their torch promoted dtype (all inputs weigh the same, as in cat)."""
    if not arrays:
        return arrays
    dt = _dtype.from_np(arrays[0].dtype)
    for a in arrays[1:]:
        dt = _dtype.promote_types(dt, _dtype.from_np(a.dtype))
    return tuple(a if a.dtype == dt.np else a.astype(dt.np) for a in arrays)


# ---------------------------------------------------------------------------
# Joining


def _cat(arrays, dim):
    """torch.cat's checks and result on already-listed arrays."""
    if not arrays:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    arrays = _common(arrays)
    # PyTorch's legacy rule: 1-D empty tensors are skipped whatever the other shapes.
    kept = [(i, a) for i, a in enumerate(arrays) if not (a.ndim == 1 and a.shape[0] == 0)]
    if not kept:
        return arrays[0]
    i0, first = kept[0]
    d = wrap_dim(dim, first.ndim)
    for i, a in kept[1:]:
        if a.ndim != first.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.ndim} and {a.ndim}"
            )
        for k in range(first.ndim):
            if k != d and a.shape[k] != first.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. "
                    f"Expected size {first.shape[k]} but got size {a.shape[k]} "
                    f"for tensor number {i} in the list."
                )
    return jnp.concatenate([a for _, a in kept], axis=d)


@op(promote=NONE, method=False, aliases=("concat",))
def cat(tensors: TL, dim=0):
    return _cat(tensors, dim)


@composite(method=False)
def concatenate(tensors, axis=0, out=None):
    """Matches `torch.concatenate` (`cat` with numpy's `axis` name)."""
    return cat(tensors, axis, out=out)


def _nonempty(tensors, name):
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


@op(promote=NONE, method=False)
def stack(tensors: TL, dim=0):
    _nonempty(tensors, "stack")
    d = wrap_dim(dim, tensors[0].ndim + 1)
    for i, a in enumerate(tensors[1:], 1):
        if a.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got "
                f"{list(tensors[0].shape)} at entry 0 and {list(a.shape)} at "
                f"entry {i}"
            )
    return jnp.stack(_common(tensors), axis=d)


def _at_least(a, n):
    """PyTorch's atleast_{1,2,3}d shape rule on an array."""
    if a.ndim >= n:
        return a
    if n == 3 and a.ndim == 1:
        return a.reshape(1, a.shape[0], 1)
    if n == 3 and a.ndim == 2:
        return a[..., None]
    return a.reshape((1,) * (n - a.ndim) + a.shape)


# PyTorch's hstack/vstack/dstack/column_stack are cat of reshaped inputs: a CatBackward0.
@op(promote=NONE, method=False, node="CatBackward0")
def hstack(tensors: TL):
    _nonempty(tensors, "hstack")
    arrays = [_at_least(a, 1) for a in tensors]
    return _cat(arrays, 0 if arrays[0].ndim == 1 else 1)


@op(promote=NONE, method=False, aliases=("row_stack",), node="CatBackward0")
def vstack(tensors: TL):
    _nonempty(tensors, "vstack")
    return _cat([_at_least(a, 2) for a in tensors], 0)


@op(promote=NONE, method=False, node="CatBackward0")
def dstack(tensors: TL):
    _nonempty(tensors, "dstack")
    return _cat([_at_least(a, 3) for a in tensors], 2)


@op(promote=NONE, method=False, node="CatBackward0")
def column_stack(tensors: TL):
    _nonempty(tensors, "column_stack")
    return _cat([a.reshape(a.size, 1) if a.ndim <= 1 else a for a in tensors], 1)


def _atleast(n):
    def impl(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(impl(t) for t in tensors[0])
        if len(tensors) != 1:
            return tuple(impl(t) for t in tensors)
        x = tensors[0]
        if x.ndim >= n:
            return x
        if n == 3 and x.ndim == 1:
            return views.unsqueeze(views.unsqueeze(x, 0), 2)
        if n == 3 and x.ndim == 2:
            return views.unsqueeze(x, 2)
        if n == 2 and x.ndim == 1:  # PyTorch's unsqueeze(0) (UnsqueezeBackward0)
            return views.unsqueeze(x, 0)
        return views.reshape(x, (1,) * (n - x.ndim) + tuple(x.shape))

    impl.__name__ = f"atleast_{n}d"
    impl.__doc__ = f"Matches `torch.atleast_{n}d` (views of the inputs)."
    return composite(impl, method=False)


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


# ---------------------------------------------------------------------------
# Splitting (views)


def _narrow_pieces(input, d, bounds):
    """Views of `input` along dim `d` for each (start, end), clamped the way slicing is."""
    n = input.shape[d]
    pieces = []
    for start, end in bounds:
        start = builtins.min(builtins.max(start + n if start < 0 else start, 0), n)
        end = builtins.min(builtins.max(end + n if end < 0 else end, 0), n)
        pieces.append(views.narrow(input, d, start, builtins.max(end - start, 0)))
    return tuple(pieces)


@composite(method=True)
def tensor_split(input, indices_or_sections, dim=0):
    """Matches `torch.tensor_split`: sections (int or 0-d tensor) or split indices."""
    if input.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t.dtype is not _dtype.int64:
            raise RuntimeError(
                f"tensor_split expected tensor_indices_or_sections to have dtype "
                f"of long, but got {c10_name(t.dtype)}"
            )
        if t.ndim > 1:
            raise RuntimeError(
                f"tensor_split expected tensor_indices_or_sections to be a "
                f"zero-dimensional or one-dimensional tensor, but got a tensor "
                f"with {t.ndim} dims"
            )
        indices_or_sections = t.item() if t.ndim == 0 else t.tolist()
    d = wrap_dim(dim, input.ndim)
    if isinstance(indices_or_sections, numbers.Integral):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        n = input.shape[d]
        size, extra = divmod(n, sections)
        bounds, start = [], 0
        for i in range(sections):
            length = size + (1 if i < extra else 0)
            bounds.append((start, start + length))
            start += length
        return tuple(views.narrow(input, d, s, e - s) for s, e in bounds)
    idx = [int(i) for i in indices_or_sections]
    starts = [0] + idx
    ends = idx + [input.shape[d]]
    return _narrow_pieces(input, d, list(zip(starts, ends)))


def _directional_split(name, min_dims, dim_of):
    def impl(input, indices_or_sections):
        if input.ndim < min_dims:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {min_dims} "
                f"dimension, but got a tensor with {input.ndim} dimensions!"
            )
        d = dim_of(input.ndim)
        if isinstance(indices_or_sections, numbers.Integral):
            s, n = int(indices_or_sections), input.shape[d]
            if s == 0 or n % s:
                raise RuntimeError(
                    f"torch.{name} attempted to split along dimension {d}, but "
                    f"the size of the dimension {n} is not divisible by the "
                    f"split_size {s}!"
                )
        return tensor_split(input, indices_or_sections, d)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return composite(impl, method=True)


hsplit = _directional_split("hsplit", 1, lambda n: 0 if n == 1 else 1)
vsplit = _directional_split("vsplit", 2, lambda n: 0)
dsplit = _directional_split("dsplit", 3, lambda n: 2)


@composite(method=True)
def unsafe_chunk(input, chunks, dim=0):
    """Matches `torch.unsafe_chunk`: `chunk` through `unsafe_split`, as PyTorch's."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = input.shape[wrap_dim(dim, input.ndim)]
    return views.unsafe_split(input, max(-(-n // chunks), 1), dim)


# ---------------------------------------------------------------------------
# Repeating


def _varargs_method(fn, name):
    """`Tensor.name(*sizes)` also accepting one sequence or a keyword, like PyTorch's parser."""

    def method(self, *args, **kwargs):
        if kwargs or (len(args) == 1 and isinstance(args[0], (tuple, list))):
            return fn(self, *args, **kwargs)
        return fn(self, args)

    method.__name__ = name
    method.__doc__ = f"Matches `torch.Tensor.{name}`."
    return composite(method, name=f"Tensor.{name}", method=name, function=False)


@shape_op(method=False, out=False, name="_repeat")
def _repeat(input: T, repeats):
    repeats = shape_arg(repeats) if not isinstance(repeats, int) else (repeats,)
    if len(repeats) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number "
            "of dimensions of tensor"
        )
    shape = (1,) * (len(repeats) - input.ndim) + input.shape
    out_shape = [s * r for s, r in zip(shape, repeats)]
    for r, s in zip(repeats, out_shape):
        if r < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out_shape}")
    return jnp.tile(input.reshape(shape), repeats)


_varargs_method(_repeat, "repeat")


@shape_op(method=False, out=False, node="RepeatBackward0")
def tile(input: T, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    dims = (1,) * (input.ndim - len(dims)) + dims
    return _repeat._op.impl(input, dims)


_varargs_method(tile, "tile")


@shape_op(method=False, out=False, name="_repeat_interleave")
def _repeat_interleave(input: T, repeats: TI, dim, output_size):
    return jnp.repeat(input, repeats, axis=dim, total_repeat_length=output_size)


@composite(method=True)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Matches `torch.repeat_interleave` (also its one-argument form on repeat counts)."""
    if repeats is None:
        # torch.repeat_interleave(repeats): the indices 0..n-1 each repeated repeats[i] times.
        counts = input
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        rng = wrap(jnp.arange(counts.shape[0], dtype=counts.dtype.np))
        return repeat_interleave(rng, counts, 0, output_size=output_size)
    if dim is None:
        input = views.flatten(input)
        dim = 0
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.dtype not in (_dtype.int64, _dtype.int32):
            raise NotImplementedError(
                f"\"repeat_interleave_cpu\" not implemented for '{c10_name(repeats.dtype)}'"
            )
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.ndim == 1 and repeats.shape[0] not in (1, n):
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {n}"
            )
        if _meta.no_values(repeats._array):
            # Under tracing the output size must be given: it cannot be read off the counts.
            if output_size is None:
                raise RuntimeError(
                    "repeat_interleave with tensor repeats needs output_size= when traced"
                )
            total = int(output_size)
        else:
            counts = np.asarray(repeats._array)
            if (counts < 0).any():
                raise RuntimeError("repeats can not be negative")
            total = int(counts.sum()) * (n if counts.size == 1 else 1)
        if repeats.ndim == 1 and repeats.shape[0] == 1:
            repeats = views.reshape(repeats, ())
    else:
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        total = int(repeats) * n
        repeats = wrap(_device.place_like(np.int64(repeats), input._array))
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    return _repeat_interleave(input, repeats, d, total)


# ---------------------------------------------------------------------------
# Reordering


@shape_op(method=False)
def flip(input: T, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    wrapped = [wrap_dim(d, input.ndim) for d in dims]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return jnp.flip(input, axis=tuple(wrapped)) if wrapped else input


_varargs_method(flip, "flip")


@shape_op(node="FlipBackward0")
def fliplr(input: T):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return jnp.flip(input, axis=1)


@shape_op(node="FlipBackward0")
def flipud(input: T):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return jnp.flip(input, axis=0)


@shape_op
def roll(input: T, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = () if dims is None else ((dims,) if isinstance(dims, int) else tuple(dims))
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return jnp.roll(input, shifts[0])
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    return jnp.roll(input, shifts, axis=tuple(wrap_dim(d, input.ndim) for d in dims))


@shape_op
def rot90(input: T, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    return jnp.rot90(input, k, axes=(d0, d1))


# ---------------------------------------------------------------------------
# Triangles and diagonals


@shape_op(inplace=True)
def tril(input: T, diagonal=0):
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return jnp.tril(input, diagonal)


@shape_op(inplace=True)
def triu(input: T, diagonal=0):
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return jnp.triu(input, diagonal)


# PyTorch's diag is diag_embed of a vector, the diagonal (copied) of a matrix.
@shape_op(node=lambda input: "DiagEmbedBackward0" if input.ndim == 1 else "DiagonalBackward0_copy")
def diag(input: T, diagonal=0):
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return jnp.diag(input, diagonal)


def _embed_diagonal(a, offset, d1, d2):
    """The last dim of `a` on the `offset` diagonal of new dims (d1, d2) of the result."""
    m = a.shape[-1]
    n = m + abs(offset)
    i = np.arange(m)
    out = jnp.zeros(a.shape[:-1] + (n, n), a.dtype)
    out = out.at[..., i + builtins.max(-offset, 0), i + builtins.max(offset, 0)].set(a)
    return jnp.moveaxis(out, (-2, -1), (d1, d2))


@shape_op
def diag_embed(input: T, offset=0, dim1=-2, dim2=-1):
    n = input.ndim + 1
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _embed_diagonal(input, offset, d1, d2)


@shape_op(node="DiagEmbedBackward0")
def diagflat(input: T, offset=0):
    return _embed_diagonal(input.reshape(-1), offset, 0, 1)


@shape_op(method=False, out=False, name="_block_diag")
def _block_diag(tensors: TL):
    mats = []
    for i, a in enumerate(tensors):
        if a.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer "
                f"dimensions. Input {i} has {a.ndim} dimensions"
            )
        mats.append(a.reshape((1,) * (2 - a.ndim) + a.shape))
    if not mats:
        return jnp.zeros((1, 0), _dtype.get_default_dtype().np)
    mats = _common(mats)
    rows, cols = builtins.sum(m.shape[0] for m in mats), builtins.sum(m.shape[1] for m in mats)
    out = jnp.zeros((rows, cols), mats[0].dtype)
    r = c = 0
    for m in mats:
        out = out.at[r : r + m.shape[0], c : c + m.shape[1]].set(m)
        r, c = r + m.shape[0], c + m.shape[1]
    return out


@composite(method=False)
def block_diag(*tensors):
    """Matches `torch.block_diag`."""
    return _block_diag(tensors)


# ---------------------------------------------------------------------------
# Products of index sets


@shape_op(method=False, out=False, name="_cartesian_prod", node="StackBackward0")
def _cartesian_prod(tensors: TL):
    grids = jnp.meshgrid(*tensors, indexing="ij")
    return jnp.stack([g.reshape(-1) for g in grids], axis=1)


@composite(method=False)
def cartesian_prod(*tensors):
    """Matches `torch.cartesian_prod`."""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    if builtins.any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    return _cartesian_prod(tensors)


@shape_op(method=False, out=False, node="StackBackward0")
def combinations(input: T, r=2, with_replacement=False):
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return jnp.zeros((0,), input.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    return input[idx]


# ---------------------------------------------------------------------------
# Broadcasting, flattening, resizing


@composite(method=False)
def broadcast_tensors(*tensors):
    """Matches `torch.broadcast_tensors`: expanded views of the inputs."""
    shape = ()
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element 0 in argument 0, but got {type(t).__name__}"
            )
        err = broadcast_error(shape, tuple(t.shape))
        if err is not None:
            raise err
        shape = np.broadcast_shapes(shape, tuple(t.shape))
    return tuple(views.expand(t, shape) for t in tensors)


@composite(method=True)
def ravel(input):
    """Matches `torch.ravel`: a view when the input is contiguous, else a copy."""
    return views.contiguous(input).view(-1)


def _resize(self, shape):
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(shape)
    if builtins.any(s < 0 for s in shape):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {builtins.min(shape)}: {list(shape)}"
        )
    if shape == tuple(self.shape):
        return self
    # PyTorch keeps the storage and the offset and makes the tensor contiguous over them.
    offset, n = self.storage_offset(), math.prod(shape)
    storage = self._storage.value
    if offset + n <= storage.size and not any(s.changes_dtype for s in self._chain):
        self._restride(views._views.Strided(shape, views._views.contiguous_strides(shape), offset))
    else:
        # A larger storage is a new jax array: views made before no longer share it.
        # PyTorch leaves the new elements uninitialized; zeros are one valid choice.
        dtype_view = any(s.changes_dtype for s in self._chain)
        flat = self._array.reshape(-1) if dtype_view else storage.reshape(-1)[offset:]
        arr = jnp.concatenate([flat, jnp.zeros(builtins.max(n - flat.size, 0), flat.dtype)])
        self._rebind(wrap(arr[:n].reshape(shape)))
    self._vc[0] += 1
    return self


@composite(method=True, function=False)
def resize_(self, *sizes, memory_format=None):
    """Matches `torch.Tensor.resize_` (keeps the leading elements in row-major order)."""
    return _resize(self, shape_arg(sizes))


@composite(method=True)
def resize_as_(input, the_template, *, memory_format=None):
    """Matches `torch.resize_as_`."""
    return _resize(input, tuple(the_template.shape))


@composite(method=True, function=False)
def sum_to_size(self, *size):
    """Matches `torch.Tensor.sum_to_size`."""
    size = shape_arg(size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if not size:  # PyTorch's sum_to: an empty size is a full sum, whatever the input
        return _sum(self)
    keep = tuple(i + lead for i, s in enumerate(size) if s == 1 and shape[i + lead] != 1)
    out = self
    if keep:
        out = _sum(out, keep, True)
    if lead:
        out = _sum(out, tuple(range(lead)))
    return out


@shape_op(method=False, out=False, name="_unravel_index")
def _unravel_index(indices: TI, shape):
    coefs = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    idx = indices.astype(jnp.int64)
    return tuple(jnp.remainder(jnp.floor_divide(idx, c), s) for c, s in zip(coefs, shape))


@composite(method=False)
def unravel_index(indices, shape):
    """Matches `torch.unravel_index`."""
    if isinstance(indices, Tensor) and (
        indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is _dtype.bool
    ):
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (int(shape),) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    return _unravel_index(indices, shape)


@op(name="_chunk_cat", publish=True, promote=NONE, method=False, differentiable=False)
def _chunk_cat(tensors: TL, dim, num_chunks):
    """Matches `torch._chunk_cat`: each tensor, zero-padded along `dim` to a multiple of
    `num_chunks`, is split into `num_chunks` chunks (flattened past `dim`), and chunk i of
    every tensor is concatenated into row i of the result."""
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    if builtins.any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
    ndims = {t.ndim for t in tensors}
    if len(ndims) > 1:
        if dim < 0:
            raise RuntimeError(
                "_chunk_cat expects non-negative dim when input tensors have different ndims"
            )
        if builtins.any(dim >= t.ndim for t in tensors):
            raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    else:
        dim = wrap_dim(dim, tensors[0].ndim)
    lead = tuple(tensors[0].shape[:dim])
    if builtins.any(tuple(t.shape[:dim]) != lead for t in tensors):
        raise RuntimeError(
            "_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors"
        )
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    if builtins.any(t.size == 0 for t in tensors):
        raise RuntimeError("_chunk_cat expects non-empty tensor")
    parts = []
    for t in tensors:
        per_chunk = -(-t.shape[dim] // num_chunks)
        pad = [(0, 0)] * t.ndim
        pad[dim] = (0, per_chunk * num_chunks - t.shape[dim])
        t = jnp.pad(t, pad)
        parts.append(t.reshape(lead + (num_chunks, -1)))
    return jnp.concatenate(parts, axis=dim + 1)


from . import view_functional  # noqa: E402, F401  (*_copy and *_scatter)
