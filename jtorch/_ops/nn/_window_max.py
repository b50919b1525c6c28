"""Max over pooling windows, differentiated by strided slices instead of select_and_scatter.

jax differentiates a max `reduce_window` through `select_and_gather_add`, whose transpose
is XLA's `select_and_scatter`: on CPU that one op took about 60 of the 150 ms of a small
CNN's training step (a 2x2 pool over 128x32x26x26). Here the forward stays the
`reduce_window`, and the JVP picks each window's winner from one strided slice per window
offset; its transpose (interior-padded pads and selects, fused by XLA into one loop) is
the backward. Being a JVP rule, it serves forward-mode AD too.

The winner is PyTorch's (`max_pool2d`'s CPU kernel: `val > maxval || isnan(val)`): the
first maximum in window order, or the last NaN when the window holds one.
"""

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np

# Windows of more elements than this keep jax's own rule: the JVP unrolls one slice per
# window offset, and a 1-D global pool (kernel = the whole length) would unroll thousands.
MAX_UNROLLED = 64


def _offset_slices(xp, k, s, d, out):
    """For each window offset, in window order: `xp`'s values at that offset of every window."""
    lead = xp.ndim - len(k)
    for offs in itertools.product(*(range(kk) for kk in k)):
        start = (0,) * lead + tuple(o * dd for o, dd in zip(offs, d))
        limit = xp.shape[:lead] + tuple(
            o * dd + (n - 1) * ss + 1 for o, dd, n, ss in zip(offs, d, out, s)
        )
        yield jax.lax.slice(xp, start, limit, (1,) * lead + tuple(s))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3, 4))
def window_max(x, k: tuple, s: tuple, pads: tuple, d: tuple):
    """Max of `x` (floating) over windows of its trailing `len(k)` dims, -inf padded.

    Args:
        k, s, d: the window's size, stride and dilation per pooled dim.
        pads: (before, after) padding per pooled dim.
    """
    lead = x.ndim - len(k)
    return jax.lax.reduce_window(
        x,
        np.asarray(-np.inf, x.dtype),
        jax.lax.max,
        (1,) * lead + k,
        (1,) * lead + s,
        [(0, 0)] * lead + list(pads),
        window_dilation=(1,) * lead + d,
    )


@window_max.defjvp
def _window_max_jvp(k, s, pads, d, primals, tangents):
    (x,), (t,) = primals, tangents
    y = window_max(x, k, s, pads, d)
    lead = x.ndim - len(k)
    widths = [(0, 0, 0)] * lead + [(lo, hi, 0) for lo, hi in pads]
    xp = jax.lax.pad(x, np.asarray(-np.inf, x.dtype), widths)
    tp = jax.lax.pad(t, np.asarray(0, t.dtype), widths)
    out = y.shape[lead:]
    values = list(_offset_slices(xp, k, s, d, out))
    # The winner's window offset: the first maximum, then overridden by each NaN in turn.
    winner = jnp.zeros(y.shape, jnp.int8)
    for i in range(len(values) - 1, -1, -1):
        winner = jnp.where(values[i] == y, jnp.int8(i), winner)
    for i, v in enumerate(values):
        winner = jnp.where(jnp.isnan(v), jnp.int8(i), winner)
    dy = None
    for i, tv in enumerate(_offset_slices(tp, k, s, d, out)):
        part = jnp.where(winner == i, tv, jnp.zeros((), tv.dtype))
        dy = part if dy is None else dy + part
    return y, dy
