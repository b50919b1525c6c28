"""Pooling: max/avg/lp pools, adaptive pools, max_unpool and fractional max pools.

Windows without indices run through `lax.reduce_window`; floating max pools through
`_window_max`, whose gradient avoids XLA's slow `select_and_scatter`. Pools that return
indices gather each window with static index arrays, so the argmax can be mapped back to the
index into the flattened spatial input, as PyTorch reports it.
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ... import _random
from ..._dtype import c10_name
from ..._tensor import wrap
from .._registry import NONE, TI, T, composite, op
from ._window_max import MAX_UNROLLED, window_max


def _tuple(value, nd: int, what: str, name: str) -> tuple:
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return tuple(value) * nd
        if len(value) != nd:
            kinds = {1: "int", 2: "two ints", 3: "three ints"}[nd]
            raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of {kinds}")
        return tuple(value)
    return (value,) * nd


def _lowest(dtype):
    if jnp.issubdtype(dtype, jnp.floating):
        return -jnp.inf
    return jnp.iinfo(dtype).min


def _out_len(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape: floor or ceil, minus a window starting in the padding."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _check_input(input, nd, name):
    if input.ndim not in (nd + 1, nd + 2) or any(n == 0 for n in input.shape[-nd - 1 :]):
        if nd == 1:
            raise RuntimeError(
                f"{name}: Expected 2D or 3D (batch mode) tensor with optional 0 "
                f"dim batch size for input, but got:{list(input.shape)}"
            )
        raise RuntimeError(
            f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 "
            f"dim batch size for input, but got:{list(input.shape)}"
        )


def _params(input, nd, name, kernel_size, stride, padding, dilation, ceil_mode):
    k = _tuple(kernel_size, nd, "kernel_size", name)
    s = _tuple(stride if stride not in (None, (), []) else None, nd, "stride", name) or k
    p = _tuple(padding, nd, "padding", name)
    d = _tuple(dilation, nd, "dilation", name)
    _check_input(input, nd, name)
    if any(v <= 0 for v in k):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got {', '.join(map(str, k))}"
        )
    if any(v <= 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if any(v <= 0 for v in d):
        raise RuntimeError(
            f"dilation should be greater than zero, but got {', '.join(map(str, d))}"
        )
    for kk, pp, dd in zip(k, p, d):
        if pp < 0 or pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got "
                f"pad={pp}, kernel_size={kk} and dilation={dd}"
            )
    spatial = input.shape[-nd:]
    out = tuple(
        _out_len(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(spatial, k, s, p, d)
    )
    if any(o < 1 for o in out):
        lead = input.shape[-nd - 1 : -nd]
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, lead + spatial))}). "
            f"Calculated output size: ({'x'.join(map(str, lead + out))}). "
            f"Output size is too small"
        )
    return k, s, p, d, out


def _window_pads(spatial, k, s, p, d, out):
    """reduce_window padding: p before, and enough after for the last (ceil-mode) window."""
    pads = []
    for n, kk, ss, pp, dd, o in zip(spatial, k, s, p, d, out):
        need = (o - 1) * ss + dd * (kk - 1) + 1
        pads.append((pp, max(need - n - pp, 0)))
    return pads


def _reduce(x, init, fn, nd, k, s, pads, d=None):
    lead = x.ndim - nd
    return jax.lax.reduce_window(
        x,
        np.asarray(init, x.dtype),
        fn,
        (1,) * lead + k,
        (1,) * lead + s,
        [(0, 0)] * lead + list(pads),
        window_dilation=None if d is None else (1,) * lead + d,
    )


def _gather_windows(x, starts_steps):
    """Windows of `x`'s trailing dims: (..., *out, K) values, (*out, K) flat indices, mask.

    `starts_steps` holds, per spatial dim, a static (out, k) array of input positions (may lie
    outside the input: those entries are masked).
    """
    nd = len(starts_steps)
    spatial = x.shape[-nd:]
    idx, valid = [], np.ones((), bool)
    flat = np.zeros((), np.int64)
    for i, pos in enumerate(starts_steps):
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = pos.shape
        pos = pos.reshape(shape)
        ok = (pos >= 0) & (pos < spatial[i])
        valid = valid & ok
        clipped = np.clip(pos, 0, spatial[i] - 1)
        idx.append(clipped)
        flat = flat * spatial[i] + clipped
    out_shape = tuple(p.shape[0] for p in starts_steps)
    n_k = math.prod(p.shape[1] for p in starts_steps)
    vals = x[(Ellipsis,) + tuple(idx)].reshape(x.shape[:-nd] + out_shape + (n_k,))
    flat = np.broadcast_to(flat, out_shape + flat.shape[nd:]).reshape(out_shape + (n_k,))
    valid = np.broadcast_to(valid, out_shape + valid.shape[nd:]).reshape(out_shape + (n_k,))
    return vals, flat, valid


def _max_with_indices(vals, flat, valid):
    vals = jnp.where(valid, vals, _lowest(vals.dtype))
    # PyTorch's kernels scan a window in order and take an element when `val > max ||
    # isnan(val)`: the first maximum, but the last NaN (argmax alone would give the first).
    arg = jnp.argmax(vals, axis=-1)
    if jnp.issubdtype(vals.dtype, jnp.floating):
        nan = jnp.isnan(vals)
        last_nan = vals.shape[-1] - 1 - jnp.argmax(nan[..., ::-1], axis=-1)
        arg = jnp.where(nan.any(axis=-1), last_nan, arg)
    best = jnp.take_along_axis(vals, arg[..., None], axis=-1)[..., 0]
    index = jnp.take_along_axis(
        jnp.broadcast_to(jnp.asarray(flat), vals.shape), arg[..., None], axis=-1
    )[..., 0]
    return best, index


def _max_pool(input, nd, name, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    k, s, p, d, out = _params(input, nd, name, kernel_size, stride, padding, dilation, ceil_mode)
    if not return_indices and jnp.issubdtype(input.dtype, jnp.floating):
        if math.prod(k) <= MAX_UNROLLED:
            pads = tuple(_window_pads(input.shape[-nd:], k, s, p, d, out))
            return window_max(input, k, s, pads, d)
    # jax has no VJP for a dilated max reduce_window: dilated pools gather their windows.
    if not return_indices and all(dd == 1 for dd in d):
        pads = _window_pads(input.shape[-nd:], k, s, p, d, out)
        return _reduce(input, _lowest(input.dtype), jax.lax.max, nd, k, s, pads, d)
    positions = [
        np.arange(o)[:, None] * ss - pp + np.arange(kk)[None, :] * dd
        for o, kk, ss, pp, dd in zip(out, k, s, p, d)
    ]
    best, index = _max_with_indices(*_gather_windows(input, positions))
    return (best, index) if return_indices else best


def _pool_node(nd: int, name: str) -> str:
    """PyTorch's autograd node of an `nd`-d pool: its 1-d pools run the 2-d kernel and
    squeeze (SqueezeBackward1); `name` has `{}` where the rank goes."""
    return "SqueezeBackward1" if nd == 1 else name.format(nd)


def _max_pool_op(nd):
    def impl(
        input: T,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        ceil_mode=False,
        return_indices=False,
    ):
        return _max_pool(
            input,
            nd,
            f"max_pool{nd}d",
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
            return_indices,
        )

    impl.__name__ = f"max_pool{nd}d"
    impl.__doc__ = f"Matches `torch.nn.functional.max_pool{nd}d`."
    return op(
        impl,
        name=f"nn.functional.max_pool{nd}d",
        aliases=(f"max_pool{nd}d",),
        promote=NONE,
        method=False,
        out=False,
        node=_pool_node(nd, "MaxPool{}DWithIndicesBackward0"),
    )


max_pool1d = _max_pool_op(1)
max_pool2d = _max_pool_op(2)
max_pool3d = _max_pool_op(3)


def _with_indices(nd):
    def impl(
        input,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        ceil_mode=False,
        return_indices=False,
    ):
        return tuple(_MAX_POOLS[nd](input, kernel_size, stride, padding, dilation, ceil_mode, True))

    impl.__name__ = f"max_pool{nd}d_with_indices"
    impl.__doc__ = f"Matches `torch.nn.functional.max_pool{nd}d_with_indices`."
    return composite(impl, name=f"nn.functional.max_pool{nd}d_with_indices", method=False)


_MAX_POOLS = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}
max_pool1d_with_indices = _with_indices(1)
max_pool2d_with_indices = _with_indices(2)
max_pool3d_with_indices = _with_indices(3)


def _divisor(spatial, k, s, p, out, count_include_pad):
    """Per-output window sizes (static) as PyTorch counts them."""
    total = np.ones((), np.int64)
    for i, (n, kk, ss, pp, o) in enumerate(zip(spatial, k, s, p, out)):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, n + pp)
        size = end - start if count_include_pad else (np.minimum(end, n) - np.maximum(start, 0))
        shape = [1] * len(k)
        shape[i] = o
        total = total * size.reshape(shape)
    return total


def _avg_pool(
    input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    name = f"avg_pool{nd}d"
    k, s, p, d, out = _params(input, nd, name, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    pads = _window_pads(input.shape[-nd:], k, s, p, d, out)
    total = _reduce(input, 0, jax.lax.add, nd, k, s, pads)
    if divisor_override is not None:
        div = np.asarray(divisor_override, np.int64)
    else:
        div = _divisor(input.shape[-nd:], k, s, p, out, count_include_pad)
    if jnp.issubdtype(input.dtype, jnp.integer):
        # Integer averages truncate toward zero, as C++ integer division does.
        div = jnp.broadcast_to(jnp.asarray(div, input.dtype), total.shape)
        return jax.lax.div(total, div)
    return total / jnp.asarray(div, input.dtype)


@op(
    name="nn.functional.avg_pool1d",
    aliases=("avg_pool1d",),
    promote=NONE,
    method=False,
    out=False,
    node=_pool_node(1, "AvgPool{}DBackward0"),
)
def avg_pool1d(
    input: T, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
):
    """Matches `torch.nn.functional.avg_pool1d`."""
    return _avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@op(
    name="nn.functional.avg_pool2d",
    promote=NONE,
    method=False,
    out=False,
    node=_pool_node(2, "AvgPool{}DBackward0"),
)
def avg_pool2d(
    input: T,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """Matches `torch.nn.functional.avg_pool2d`."""
    return _avg_pool(
        input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


@op(
    name="nn.functional.avg_pool3d",
    promote=NONE,
    method=False,
    out=False,
    node=_pool_node(3, "AvgPool{}DBackward0"),
)
def avg_pool3d(
    input: T,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """Matches `torch.nn.functional.avg_pool3d`."""
    return _avg_pool(
        input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def _lp_pool(input, nd, norm_type, kernel_size, stride, ceil_mode):
    k = _tuple(kernel_size, nd, "kernel_size", f"lp_pool{nd}d")
    # PyTorch: avg_pool of x**p, scaled back to a sum, then sign(s) * relu(|s|) ** (1/p).
    pooled = _avg_pool(input**norm_type, nd, k, stride, 0, ceil_mode, True, None)
    pooled = jnp.sign(pooled) * jax.nn.relu(jnp.abs(pooled)) * math.prod(k)
    return pooled ** (1.0 / norm_type)


@op(name="nn.functional.lp_pool1d", promote=NONE, method=False, out=False)
def lp_pool1d(input: T, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Matches `torch.nn.functional.lp_pool1d`."""
    return _lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode)


