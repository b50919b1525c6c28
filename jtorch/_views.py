"""View steps: how a view is derived from its base, and how a write through it goes back.

A view (DESIGN 2) is its root tensor plus a chain of steps. Each step is a pure
function on jax arrays (`fwd`), its scatter inverse (`bwd(parent, child) ->
new parent`), and the stride bookkeeping PyTorch would do (`meta`). Replaying a
chain and writing back through it are compiled once per chain and root shape
and reused; under tracing they are plain jax calls, so they trace and
differentiate.

A step's `key` is what shapes its program; its `params` (integer positions:
where `x[i]`, `x[a:b]`, `narrow` or `as_strided` start) are Python ints the
compiled programs take as traced arguments (DESIGN 13), so reading or writing
`x[i]` at a new `i` reuses the program. `fwd(a, p)` and `bwd(parent, child, p)`
receive them as `p`.

Strides are in elements, as in PyTorch. A root is always contiguous, so every
view's element (i0, i1, ...) sits at `offset + sum(i_k * stride_k)` of the
root's flat storage: `Strided` uses that directly for `as_strided`/`unfold`.
"""

from __future__ import annotations

import functools
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from . import _meta, _programs, _stored


def contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


class Step:
    """One view step; `key` identifies its program, `params` are its traced positions."""

    key: tuple = ()
    params: tuple = ()
    changes_dtype = False

    def meta(self, shape, stride, offset):
        raise NotImplementedError

    def fwd(self, a, p=()):
        raise NotImplementedError

    def bwd(self, parent, child, p=()):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}{self.key}{self.params or ''}"


class Alias(Step):
    """`detach()`, `.data`, `view_as`, same-shape `view`: the same elements."""

    key = ("alias",)

    def meta(self, shape, stride, offset):
        return shape, stride, offset

    def fwd(self, a, p=()):
        return a

    def bwd(self, parent, child, p=()):
        return child


class Detach(Alias):
    """`detach()`: the same elements, with jax's gradient stopped (under jax transforms
    such as `jtorch.func.grad`, a detached tensor is a constant, as in PyTorch)."""

    key = ("detach",)

    def fwd(self, a, p=()):
        return jax.lax.stop_gradient(a)


class Reshape(Step):
    """`view(shape)` when the layout allows it; element order is unchanged."""

    def __init__(self, shape, new_stride):
        self.shape = tuple(shape)
        self.new_stride = tuple(new_stride)
        self.key = ("reshape", self.shape, self.new_stride)

    def meta(self, shape, stride, offset):
        return self.shape, self.new_stride, offset

    def fwd(self, a, p=()):
        return a.reshape(self.shape)

    def bwd(self, parent, child, p=()):
        return child.reshape(parent.shape)


