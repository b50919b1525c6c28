"""Functional forms of views: the `*_copy` ops and the `*_scatter` ops.

`x_copy(t, ...)` is the view `x(t, ...)` copied; `x_scatter(t, src, ...)` is a copy of `t`
with `src` written into the view `x(t, ...)`. PyTorch uses both in functionalization.
"""

import builtins

import jax.numpy as jnp
import numpy as np

from .._tensor import wrap_dim
from . import views
from ._registry import NONE, T, composite, op, write_out
from .views import shape_arg

kernel = op(promote=NONE, method=False, out=False)


def _finish(result, out):
    return result if out is None else write_out(result, out)


# ---------------------------------------------------------------------------
# The *_copy variants: the view op, then a copy (PyTorch's functionalized view ops).


def _copy_of(name, view_fn, method=False):
    def impl(input, *args, out=None, **kwargs):
        r = view_fn(input, *args, **kwargs)
        r = tuple(_copy(x, name) for x in r) if isinstance(r, tuple) else _copy(r, name)
        return _finish(r, out)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return composite(impl, method=method)


def _copy(view, name):
    """`view.clone()`, its node named as PyTorch names the functional view op's
    (`TBackward0_copy`; narrow_copy is an ATen op of its own)."""
    r = view.clone()
    if r.grad_fn is not None and view.grad_fn is not None:
        r.grad_fn._name = (
            "NarrowCopyBackward0" if name == "narrow_copy" else view.grad_fn.name() + "_copy"
        )
    return r


def _slice_view(input, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, input.ndim)
    return input[(slice(None),) * d + (slice(start, end, step),)]


_COPIES = {
    "alias_copy": views.alias,
    "as_strided_copy": views.as_strided,
    "detach_copy": views.detach,
    "diagonal_copy": views.diagonal,
    "expand_copy": lambda x, size, *, implicit=False: views.expand(x, size),
    "narrow_copy": views.narrow,
    "permute_copy": lambda x, dims: views.permute(x, dims),
    "select_copy": views.select,
    "slice_copy": _slice_view,
    "split_copy": views.split,
    "split_with_sizes_copy": views.split_with_sizes,
    "squeeze_copy": views.squeeze,
    "t_copy": views.t,
    "transpose_copy": views.transpose,
    "unbind_copy": views.unbind,
    "unfold_copy": views.unfold,
    "unsqueeze_copy": views.unsqueeze,
    "view_copy": lambda x, size: views.view(x, size),
    "view_as_real_copy": views.view_as_real,
    "view_as_complex_copy": views.view_as_complex,
}
for _name, _fn in _COPIES.items():
    globals()[_name] = _copy_of(_name, _fn, method=_name == "narrow_copy")


# ---------------------------------------------------------------------------
# The *_scatter ops: a copy of `input` with `src` written into one of its views.


def _src_fits(src, slice_shape):
    if tuple(src.shape) != tuple(slice_shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(slice_shape)}"
        )


def _diag_len(shape, offset, d1, d2):
    if offset >= 0:
        return builtins.max(builtins.min(shape[d1], shape[d2] - offset), 0)
    return builtins.max(builtins.min(shape[d1] + offset, shape[d2]), 0)


@op(promote=NONE)
def diagonal_scatter(input: T, src: T, offset=0, dim1=0, dim2=1):
    d1, d2 = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    m = _diag_len(input.shape, offset, d1, d2)
    rest = tuple(n for k, n in enumerate(input.shape) if k not in (d1, d2))
    _src_fits(src, rest + (m,))
    i = np.arange(m)
    moved = jnp.moveaxis(input, (d1, d2), (-2, -1))
    moved = moved.at[..., i + builtins.max(-offset, 0), i + builtins.max(offset, 0)].set(
        src.astype(input.dtype)
    )
    return jnp.moveaxis(moved, (-2, -1), (d1, d2))


@op(promote=NONE)
def select_scatter(input: T, src: T, dim, index):
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(input.shape)} at dimension {d}"
        )
    _src_fits(src, input.shape[:d] + input.shape[d + 1 :])
    key = (slice(None),) * d + (index % n,)
    return input.at[key].set(src.astype(input.dtype))


@op(promote=NONE)
def slice_scatter(input: T, src: T, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start, stop, step = slice(start, end, step).indices(input.shape[d])
    stop = builtins.max(stop, start)
    key = (slice(None),) * d + (slice(start, stop, step),)
    _src_fits(src, jnp.zeros(input.shape, bool)[key].shape)
    return input.at[key].set(src.astype(input.dtype))


@kernel(name="_as_strided_scatter")
def _as_strided_scatter(input: T, src: T, layout, positions):
    storage = jnp.zeros(input.size, input.dtype).at[np.asarray(layout)].set(input.reshape(-1))
    storage = storage.at[np.asarray(positions)].set(src.reshape(-1).astype(input.dtype))
    return storage[np.asarray(layout)].reshape(input.shape)


def _dense_strides(t):
    """The strides `t.clone()` keeps (PyTorch's preserve_format), as element positions."""
    shape, stride = tuple(t.shape), t.stride()
    order = sorted(range(len(shape)), key=lambda k: -stride[k])
    expect, dense = 1, True
    for k in reversed(order):
        if shape[k] != 1 and stride[k] != expect:
            dense = False
        expect *= shape[k]
    if not dense:
        stride, expect = [], 1
        for n in reversed(shape):
            stride.insert(0, expect)
            expect *= n
    return tuple(stride)


def _positions(size, stride, offset):
    pos = np.full(tuple(size), offset, np.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = n
        pos = pos + np.arange(n, dtype=np.int64).reshape(shape) * s
    return tuple(pos.reshape(-1).tolist())


@composite(method=True)
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """Matches `torch.as_strided_scatter`, with strides into `input`'s own (cloned) layout."""
    size, stride = shape_arg((size,)), shape_arg((stride,))
    offset = 0 if storage_offset is None else int(storage_offset)
    needed = (
        offset + builtins.sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if builtins.all(size)
        else 0
    )
    numel = input.numel()
    if needed > numel:
        item = input.dtype.itemsize
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
            f"offset {offset}, and itemsize {item} requiring a storage size of "
            f"{needed * item} are out of bounds for storage of size "
            f"{numel * item}"
        )
    _src_fits(src, size)
    layout = _positions(tuple(input.shape), _dense_strides(input), 0)
    return _as_strided_scatter(input, src, layout, _positions(size, stride, offset))
