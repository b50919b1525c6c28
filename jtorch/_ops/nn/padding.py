"""Padding: `nn.functional.pad` (constant, reflect, replicate, circular) and
`constant_pad_nd`."""

import jax
import jax.numpy as jnp
import numpy as np

from .._registry import NONE, T, op


def _constant_pad(input, pad, value):
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(
            f"Padding length should be less than or equal to two times the input "
            f"dimension but got padding length {len(pad)} and input of dimension "
            f"{input.ndim}"
        )
    cfg = [(0, 0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if input.shape[d] + lo + hi < 0:
            raise RuntimeError(
                f"The input size {input.shape[d]}, plus negative padding {lo} and "
                f"{hi} resulted in a negative output size, which is invalid. "
                f"Check dimension {d} of your input."
            )
        cfg[d] = (lo, hi, 0)
    return jax.lax.pad(input, jnp.asarray(value).astype(input.dtype), cfg)


def _index_pad(input, pad, mode):
    """reflect / replicate / circular padding as a gather along each padded dim."""
    n_dims = len(pad) // 2
    if len(pad) % 2 or n_dims > 3 or input.ndim not in (n_dims + 1, n_dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    out = input
    for i in range(n_dims):
        d = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = input.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} "
                f"of input {list(input.shape)}"
            )
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi < 0:
            raise RuntimeError(
                f"input tensor must fit into output tensor: the padded size "
                f"{n + lo + hi} of dimension {d} is negative"
            )
        idx = np.arange(n + lo + hi) - lo
        if mode == "replicate":
            idx = np.clip(idx, 0, n - 1)
        elif mode == "reflect":
            idx = np.abs(idx)
            idx = np.where(idx > n - 1, 2 * (n - 1) - idx, idx)
        else:
            # PyTorch first crops by the negative pads, then wraps the cropped range.
            start, m = max(-lo, 0), n - max(-lo, 0) - max(-hi, 0)
            idx = start + np.mod(np.arange(m + max(lo, 0) + max(hi, 0)) - max(lo, 0), m)
        out = jnp.take(out, jnp.asarray(idx, jnp.int32), axis=d)
    return out


def _pad_node(mode, pad) -> str:
    n = len(pad) // 2
    if mode == "constant":
        return "ConstantPadNdBackward0"
    if mode in ("reflect", "replicate"):
        return f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{n}DBackward0"
    return "PadBackward0"  # circular: PyTorch's CopySlices of its in-place wrap


@op(name="nn.functional.pad", method=False, out=False, promote=NONE, node=_pad_node)
def pad(input: T, pad, mode="constant", value=None):
    pad = tuple(int(p) for p in pad)
    if mode == "constant":
        return _constant_pad(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    return _index_pad(input, pad, mode)


@op(method=False, out=False, promote=NONE)
def constant_pad_nd(input: T, pad, value=0):
    return _constant_pad(input, tuple(int(p) for p in pad), value)
