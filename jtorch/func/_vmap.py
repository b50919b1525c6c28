"""`torch.func.vmap` on `jax.vmap`.

The batched Tensor leaves of the arguments become the inputs of one
`jax.vmap`ped function (unbatched Tensors are inputs too, with axis `None`, so
the call can be recorded on the eager tape); everything else is passed through
unchanged. Outputs come back batched on axis 0 and are moved to `out_dims`.

Randomness: jtorch draws every random number from `Generator.next_key`. While
the function is traced, `randomness='error'` makes that raise PyTorch's error,
`'different'` derives keys from one per batch element (passed in as a batched
input), and `'same'` leaves it alone (one key for the whole batch).
"""

from __future__ import annotations

import contextlib
import functools

import jax
import jax.numpy as jnp

from .. import _random
from .._tensor import Tensor, wrap
from . import _pytree
from ._pytree import _Out, flatten

__all__ = ["vmap"]

_RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either "
    "use the 'same' or 'different' randomness flags on vmap or perform the "
    "randomness operation out of vmap"
)

# A batched value reaching Python (`if x.sum() > 0`, `.item()`, `np.asarray`).
_DATA_DEPENDENT = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerIntegerConversionError,
)
_CONTROL_FLOW = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
    "control flow. We don't support that yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues ."
)


@contextlib.contextmanager
def randomness_mode(randomness: str, keys):
    """Makes random draws follow vmap's `randomness` while a batched function is traced."""
    if randomness == "same":
        yield
        return
    original = _random.Generator.next_key
    if randomness == "error":

        def next_key(self):
            raise RuntimeError(_RANDOM_ERROR)
    else:
        count = [0]

        def next_key(self):
            count[0] += 1
            return jax.random.fold_in(keys, count[0])

    _random.Generator.next_key = next_key
    try:
        yield
    finally:
        _random.Generator.next_key = original


def _fname(func) -> str:
    return getattr(func, "__name__", repr(func))


def _dims_per_leaf(dims, tree, where):
    """`dims` (an int, None, or a prefix of `tree`'s structure) for each leaf of `tree`."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(flatten(tree)[0])
    if (
        isinstance(dims, (tuple, list))
        and isinstance(tree, (tuple, list))
        and len(dims) == len(tree)
    ):
        return [d for sub, t in zip(dims, tree) for d in _dims_per_leaf(sub, t, where)]
    if isinstance(dims, dict) and isinstance(tree, dict) and set(dims) == set(tree):
        # jax orders a dict's leaves by sorted key
        return [d for k in sorted(tree) for d in _dims_per_leaf(dims[k], tree[k], where)]
    raise ValueError(where(dims, tree))


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size: int | None = None):
    """Matches `torch.func.vmap` (nested `in_dims`/`out_dims`, `randomness`, `chunk_size`)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or "
            f"'same'. Got {randomness}"
        )
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    if not (in_dims is None or isinstance(in_dims, (int, tuple))):
        raise ValueError(
            f"vmap({_fname(func)}, in_dims={in_dims}, ...): expected `in_dims` "
            "to be int or a (potentially nested) tuple matching the structure "
            f"of inputs, got: {type(in_dims)}."
        )

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    name = _fname(func)
    head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        raise ValueError(
            f"{head}: in_dims is not compatible with the structure of `inputs`. "
            f"in_dims has {len(in_dims)} entries but inputs has {len(args)}."
        )

    def incompatible(dims, tree):
        return (
            f"{head}: in_dims is not compatible with the structure of `inputs`. in_dims "
            f"has structure {dims} but inputs has structure {flatten(tree)[1]}."
        )

    leaves, treedef = flatten(args)
    dims = _dims_per_leaf(in_dims, args, incompatible)
    tensors, axes, sizes = [], [], []
    for x, d in zip(leaves, dims):
        if d is not None and not isinstance(x, Tensor):
            raise ValueError(
                f"{head}: Got in_dim={d} for an input but the input is of type "
                f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                "None as the respective in_dim"
            )
        if isinstance(x, Tensor):
            if d is not None:
                n = x.dim()
                if not -n <= d < n:
                    raise ValueError(
                        f"{head}: Got in_dim={d} for some input, but that input "
                        f"is a Tensor of dimensionality {n} so expected in_dim to "
                        f"satisfy -{n} <= in_dim < {n}."
                    )
                d %= n
                sizes.append(x.shape[d])
            tensors.append(x)
            axes.append(d)
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped "
            f"dimension, got sizes {sizes} for the mapped dimension"
        )
    batch = sizes[0]
    box = _Out()

    def body(keys, *arrays):
        it = iter(arrays)
        new = [wrap(next(it)) if isinstance(x, Tensor) else x for x in leaves]
        with randomness_mode(randomness, keys):
            try:
                out = func(*treedef.unflatten(new), **kwargs)
            except _DATA_DEPENDENT as e:
                raise RuntimeError(_CONTROL_FLOW) from e
        return box.split(out)

    keys = None
    key_axis = None
    if randomness == "different":
        keys = jax.random.split(_random.default_generator.next_key(), batch)
        key_axis = 0

    def fn(*arrays):
        mapped = jax.vmap(body, in_axes=(key_axis, *axes))
        if chunk_size is None or chunk_size >= batch:
            return tuple(mapped(keys, *arrays))
        parts = []
        for start in range(0, batch, chunk_size):
            stop = min(start + chunk_size, batch)
            piece = [
                a if ax is None else jax.lax.slice_in_dim(a, start, stop, axis=ax)
                for a, ax in zip(arrays, axes)
            ]
            parts.append(mapped(None if keys is None else keys[start:stop], *piece))
        return tuple(jnp.concatenate(p, axis=0) for p in zip(*parts))

    res = _pytree.run("VmapBackward", fn, tensors)
    return _place_outputs(box, res, out_dims, name)


def _place_outputs(box: _Out, res, out_dims, name):
    """Moves each output's batch axis (0) to its `out_dims` entry."""
    out_tree = box.join(res)

    def incompatible(dims, tree):
        return (
            f"vmap({name}, ...): out_dims is not compatible with the structure of "
            f"`outputs`. out_dims has structure {dims} but outputs has structure "
            f"{flatten(tree)[1]}."
        )

    if isinstance(out_dims, tuple) and len(out_dims) == 1 and not isinstance(out_tree, tuple):
        out_dims = out_dims[0]
    leaves, treedef = flatten(out_tree)
    dims = _dims_per_leaf(out_dims, out_tree, incompatible)
    placed = []
    for x, d in zip(leaves, dims):
        if not isinstance(x, Tensor):
            if d is not None:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` must only return Tensors, got "
                    f"type {type(x)}. Did you mean to set out_dims= to None for "
                    "output?"
                )
            placed.append(x)
        elif d is None:
            placed.append(x[0])
        else:
            n = x.dim()
            if not -n <= d < n:
                raise ValueError(
                    f"vmap({name}, ...): Got out_dim={d} for an output of dimensionality {n - 1}"
                )
            placed.append(x if d % n == 0 else x.movedim(0, d))
    return treedef.unflatten(placed)