@op(name="nn.functional.lp_pool2d", promote=NONE, method=False, out=False)
def lp_pool2d(input: T, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Matches `torch.nn.functional.lp_pool2d`."""
    return _lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode)


@op(name="nn.functional.lp_pool3d", promote=NONE, method=False, out=False)
def lp_pool3d(input: T, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Matches `torch.nn.functional.lp_pool3d`."""
    return _lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode)


# ---------------------------------------------------------------------------
# Adaptive pools


def _adaptive_positions(size, out):
    """Window i covers [floor(i*n/o), ceil((i+1)*n/o)); padded with -1 to the widest window."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    width = int((end - start).max()) if out else 0
    pos = start[:, None] + np.arange(width)[None, :]
    return np.where(pos < end[:, None], pos, -1), end - start


def _adaptive_setup(input, nd, output_size, name):
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                f"tensor for argument #1 'self' (while checking arguments for "
                f"{name})"
            )
        # PyTorch's max kernels write "but got: [..]", its avg kernels "but got [..]".
        sep = ": " if "max" in name else " "
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep}{list(input.shape)}"
        )
    if not jnp.issubdtype(input.dtype, jnp.floating):
        kernel = name.replace("1d", "2d")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{c10_name(input.dtype)}'")
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    if len(sizes) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    if nd == 1 and sizes[0] is None:
        # Only the 2d and 3d pools take None ("keep this size"), as in PyTorch.
        raise TypeError(f"{name}(): argument 'output_size' must be tuple of ints, not tuple")
    spatial = input.shape[-nd:]
    return tuple(n if o is None else o for n, o in zip(spatial, sizes))


def adaptive_avg(input, nd, output_size):
    name = f"adaptive_avg_pool{nd}d"
    out = _adaptive_setup(input, nd, output_size, name)
    if any(o == 0 for o in out):
        return jnp.zeros(input.shape[:-nd] + out, input.dtype)
    pos, counts = zip(*(_adaptive_positions(n, o) for n, o in zip(input.shape[-nd:], out)))
    vals, _, valid = _gather_windows(input, list(pos))
    total = jnp.sum(jnp.where(valid, vals, 0), axis=-1)
    count = np.ones((), np.int64)
    for i, c in enumerate(counts):
        shape = [1] * nd
        shape[i] = c.shape[0]
        count = count * c.reshape(shape)
    return total / jnp.asarray(count, input.dtype)


def _adaptive_max(input, nd, output_size, return_indices):
    name = f"adaptive_max_pool{nd}d"
    out = _adaptive_setup(input, nd, output_size, name)
    pos = [_adaptive_positions(n, o)[0] for n, o in zip(input.shape[-nd:], out)]
    best, index = _max_with_indices(*_gather_windows(input, pos))
    return (best, index) if return_indices else best


def _adaptive_ops(nd):
    def avg(input: T, output_size):
        return adaptive_avg(input, nd, output_size)

    def mx(input: T, output_size, return_indices=False):
        return _adaptive_max(input, nd, output_size, return_indices)

    avg.__name__, mx.__name__ = f"adaptive_avg_pool{nd}d", f"adaptive_max_pool{nd}d"
    avg.__doc__ = f"Matches `torch.nn.functional.adaptive_avg_pool{nd}d`."
    mx.__doc__ = f"Matches `torch.nn.functional.adaptive_max_pool{nd}d`."
    extra = (f"adaptive_avg_pool{nd}d",) if nd == 1 else ()
    a = op(
        avg,
        name=f"nn.functional.adaptive_avg_pool{nd}d",
        aliases=extra,
        promote=NONE,
        method=False,
        out=False,
        node=_pool_node(nd, "AdaptiveAvgPool{}DBackward0"),
    )
    m = op(
        mx,
        name=f"nn.functional.adaptive_max_pool{nd}d",
        promote=NONE,
        method=False,
        out=False,
        node=_pool_node(nd, "AdaptiveMaxPool{}DBackward0"),
    )
    return a, m


adaptive_avg_pool1d, adaptive_max_pool1d = _adaptive_ops(1)
adaptive_avg_pool2d, adaptive_max_pool2d = _adaptive_ops(2)
adaptive_avg_pool3d, adaptive_max_pool3d = _adaptive_ops(3)


def _adaptive_with_indices(nd):
    def impl(input, output_size, return_indices=False):
        return tuple(_ADAPTIVE_MAX[nd](input, output_size, True))

    impl.__name__ = f"adaptive_max_pool{nd}d_with_indices"
    impl.__doc__ = f"Matches `torch.nn.functional.adaptive_max_pool{nd}d_with_indices`."
    return composite(impl, name=f"nn.functional.adaptive_max_pool{nd}d_with_indices", method=False)


_ADAPTIVE_MAX = {1: adaptive_max_pool1d, 2: adaptive_max_pool2d, 3: adaptive_max_pool3d}
adaptive_max_pool1d_with_indices = _adaptive_with_indices(1)
adaptive_max_pool2d_with_indices = _adaptive_with_indices(2)
adaptive_max_pool3d_with_indices = _adaptive_with_indices(3)


# ---------------------------------------------------------------------------
# max_unpool


def _max_unpool(input, indices, nd, kernel_size, stride, padding, output_size):
    name = f"max_unpool{nd}d"
    k = _tuple(kernel_size, nd, "kernel_size", name)
    s = _tuple(stride if stride not in (None, (), []) else None, nd, "stride", name) or k
    p = _tuple(padding, nd, "padding", name)
    spatial = input.shape[-nd:]
    default = tuple((n - 1) * ss - 2 * pp + kk for n, kk, ss, pp in zip(spatial, k, s, p))
    if output_size is None:
        out = default
    else:
        out = tuple(output_size)[-nd:] if len(output_size) in (nd, nd + 1, nd + 2) else None
        if out is None:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} "
                f"elements, but it has a length of '{len(output_size)}'"
            )
        for o, dflt, ss in zip(out, default, s):
            if not dflt - ss < o < dflt + ss:
                raise ValueError(
                    f'invalid output_size "{list(out)}" (dim {0} must be between '
                    f"{dflt - ss} and {dflt + ss})"
                )
    if input.shape != indices.shape:
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: "
            f"{list(indices.shape)}"
        )
    lead = input.shape[:-nd]
    n_lead = math.prod(lead)
    vals = input.reshape(n_lead, -1)
    idx = indices.reshape(n_lead, -1).astype(jnp.int64)
    return _unpool_scatter(vals, idx, math.prod(out)).reshape(lead + out)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _unpool_scatter(vals, idx, size):
    rows = jnp.arange(vals.shape[0], dtype=jnp.int64)[:, None]
    return jnp.zeros((vals.shape[0], size), vals.dtype).at[rows, idx].set(vals, mode="drop")


def _unpool_fwd(vals, idx, size):
    return _unpool_scatter(vals, idx, size), idx


def _unpool_bwd(size, idx, g):
    # PyTorch's backward gathers the output gradient at every index, so inputs sent to the
    # same place all receive its gradient (jax's scatter would give it to the last one only).
    return jnp.take_along_axis(g, idx, axis=1, mode="fill", fill_value=0), None


_unpool_scatter.defvjp(_unpool_fwd, _unpool_bwd)


def _unpool_op(nd):
    def impl(input: T, indices: TI, kernel_size, stride=None, padding=0, output_size=None):
        return _max_unpool(input, indices, nd, kernel_size, stride, padding, output_size)

    impl.__name__ = f"max_unpool{nd}d"
    impl.__doc__ = f"Matches `torch.nn.functional.max_unpool{nd}d`."
    return op(
        impl,
        name=f"nn.functional.max_unpool{nd}d",
        promote=NONE,
        method=False,
        out=False,
        node=_pool_node(nd, "MaxUnpool{}DBackward0"),
    )


max_unpool1d = _unpool_op(1)
max_unpool2d = _unpool_op(2)
max_unpool3d = _unpool_op(3)


# ---------------------------------------------------------------------------
# Fractional max pool


def _fractional(input, samples, nd, kernel_size, output_size, output_ratio, return_indices):
    name = f"fractional_max_pool{nd}d"
    k = _tuple(kernel_size, nd, "kernel_size", name)
    spatial = input.shape[-nd:]
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
        ratio = _tuple(output_ratio, nd, "output_ratio", name)
        out = tuple(int(n * r) for n, r in zip(spatial, ratio))
    else:
        out = _tuple(output_size, nd, "output_size", name)
    for n, kk, o in zip(spatial, k, out):
        if o + kk - 1 > n:
            raise RuntimeError(
                f"{name}(): pool size {kk} too large relative to input size {n} and output size {o}"
            )
    unbatched = input.ndim == nd + 1
    x = input[None] if unbatched else input
    samples = samples.astype(x.dtype)
    # Samples are stored in reversed dim order: samples[..., 0] drives the last (width) dim.
    index_dims = []
    for i, (n, kk, o) in enumerate(zip(spatial, k, out)):
        u = samples[..., nd - 1 - i][..., None]  # (N, C, 1)
        if o == 1:
            start = jnp.full(u.shape[:-1] + (1,), n - kk, jnp.int64)
        else:
            alpha = jnp.asarray((n - kk) / (o - 1), x.dtype)
            j = jnp.arange(o, dtype=x.dtype)
            start = ((j + u) * alpha).astype(jnp.int64) - (u * alpha).astype(jnp.int64)
            start = start.at[..., -1].set(n - kk)
        index_dims.append(start[..., :, None] + jnp.arange(kk, dtype=jnp.int64))  # (N,C,o,k)
    # Gather window values per (N, C) plane with the traced starts.
    gathered = x.reshape(x.shape[:2] + (math.prod(spatial),))
    n_k = math.prod(k)
    grids = []
    for i, pos in enumerate(index_dims):
        shape = list(pos.shape[:2]) + [1] * (2 * nd)
        shape[2 + i], shape[2 + nd + i] = pos.shape[2], pos.shape[3]
        grids.append(pos.reshape(shape))
    flat = grids[0]
    for i in range(1, nd):
        flat = flat * spatial[i] + grids[i]
    full = x.shape[:2] + out + k
    flat = jnp.broadcast_to(flat, full).reshape(x.shape[:2] + (math.prod(out) * n_k,))
    vals = jnp.take_along_axis(gathered, flat, axis=-1).reshape(x.shape[:2] + out + (n_k,))
    flat = flat.reshape(x.shape[:2] + out + (n_k,))
    best, index = _max_with_indices(vals, flat, np.ones((), bool))
    if unbatched:
        best, index = best[0], index[0]
    return (best, index) if return_indices else best


@op(name="_fractional_max_pool", promote=NONE, method=False, out=False)
def _fractional_max_pool(
    input: T,
    samples: TI,
    *,
    nd=2,
    kernel_size=2,
    output_size=None,
    output_ratio=None,
    return_indices=False,
):
    return _fractional(input, samples, nd, kernel_size, output_size, output_ratio, return_indices)


def _fractional_composite(nd):
    def impl(
        input,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices=False,
        _random_samples=None,
    ):
        if _random_samples is None:
            batch = input.shape[0] if input.ndim == nd + 2 else 1
            channels = input.shape[-nd - 1]
            _random_samples = wrap(
                jax.random.uniform(
                    _random.key_for(None, input), (batch, channels, nd), input.dtype.np
                )
            )
        return _fractional_max_pool(
            input,
            _random_samples,
            nd=nd,
            kernel_size=kernel_size,
            output_size=output_size,
            output_ratio=output_ratio,
            return_indices=return_indices,
        )

    impl.__name__ = f"fractional_max_pool{nd}d"
    impl.__doc__ = f"Matches `torch.nn.functional.fractional_max_pool{nd}d`."
    return composite(impl, name=f"nn.functional.fractional_max_pool{nd}d", method=False)


fractional_max_pool2d = _fractional_composite(2)
fractional_max_pool3d = _fractional_composite(3)


def _fractional_with_indices(nd):
    def impl(
        input,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices=False,
        _random_samples=None,
    ):
        return tuple(
            _FRACTIONAL[nd](input, kernel_size, output_size, output_ratio, True, _random_samples)
        )

    impl.__name__ = f"fractional_max_pool{nd}d_with_indices"
    impl.__doc__ = f"Matches `torch.nn.functional.fractional_max_pool{nd}d_with_indices`."
    return composite(
        impl, name=f"nn.functional.fractional_max_pool{nd}d_with_indices", method=False
    )


_FRACTIONAL = {2: fractional_max_pool2d, 3: fractional_max_pool3d}
fractional_max_pool2d_with_indices = _fractional_with_indices(2)
fractional_max_pool3d_with_indices = _fractional_with_indices(3)
