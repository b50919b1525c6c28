"""Creation ops outside the factory families: `vander` and `frombuffer`."""

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from ._registry import NONE, TI, composite, op
from .creation import finish


@op(promote=NONE, method=False, out=False)
def vander(x: TI, N=None, increasing=False):
    """Matches `torch.vander`: columns `x**(N-1), ..., x, 1` (reversed when `increasing`)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    # Integral and bool inputs give int64, as `promote_types(dtype, int64)` does in PyTorch.
    if not (jnp.issubdtype(x.dtype, jnp.inexact)):
        x = x.astype(jnp.int64)
    if N == 0:
        return jnp.zeros((x.shape[0], 0), x.dtype)
    # Cumulative products, as PyTorch builds the powers (not `pow`).
    cols = jnp.concatenate([jnp.ones((x.shape[0], 1), x.dtype),
                            jnp.broadcast_to(x[:, None], (x.shape[0], N - 1))], axis=1)
    out = jnp.cumprod(cols, axis=1).astype(x.dtype)
    return out if increasing else out[:, ::-1]


@composite(method=False)
def frombuffer(buffer, *, dtype: _dtype.dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False):
    """Matches `torch.frombuffer`, with one difference: PyTorch's tensor shares the buffer's
    memory, jtorch's is a copy (jax arrays are immutable), so later writes to the buffer do
    not show in the tensor, nor the tensor's in the buffer."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    nbytes, size = view.nbytes, dtype.itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if not 0 <= offset < nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({nbytes} bytes) minus 1")
    if count < 0 and (nbytes - offset) % size:
        raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) "
                         f"must be a multiple of element size ({size})")
    count = (nbytes - offset) // size if count < 0 else count
    if offset + count * size > nbytes:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({nbytes} bytes)")
    raw = view.cast("B")[offset:offset + count * size]
    # A private copy: jax may alias an aligned host buffer, which the caller can still write.
    arr = np.frombuffer(raw, dtype=dtype.np, count=count).copy()
    return finish(jnp.asarray(arr), None, None, requires_grad)
