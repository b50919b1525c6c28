"""`torch.random` against real PyTorch: `fork_rng`."""

import pytest

pytest.importorskip("torch")

from compat.outcomes import same_outcome  # noqa: E402


def test_fork_rng():
    def fork(lib):
        lib.manual_seed(1)
        with lib.random.fork_rng():
            a = lib.rand(2)
        b = lib.rand(2)
        with lib.random.fork_rng(devices=[], enabled=False):
            lib.rand(2)
        c = lib.rand(2)
        lib.manual_seed(1)
        d, _, f = lib.rand(2), lib.rand(2), lib.rand(2)
        return bool((a == b).all()), bool((b == d).all()), bool((c == f).all())

    assert same_outcome(fork) == (True, True, True)

    def raising(lib):
        lib.manual_seed(2)
        state = lib.get_rng_state()
        try:
            with lib.random.fork_rng(devices=iter([])):
                lib.rand(3)
                raise KeyError("x")
        except KeyError:
            pass
        return bool((lib.get_rng_state() == state).all())

    assert same_outcome(raising) is True