class Index(Step):
    """Basic indexing: ints, `slice(start, stop, step)` with step > 0, and None.

    `idx` is normalised: one entry per parent dim (plus Nones), ints
    non-negative, slices with explicit bounds; `shape` is the parent's. The key holds
    each entry's kind and each slice's length and step; the positions (ints, starts of
    slices that are not a whole dim) are `params`, so `x[i]` and `x[a:a+n]` compile once
    for every `i` and `a`.
    """

    def __init__(self, idx: tuple, shape: tuple | None = None):
        self.idx = idx
        structure, params, d = [], [], 0
        for i in idx:
            if i is None:
                structure.append(None)
                continue
            if isinstance(i, slice):
                n = len(range(i.start, i.stop, i.step))
                # A whole dim (of the parent `shape`, when given) costs no argument; any
                # other slice's start is one, from 0 too (`X[0:64]` and `X[64:128]` share).
                static = n == 0 or (shape is not None and i.start == 0 and n == shape[d])
                structure.append((n, i.step, static))
                if not static:
                    params.append(i.start)
            else:
                structure.append("int")
                params.append(i)
            d += 1
        self.structure = tuple(structure)
        self.key = ("index", self.structure)
        self.params = tuple(params)

    def meta(self, shape, stride, offset):
        new_shape, new_stride, d = [], [], 0
        for i in self.idx:
            if i is None:
                new_shape.append(1)
                new_stride.append(stride[d] * shape[d] if d < len(shape) else 1)
                continue
            if isinstance(i, slice):
                n = len(range(i.start, i.stop, i.step))
                new_shape.append(n)
                new_stride.append(stride[d] * i.step)
                offset += i.start * stride[d]  # an empty slice too, as in PyTorch
            else:
                offset += i * stride[d]
            d += 1
        return tuple(new_shape), tuple(new_stride), offset

    def _window(self, p):
        """Per parent dim: (start, window size, step); and the view's shape."""
        it = iter(p)
        starts, sizes, steps, shape = [], [], [], []
        for e in self.structure:
            if e is None:
                shape.append(1)
            elif e == "int":
                starts.append(next(it))
                sizes.append(1)
                steps.append(1)
            else:
                n, step, static = e
                starts.append(0 if static else next(it))
                sizes.append((n - 1) * step + 1 if n else 0)
                steps.append(step)
                shape.append(n)
        return starts, sizes, steps, tuple(shape)

    def fwd(self, a, p=None):
        starts, sizes, steps, shape = self._window(self.params if p is None else p)
        w = jax.lax.dynamic_slice(a, starts, sizes) if starts else a
        if any(k != 1 for k in steps):
            w = w[tuple(slice(None, None, k) for k in steps)]
        return w.reshape(shape)

    def bwd(self, parent, child, p=None):
        starts, sizes, steps, _ = self._window(self.params if p is None else p)
        if not starts:
            return child.reshape(parent.shape)
        child = child.reshape(tuple(-(-n // k) for n, k in zip(sizes, steps)))
        if any(k != 1 for k in steps):
            strided = tuple(slice(None, None, k) for k in steps)
            child = jax.lax.dynamic_slice(parent, starts, sizes).at[strided].set(child)
        return jax.lax.dynamic_update_slice(parent, child.astype(parent.dtype), starts)


class Permute(Step):
    def __init__(self, perm):
        self.perm = tuple(perm)
        self.inv = tuple(int(i) for i in np.argsort(self.perm))
        self.key = ("permute", self.perm)

    def meta(self, shape, stride, offset):
        return tuple(shape[p] for p in self.perm), tuple(stride[p] for p in self.perm), offset

    def fwd(self, a, p=()):
        return jnp.transpose(a, self.perm)

    def bwd(self, parent, child, p=()):
        return jnp.transpose(child, self.inv)


class Expand(Step):
    def __init__(self, shape):
        self.shape = tuple(shape)
        self.key = ("expand", self.shape)

    def meta(self, shape, stride, offset):
        lead = len(self.shape) - len(shape)
        new_stride = [0] * lead
        for n_old, s_old, n_new in zip(shape, stride, self.shape[lead:]):
            new_stride.append(s_old if n_old == n_new else 0)
        return self.shape, tuple(new_stride), offset

    def fwd(self, a, p=()):
        return jnp.broadcast_to(a, self.shape)

    def bwd(self, parent, child, p=()):
        # Only reached for writes that touch no element twice (size-1 expansions).
        lead = child.ndim - parent.ndim
        child = child.reshape(child.shape[lead:]) if lead else child
        axes = tuple(i for i, (p, c) in enumerate(zip(parent.shape, child.shape)) if p != c)
        return jnp.take(child, jnp.zeros((), jnp.int32), axis=axes[0]) if axes else child


class Diagonal(Step):
    def __init__(self, offset, dim1, dim2):
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2
        self.key = ("diagonal", offset, dim1, dim2)

    def meta(self, shape, stride, offset):
        d1, d2, off = self.dim1, self.dim2, self.offset
        n = max(0, min(shape[d1] + min(off, 0), shape[d2] - max(off, 0)))
        if n:
            offset += off * stride[d2] if off >= 0 else -off * stride[d1]
        keep = [i for i in range(len(shape)) if i not in (d1, d2)]
        return (
            tuple(shape[i] for i in keep) + (n,),
            tuple(stride[i] for i in keep) + (stride[d1] + stride[d2],),
            offset,
        )

    def _rows_cols(self, shape):
        n1, n2 = shape[self.dim1], shape[self.dim2]
        off = self.offset
        n = max(0, min(n1 + min(off, 0), n2 - max(off, 0)))
        rows = np.arange(n) + max(-off, 0)
        return rows, rows + off

    def fwd(self, a, p=()):
        return jnp.diagonal(a, self.offset, self.dim1, self.dim2)

    def bwd(self, parent, child, p=()):
        rows, cols = self._rows_cols(parent.shape)
        moved = jnp.moveaxis(parent, (self.dim1, self.dim2), (-2, -1))
        moved = moved.at[..., rows, cols].set(child)
        return jnp.moveaxis(moved, (-2, -1), (self.dim1, self.dim2))


class Strided(Step):
    """`as_strided(size, stride, offset)` and `unfold`: elements picked from the flat storage.

    Always the first step of a chain: PyTorch's as_strided ignores how the
    tensor it is called on was derived and indexes the storage. The offset is a param.
    """

    def __init__(self, size, stride, offset):
        self.size, self.stride, self.offset = tuple(size), tuple(stride), int(offset)
        self.key = ("strided", self.size, self.stride)
        self.params = (self.offset,)

    @functools.cached_property
    def flat_index(self) -> np.ndarray:
        """Each element's position in the flat storage, from the offset."""
        idx = np.zeros(self.size, dtype=np.int64)
        for d, (n, s) in enumerate(zip(self.size, self.stride)):
            shape = [1] * len(self.size)
            shape[d] = n
            idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
        return idx

    def meta(self, shape, stride, offset):
        return self.size, self.stride, self.offset

    def fwd(self, a, p=None):
        offset = self.offset if p is None else p[0]
        return a.reshape(-1)[self.flat_index + offset]

    def bwd(self, parent, child, p=None):
        offset = self.offset if p is None else p[0]
        flat = parent.reshape(-1).at[self.flat_index + offset].set(child)
        return flat.reshape(parent.shape)


class RealPart(Step):
    """`x.real` of a complex tensor: a view onto the real parts."""

    key = ("real",)
    changes_dtype = True

    def meta(self, shape, stride, offset):
        return shape, tuple(s * 2 for s in stride), offset * 2

    def fwd(self, a, p=()):
        return jnp.real(a)

    def bwd(self, parent, child, p=()):
        return jax.lax.complex(child.astype(jnp.real(parent).dtype), jnp.imag(parent))


class ImagPart(Step):
    key = ("imag",)
    changes_dtype = True

    def meta(self, shape, stride, offset):
        return shape, tuple(s * 2 for s in stride), offset * 2 + 1

    def fwd(self, a, p=()):
        return jnp.imag(a)

    def bwd(self, parent, child, p=()):
        return jax.lax.complex(jnp.real(parent), child.astype(jnp.real(parent).dtype))


class AsReal(Step):
    """`view_as_real`: complex (...,) -> real (..., 2)."""

    key = ("as_real",)
    changes_dtype = True

    def meta(self, shape, stride, offset):
        return tuple(shape) + (2,), tuple(s * 2 for s in stride) + (1,), offset * 2

    def fwd(self, a, p=()):
        return jnp.stack([jnp.real(a), jnp.imag(a)], axis=-1)

    def bwd(self, parent, child, p=()):
        return jax.lax.complex(child[..., 0], child[..., 1])


class AsComplex(Step):
    """`view_as_complex`: real (..., 2) -> complex (...,)."""

    key = ("as_complex",)
    changes_dtype = True

    def meta(self, shape, stride, offset):
        return tuple(shape[:-1]), tuple(s // 2 for s in stride[:-1]), offset // 2

    def fwd(self, a, p=()):
        return jax.lax.complex(a[..., 0], a[..., 1])

    def bwd(self, parent, child, p=()):
        return jnp.stack([jnp.real(child), jnp.imag(child)], axis=-1)


class Bitcast(Step):
    """`view(dtype)` with an element size that is unchanged."""

    changes_dtype = True

    def __init__(self, np_dtype):
        self.np_dtype = np.dtype(np_dtype)
        self.key = ("bitcast", str(self.np_dtype))

    def meta(self, shape, stride, offset):
        return shape, stride, offset

    def fwd(self, a, p=()):
        return jax.lax.bitcast_convert_type(a, self.np_dtype)

    def bwd(self, parent, child, p=()):
        return jax.lax.bitcast_convert_type(child, parent.dtype)


def _as_bytes(a):
    """The bytes of `a`'s elements along a new last axis folded into the last one:
    (..., n) of any dtype -> (..., n * itemsize) uint8."""
    if jnp.issubdtype(a.dtype, jnp.complexfloating):
        a = jnp.stack([jnp.real(a), jnp.imag(a)], axis=-1).reshape(a.shape[:-1] + (-1,))
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    b = jax.lax.bitcast_convert_type(a, np.uint8)
    return b.reshape(a.shape[:-1] + (-1,))


def _from_bytes(b, np_dtype):
    """The inverse of `_as_bytes`: (..., m) uint8 -> (..., m // itemsize) of `np_dtype`."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "c":
        parts = _from_bytes(b, np.finfo(np_dtype).dtype)
        parts = parts.reshape(parts.shape[:-1] + (-1, 2))
        return jax.lax.complex(parts[..., 0], parts[..., 1])
    if np_dtype == np.bool_:
        return b != 0
    if np_dtype.itemsize > 1:
        b = b.reshape(b.shape[:-1] + (-1, np_dtype.itemsize))
    return jax.lax.bitcast_convert_type(b, np_dtype)


class BitcastResize(Step):
    """`view(dtype)` between element sizes that differ: the last dimension grows or shrinks
    by their ratio (its stride is 1), the other strides and the offset are rescaled."""

    changes_dtype = True

    def __init__(self, np_dtype, old_size: int):
        self.np_dtype = np.dtype(np_dtype)
        self.old_size = old_size
        self.key = ("bitcast_resize", str(self.np_dtype), old_size)

    def meta(self, shape, stride, offset):
        new = self.np_dtype.itemsize
        if new < self.old_size:
            k = self.old_size // new
            return (
                tuple(shape[:-1]) + (shape[-1] * k,),
                tuple(s * k for s in stride[:-1]) + (1,),
                offset * k,
            )
        k = new // self.old_size
        return (
            tuple(shape[:-1]) + (shape[-1] // k,),
            tuple(s // k for s in stride[:-1]) + (1,),
            offset // k,
        )

    def fwd(self, a, p=()):
        return _from_bytes(_as_bytes(a), self.np_dtype)

    def bwd(self, parent, child, p=()):
        return _from_bytes(_as_bytes(child.astype(self.np_dtype)), parent.dtype)


# ---------------------------------------------------------------------------
# Chains: compiled replay and write-back, one per (chain key, root shape and dtype), from a
# bounded cache; each takes the chain's params as traced arguments.

VIEWS = _programs.ProgramCache("views", share=0.5)


def _chain_key(chain):
    return tuple(s.key for s in chain)


def params(chain) -> tuple:
    """The chain's positions, one tuple per step (the programs' last argument)."""
    return tuple(s.params for s in chain)


def _apply(chain, a, p):
    for s, ps in zip(chain, p):
        a = s.fwd(a, ps)
    return a


def replay_fn(chain, root):
    """The compiled `(root, params) -> view` function of a chain (autograd differentiates it
    too), for a root array (or tracer) like `root`."""
    key = ("replay", _chain_key(chain), root.shape, root.dtype)
    fn = VIEWS.get(key)
    if fn is None:
        fn = VIEWS.put(key, _stored.program(jax.jit(lambda a, p: _apply(chain, a, p)), key))
    return fn


def replay(chain, root_value):
    """The view's value derived from its root's current value."""
    if type(root_value) is _meta.MetaArray:
        return _meta.eval_shape(replay_fn(chain, root_value), root_value, params(chain))
    value = _host_replay(chain, root_value)
    if value is not None:
        return value
    try:
        return replay_fn(chain, root_value)(root_value, params(chain))
    except jax.errors.JaxRuntimeError as e:  # a huge expand() materialised: PyTorch's OOM
        from ._errors import translate_runtime_error

        raise translate_runtime_error(e) from e


# A view of a shape seen the first few times is copied out on the host: a view is its
# root's elements at `offset + sum(i_k * stride_k)` (the stride algebra of `meta`), which
# numpy gathers exactly, where a compiled replay would cost a compile per new shape (a
# `generate` loop's growing length). A replay that keeps coming back gets its program once
# the host's copies of it have cost about a compile (`_programs.Rent`).
_HOST_MAX = 1 << 22
_replays_seen = _programs.Rent()


def _host_replay(chain, root):
    """The view's value copied out on the host, or None where it gets a compiled replay."""
    if (
        isinstance(root, jax.core.Tracer)
        or root.size > _HOST_MAX
        or any(s.changes_dtype for s in chain)
        or _programs.tracing()
    ):
        return None
    key = ("replay", _chain_key(chain), root.shape, root.dtype)
    if key in VIEWS or _replays_seen.due(key):
        return None
    start = time.perf_counter()
    devices = root.devices()
    if len(devices) != 1:
        return None
    device = next(iter(devices))
    if device.platform != "cpu":
        return None
    shape, stride, offset = root.shape, contiguous_strides(root.shape), 0
    for s in chain:
        shape, stride, offset = s.meta(shape, stride, offset)
    flat = np.asarray(root).reshape(-1)
    if math.prod(shape) == 0:
        view = np.empty(shape, flat.dtype)
    else:
        # (a layout reaching outside the root is left to the compiled replay's checks)
        if (
            offset < 0
            or min(stride, default=0) < 0
            or offset + sum((n - 1) * k for n, k in zip(shape, stride)) >= flat.size
        ):
            return None
        # numpy's own dtypes stride as they are; ml_dtypes' (bfloat16, float8) are strided
        # as unsigned integers of their width (as_strided cannot rebuild their dtype)
        dtype = flat.dtype
        bits = flat if dtype.isbuiltin == 1 else flat.view(np.dtype(f"u{dtype.itemsize}"))
        view = np.lib.stride_tricks.as_strided(
            bits[offset:], shape, [k * bits.itemsize for k in stride]
        )
        if bits is not flat:
            view = np.array(view).view(dtype)
    # (committed as the root is: an uncommitted root's view may meet laid-out arrays)
    out = _programs.to_device(np.array(view), device, root.committed)
    _replays_seen.pay(key, time.perf_counter() - start)
    return out


def _write_through(chain, root, child, p):
    parents = [root]
    for s, ps in zip(chain[:-1], p):
        parents.append(s.fwd(parents[-1], ps))
    child = child.astype(chain[-1].fwd(parents[-1], p[-1]).dtype)
    for s, parent, ps in zip(reversed(chain), reversed(parents), reversed(p)):
        child = s.bwd(parent, child, ps)
    return child


def writeback_fn(chain, root):
    """The compiled `(root, child, params) -> new root` function writing `child` through a
    chain, for a root like `root`.

    `child` is cast to the view's dtype first, so autograd can differentiate a write of a
    wider result (an in-place op computed in float64 into a float32 view).
    """
    key = ("write", _chain_key(chain), root.shape, root.dtype)
    fn = VIEWS.get(key)
    if fn is None:
        write = jax.jit(lambda r, child, p: _write_through(chain, r, child, p))
        fn = VIEWS.put(key, _stored.program(write, key))
    return fn


def writeback(chain, root_value, child_value):
    """The root's new value after `child_value` is written through the view."""
    if type(root_value) is _meta.MetaArray:
        return root_value
    if type(child_value) is _meta.MetaArray:
        raise NotImplementedError(_meta.NO_DATA)
    return writeback_fn(chain, root_value)(root_value, child_value, params(chain))


# A root tensor whose own layout was changed in place (`t_()`, `squeeze_()`, `set_()`) keeps
# a chain from its storage. Autograd differentiates a root's views with respect to the
# root's value, so for such a root the storage is rebuilt from the root's value first.


def rooted_replay_fn(root_chain, chain, storage):
    """The compiled `(storage, root, root_params, params) -> view` function of a view of a
    restrided root."""
    key = ("rooted-replay", _chain_key(root_chain), _chain_key(chain), storage.shape, storage.dtype)
    fn = VIEWS.get(key)
    if fn is None:

        def run(storage, root, root_p, p):
            return _apply(chain, _write_through(root_chain, storage, root, root_p), p)

        fn = VIEWS.put(key, _stored.program(jax.jit(run), key))
    return fn


def rooted_writeback_fn(root_chain, chain, storage):
    """The compiled `(storage, root, child, root_params, params) -> new root` function for a
    restrided root."""
    key = ("rooted-write", _chain_key(root_chain), _chain_key(chain), storage.shape, storage.dtype)
    fn = VIEWS.get(key)
    if fn is None:

        def run(storage, root, child, root_p, p):
            full = _write_through(
                chain, _write_through(root_chain, storage, root, root_p), child, p
            )
            return _apply(root_chain, full, root_p)

        fn = VIEWS.put(key, _stored.program(jax.jit(run), key))
    return fn


# ---------------------------------------------------------------------------
# PyTorch's stride algebra


def view_strides(old_shape, old_stride, new_shape):
    """PyTorch's computeStride: strides for `view(new_shape)`, or None if the layout forbids it."""
    if is_contiguous(old_shape, old_stride):
        return contiguous_strides(new_shape)
    if math.prod(old_shape) == 0:
        return contiguous_strides(new_shape) if old_shape != tuple(new_shape) else old_stride
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1] if old_stride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1
            and old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


def is_contiguous(shape, stride) -> bool:
    expected = 1
    for n, s in zip(reversed(shape), reversed(stride)):
        if n == 0:
            return True
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def has_internal_overlap(shape, stride) -> bool:
    """PyTorch's `has_internal_overlap(t) == MemOverlap::Yes`: a dimension of more than one
    element with stride 0 (an expanded tensor), which writes refuse. Other layouts that may
    overlap (an `as_strided` view) are, as in PyTorch, not looked for ("too hard")."""
    return any(s == 0 and n > 1 for n, s in zip(shape, stride))


def non_overlapping_and_dense(shape, stride) -> bool:
    """`Tensor.is_non_overlapping_and_dense`: some order of the dimensions makes the strides
    those of a contiguous tensor (every element in one gapless block; size-1 dims aside)."""
    expected = 1
    for s, n in sorted((s, n) for n, s in zip(shape, stride) if n != 1):
        if s != expected:
            return False
        expected *= n
    return True
