"""`torch.random`: seeding and RNG state."""

from ._random import (  # noqa: F401
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)
