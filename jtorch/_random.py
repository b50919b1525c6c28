"""Random state: `Generator`, `manual_seed`, and the keys random ops draw from.

PyTorch's bit streams (mt19937/Philox) are not reproduced; what is kept is
PyTorch's contract: the same seed gives the same numbers, `get_state` /
`set_state` round-trip, and each draw advances the generator. A generator is
(seed, offset); each draw uses `fold_in(key(seed), offset)` and bumps the offset.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np

from . import _device, _programs, _stored, _threefry

__all__ = [
    "Generator",
    "default_generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
]

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed at start-up


def _fold(seed, offset):
    return jax.random.fold_in(jax.random.PRNGKey(seed), offset)


# (kept by jtorch's own key: a second run loads it without tracing)
_key = _stored.program(jax.jit(_fold), "random-key")


class Generator:
    """Matches `torch.Generator`."""

    def __init__(self, device="cpu"):
        self.device = _device.device(device)
        self._seed = _DEFAULT_SEED
        self._offset = 0

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise RuntimeError("Overflow when unpacking long long")
        self._seed = seed % (2**64)
        self._offset = 0
        return self

    def seed(self) -> int:
        s = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        from ._tensor import wrap

        raw = np.asarray([self._seed, self._offset], dtype=np.uint64).view(np.uint8)
        return wrap(jnp.asarray(raw))

    def set_state(self, new_state) -> Generator:
        raw = np.asarray(new_state._array if hasattr(new_state, "_array") else new_state)
        if raw.dtype != np.uint8 or raw.size != 16:
            raise RuntimeError(
                "RNG state is wrong size"
                if raw.dtype == np.uint8
                else "expected a torch.ByteTensor"
            )
        self._seed, self._offset = (int(v) for v in raw.view(np.uint64))
        return self

    def next_key(self):
        """A fresh jax PRNG key; advances the generator."""
        if _trace_source is not None:
            return _trace_source.next()
        seed = np.uint64(self._seed).astype(np.int64) if self._seed >= 2**63 else self._seed
        # (computed on the host where it can be: the same words, no program to compile)
        words = _threefry.key(int(seed), self._offset) if _threefry.usable() else None
        if words is None:
            k = _key(seed, self._offset)
        else:  # (uncommitted, as `jax.device_put` places it: ~5x cheaper)
            k = _programs.to_device(words, _programs.default_device(), committed=False)
        self._offset += 1
        return k

    def __repr__(self):
        return "<torch._C.Generator object>"


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Matches `torch.manual_seed`: seeds the default generator (and numpy's is untouched)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


class _TraceKeys:
    """Keys inside a compiled function: folds of one key the call receives as an input, so
    each call of the compiled program draws fresh numbers (a key baked in as a constant
    would repeat them)."""

    def __init__(self, base):
        self.base = base
        self.count = 0

    def next(self):
        self.count += 1
        return jax.random.fold_in(self.base, self.count)

    def close(self):
        global _trace_source
        _trace_source = None


_trace_source = None


def trace_keys(base) -> _TraceKeys:
    """While a compiled function traces, every generator draws from `base` (see _compile)."""
    global _trace_source
    _trace_source = _TraceKeys(base)
    return _trace_source


def key_for(generator: Generator | None, like=None):
    """The generator's next key; with `like` (a tensor or jax array), on its device, where the
    draw that takes the key computes (a key on the CPU beside CUDA inputs is refused)."""
    key = (generator or default_generator).next_key()
    if like is None:
        return key
    return _device.place_like(key, getattr(like, "_array", like))


def unused_key(like):
    """The key a kernel that draws nothing this call takes (eval mode), on `like`'s device;
    the generator does not advance."""
    return _device.place_like(np.zeros((2,), np.uint32), getattr(like, "_array", like))
