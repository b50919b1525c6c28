"""The meta device: tensors with a shape and a dtype but no data.

A meta tensor's storage holds a `MetaArray` (a `jax.ShapeDtypeStruct`) instead of a jax
array. Ops on meta tensors compute only what their results would look like, with
`jax.eval_shape` of the same compiled kernel that runs on real data, so every op that jtorch
has works on meta tensors with the shapes and dtypes PyTorch gives, and no memory is
touched. Libraries build large models on the meta device (`with torch.device("meta"):`)
and then load or materialise their weights (`Module.to_empty`, `load_state_dict(...,
assign=True)`, `setattr`).

Reading values (`item`, `tolist`, `numpy`, copying to another device) raises PyTorch's
errors. Ops whose output shape depends on values (`nonzero`, `masked_select`, `unique`)
raise NotImplementedError, as PyTorch's meta kernels do.
"""

from __future__ import annotations

import jax

NO_DATA = "Cannot copy out of meta tensor; no data!"
VALUE_DEPENDENT = (
    "this operator's output shape depends on the values of its inputs, so it "
    "cannot run on meta tensors (PyTorch has no meta kernel for it either)"
)


# Set once the first meta array is made: until then the dispatcher never looks for one.
used = False


class MetaArray(jax.ShapeDtypeStruct):
    """The value of a meta tensor: a shape and a dtype, no data."""

    __slots__ = ()

    def __init__(self, shape, dtype):
        global used
        used = True
        super().__init__(shape, dtype)

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def astype(self, dtype) -> MetaArray:
        return MetaArray(self.shape, dtype)

    def reshape(self, *shape) -> MetaArray:
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return MetaArray(tuple(jax.eval_shape(lambda a: a.reshape(shape), self).shape), self.dtype)

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


def is_meta(x) -> bool:
    return type(x) is MetaArray


def any_meta(values) -> bool:
    """Whether a (possibly nested) tuple of kernel arguments holds a meta array."""
    for v in values:
        if type(v) is MetaArray:
            return True
        if isinstance(v, tuple) and any_meta(v):
            return True
    return False


def like(x) -> MetaArray:
    """A meta array of `x`'s shape and dtype (`x` is an array or a ShapeDtypeStruct)."""
    return MetaArray(tuple(x.shape), x.dtype)


def _to_meta(tree):
    return jax.tree_util.tree_map(
        lambda s: like(s) if isinstance(s, jax.ShapeDtypeStruct) else s, tree
    )


def _abstract(tree):
    """Kernel arguments for `eval_shape`: real arrays stand for their shape too."""
    return jax.tree_util.tree_map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype) if hasattr(a, "shape") else a, tree
    )


def eval_shape(fn, *args):
    """What `fn(*args)` would return, as meta arrays, computed without data."""
    try:
        out = jax.eval_shape(fn, *_abstract(args))
    except (
        jax.errors.ConcretizationTypeError,
        jax.errors.TracerArrayConversionError,
        jax.errors.TracerBoolConversionError,
        jax.errors.TracerIntegerConversionError,
    ) as e:
        raise NotImplementedError(VALUE_DEPENDENT) from e
    return _to_meta(out)


def _flat(values):
    for v in values:
        if isinstance(v, tuple):
            yield from _flat(v)
        else:
            yield v


def check_devices(values) -> None:
    """PyTorch's error when meta and real tensors meet in one op (real 0-dim ones may).

    The first tensor with dimensions sets the expected device, as in PyTorch's TensorIterator.
    """
    expected = None
    for v in _flat(values):
        if not hasattr(v, "shape") or (type(v) is not MetaArray and not v.shape):
            continue
        kind = "meta" if type(v) is MetaArray else "cpu"
        if expected is None:
            expected = kind
        elif kind != expected:
            raise RuntimeError(f"Tensor on device {kind} is not on the expected device {expected}!")


def no_values(a) -> bool:
    """Whether an array's values cannot be read on the host: a tracer or a meta array (value
    checks that PyTorch makes eagerly are skipped for both)."""
    return isinstance(a, jax.core.Tracer) or type(a) is MetaArray
