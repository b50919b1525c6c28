"""`torch.cuda.random`: the CUDA generator functions.

One generator serves every device (see `jtorch._random`), so with an accelerator these are
`torch.manual_seed` & co.; without one they do nothing, as PyTorch's CPU build does
(`torch.manual_seed` seeds everything either way).
"""

from .. import _random
from ._devices import _require, device_count, is_available


def manual_seed(seed: int) -> None:
    if is_available():
        _random.manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    if is_available():
        _random.seed()


seed_all = seed


def initial_seed() -> int:
    _require()
    return _random.initial_seed()


def get_rng_state(device="cuda"):
    _require()
    return _random.get_rng_state()


def get_rng_state_all() -> list:
    return [_random.get_rng_state() for _ in range(device_count())]


def set_rng_state(new_state, device="cuda") -> None:
    if is_available():
        _random.set_rng_state(new_state)


def set_rng_state_all(new_states) -> None:
    for s in new_states:
        set_rng_state(s)
