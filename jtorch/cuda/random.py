"""`torch.cuda.random`: the accelerator's random state.

One generator serves every device (see `jtorch._random`), so with an accelerator these are
`torch.manual_seed` & co.; without one, seeding does nothing and reading the state raises, as
PyTorch's CPU build does (`torch.manual_seed` seeds everything either way).
"""

from __future__ import annotations

from .. import _random

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def _available() -> bool:
    from . import is_available
    return is_available()


def _require() -> None:
    if not _available():
        raise AssertionError("Torch not compiled with CUDA enabled")


def manual_seed(seed: int) -> None:
    if _available():
        _random.manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    if _available():
        _random.seed()


seed_all = seed


def initial_seed() -> int:
    _require()
    return _random.initial_seed()


def get_rng_state(device="cuda"):
    _require()
    return _random.get_rng_state()


def get_rng_state_all() -> list:
    from . import device_count
    return [_random.get_rng_state() for _ in range(device_count())]


def set_rng_state(new_state, device="cuda") -> None:
    if _available():
        _random.set_rng_state(new_state)


def set_rng_state_all(new_states) -> None:
    for s in new_states:
        set_rng_state(s)
