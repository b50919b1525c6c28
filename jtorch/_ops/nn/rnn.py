"""Fused recurrent kernels: RNN (tanh/relu), LSTM (with projections) and GRU.

One kernel runs every layer and direction of a recurrent network: the input
projections of all time steps are one matmul, and the recurrence is a
`jax.lax.scan`. Autograd differentiates the whole kernel with `jax.vjp`, so a
sequence costs one recorded node instead of several per time step.

Packed sequences run padded (time-major) with their lengths: a sequence's state
only advances at the steps inside its length, which is what PyTorch's packed
kernels compute, and the reverse direction starts each sequence at its own end.
The kernel's shapes are (steps, batch) alone, so batches of packed sequences
with different total lengths share one compiled program.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._kernel_helpers import accumulate
from .._registry import NONE, TI, TL, kernel

_HIGHEST = jax.lax.Precision.HIGHEST  # PyTorch does not use TF32 for these matmuls


def _mm(x, w):
    return jnp.matmul(x, w.T, precision=_HIGHEST)


def _cell(mode, gi, h, c, w_hh, b_hh, w_hr):
    """One step from the input projection `gi` (bias included); returns (h', c')."""
    gh = _mm(h, w_hh)
    if b_hh is not None:
        gh = gh + b_hh
    if mode == "LSTM":
        i, f, g, o = jnp.split(gi + gh, 4, axis=-1)
        c2 = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h2 = jax.nn.sigmoid(o) * jnp.tanh(c2)
        if w_hr is not None:
            h2 = _mm(h2, w_hr)
        return h2, c2
    if mode == "GRU":
        ri, zi, ni = jnp.split(gi, 3, axis=-1)
        rh, zh, nh = jnp.split(gh, 3, axis=-1)
        r = jax.nn.sigmoid(ri + rh)
        z = jax.nn.sigmoid(zi + zh)
        n = jnp.tanh(ni + r * nh)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (jnp.tanh(pre) if mode == "RNN_TANH" else jax.nn.relu(pre)), None


def _direction(mode, x, h0, c0, w, mask, reverse):
    """One layer in one direction over time-major `x`; returns (outputs, h_n, c_n)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    gi = _mm(x, w_ih)
    if b_ih is not None:
        gi = gi + b_ih

    def step(carry, xs):
        h, c = carry
        g, m = xs
        h2, c2 = _cell(mode, g, h, c, w_hh, b_hh, w_hr)
        if m is not None:  # steps past a sequence's length leave its state as it is
            h2 = jnp.where(m, h2, h)
            c2 = None if c is None else jnp.where(m, c2, c)
            return (h2, c2), jnp.where(m, h2, 0)
        return (h2, c2), h2

    (h, c), out = jax.lax.scan(step, (h0, c0), (gi, mask), reverse=reverse)
    return out, h, c


def _split_weights(weights, mode, has_biases, proj_size):
    per = 2 + 2 * has_biases + (proj_size > 0)
    groups = []
    for k in range(0, len(weights), per):
        g = list(weights[k : k + per])
        w_ih, w_hh = g[0], g[1]
        b_ih, b_hh = (g[2], g[3]) if has_biases else (None, None)
        w_hr = g[-1] if proj_size > 0 else None
        groups.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return groups


@kernel(name="_rnn", promote=NONE)
def rnn_kernel(
    input: TI,
    hx: TI,
    cx: TI,
    weights: TL,
    lengths: TI,
    rng: TI,
    mode,
    has_biases,
    num_layers,
    dropout_p,
    train,
    bidirectional,
    batch_first,
    proj_size,
):
    """All layers and directions of an RNN/LSTM/GRU, as `torch._VF.<mode>` computes them.

    `input` is (T, B, I) (or (B, T, I) with `batch_first`). With `lengths` (B,), sequence
    b only runs its first `lengths[b]` steps and its outputs past them are zeros (packed
    sequences). Returns `(output, h_n)` or, for LSTM, `(output, h_n, c_n)`.
    """
    dt = input.dtype
    x = accumulate(input)
    if batch_first:
        x = jnp.swapaxes(x, 0, 1)
    mask = None
    if lengths is not None:
        mask = (jnp.arange(x.shape[0])[:, None] < lengths[None, :])[..., None]
    h0 = accumulate(hx)
    c0 = None if cx is None else accumulate(cx)
    groups = _split_weights(tuple(accumulate(w) for w in weights), mode, has_biases, proj_size)
    dirs = 2 if bidirectional else 1
    keys = jax.random.split(rng, num_layers) if rng is not None else None
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            out, h, c = _direction(
                mode, x, h0[k], None if c0 is None else c0[k], groups[k], mask, reverse=d == 1
            )
            outs.append(out)
            hs.append(h)
            cs.append(c)
        x = outs[0] if dirs == 1 else jnp.concatenate(outs, axis=-1)
        if train and dropout_p > 0 and layer < num_layers - 1:
            if dropout_p >= 1:
                x = jnp.zeros_like(x)
            else:
                keep = jax.random.bernoulli(keys[layer], 1 - dropout_p, x.shape)
                x = jnp.where(keep, x / (1 - dropout_p), 0)
    if batch_first:
        x = jnp.swapaxes(x, 0, 1)
    h_n = jnp.stack(hs).astype(dt)
    if mode == "LSTM":
        return x.astype(dt), h_n, jnp.stack(cs).astype(dt)
    return x.astype(dt), h_n


@kernel(name="_rnn_cell", promote=NONE)
def rnn_cell_kernel(input: TI, hx: TI, cx: TI, w_ih: TI, w_hh: TI, b_ih: TI, b_hh: TI, mode):
    """One step of `torch.rnn_tanh_cell` / `rnn_relu_cell` / `lstm_cell` / `gru_cell`."""
    dt = input.dtype
    gi = _mm(accumulate(input), accumulate(w_ih))
    if b_ih is not None:
        gi = gi + accumulate(b_ih)
    h, c = _cell(
        mode,
        gi,
        accumulate(hx),
        None if cx is None else accumulate(cx),
        accumulate(w_hh),
        None if b_hh is None else accumulate(b_hh),
        None,
    )
    if mode == "LSTM":
        return h.astype(dt), c.astype(dt)
    return h.astype(dt)
