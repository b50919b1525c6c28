"""jax's threefry2x32 keys and random bits, computed on the host with numpy.

A script's first draws (a model's initialisation: each weight's key, then a uniform or normal
draw cut from a bucket, `_ops/random.py`) would each compile a program holding the threefry
hash: ~70 ms for a key, 120-140 ms for a draw on a CPU. The hash is integer arithmetic
(uint32 add, xor, rotate), which numpy computes exactly as XLA does, so the keys and the
bits come from here, the same bits for bits (tests/test_random.py compares them with jax's),
and a draw compiles only its transform from bits to numbers.

What is reproduced: `jax.random.fold_in(jax.random.PRNGKey(seed), offset)` and the bits of
a one-dimensional draw under `jax_threefry_partitionable` (counter i hashes to element i),
with jax's default PRNG, threefry2x32.
"""

from __future__ import annotations

import jax
import numpy as np

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA
_MASK = 0xFFFFFFFF


def usable() -> bool:
    """Whether jax draws with the threefry keys and counters reproduced here."""
    return jax.config.jax_default_prng_impl == "threefry2x32" and bool(
        getattr(jax.config, "jax_threefry_partitionable", False)
    )


def _hash(k1: int, k2: int, x1, x2):
    """The threefry2x32 hash of counter pairs (`x1`, `x2`: uint32 arrays, or Python ints for
    one pair, which costs ~10 us where numpy's per-call overhead would cost ~100) under key
    (`k1`, `k2`): 20 rounds, a key injection after every 4."""
    ks = (k1, k2, k1 ^ k2 ^ _PARITY)
    with np.errstate(over="ignore"):
        a = (x1 + ks[0]) & _MASK
        b = (x2 + ks[1]) & _MASK
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                a = (a + b) & _MASK
                b = ((b << r) | (b >> (32 - r))) & _MASK
                b = a ^ b
            a = (a + ks[(i + 1) % 3]) & _MASK
            b = (b + ks[(i + 2) % 3] + i + 1) & _MASK
    return a, b


def key(seed: int, offset: int):
    """`fold_in(PRNGKey(seed), offset)` as uint32[2], or None outside what is reproduced."""
    if not (-(2**63) <= seed < 2**63 and 0 <= offset < 2**32):
        return None
    s = seed % 2**64  # (the seed's two's complement bits, split into two words)
    return np.array(_hash(s >> 32, s & _MASK, 0, offset), np.uint32)


def bits(key_words, n: int, width: int) -> np.ndarray:
    """The `width`-bit random bits jax draws for shape `(n,)` under key `key_words`."""
    counters = np.arange(n, dtype=np.uint32)
    hi, lo = _hash(int(key_words[0]), int(key_words[1]), np.zeros(n, np.uint32), counters)
    if width == 64:
        return (hi.astype(np.uint64) << np.uint64(32)) | lo.astype(np.uint64)
    out = hi ^ lo
    return out if width == 32 else out.astype(f"uint{width}")
