"""`torch.cuda.random`: the CUDA generator functions (see `torch.cuda`)."""

from . import (  # noqa: F401
    get_rng_state, get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed,
    seed_all, set_rng_state, set_rng_state_all,
)
