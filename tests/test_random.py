"""Random sampling (`jtorch/_ops/random.py`): reproducibility, ranges, dtypes, moments.

PyTorch's bit streams are not reproduced, so the checks are on the contract:
same seed, same numbers; right dtype, shape and support; loose moments.
"""

import math

import numpy as np
import pytest

import jtorch as torch

N = 4000


def arr(t):
    return np.asarray(t.tolist(), dtype=np.float64)


def test_same_seed_same_numbers():
    torch.manual_seed(7)
    a = torch.rand(N)
    b = torch.randn(N)
    torch.manual_seed(7)
    assert torch.rand(N).tolist() == a.tolist()
    assert torch.randn(N).tolist() == b.tolist()
    assert torch.rand(N).tolist() != a.tolist()  # each draw advances the generator


def test_generator_argument():
    g1 = torch.Generator().manual_seed(3)
    g2 = torch.Generator().manual_seed(3)
    assert torch.rand(N, generator=g1).tolist() == torch.rand(N, generator=g2).tolist()
    x, y = torch.empty(N), torch.empty(N)
    x.normal_(generator=g1)
    y.normal_(generator=g2)
    assert x.tolist() == y.tolist()


def test_rand_randn():
    torch.manual_seed(0)
    u = torch.rand(N)
    assert u.dtype == torch.float32 and tuple(u.shape) == (N,)
    a = arr(u)
    assert a.min() >= 0 and a.max() < 1
    assert abs(a.mean() - 0.5) < 0.03 and abs(a.var() - 1 / 12) < 0.01
    z = torch.randn(2, N // 2, dtype=torch.float64)
    assert z.dtype == torch.float64 and tuple(z.shape) == (2, N // 2)
    b = arr(z)
    assert abs(b.mean()) < 0.06 and abs(b.var() - 1) < 0.1
    c = torch.randn(N, dtype=torch.complex64)
    assert c.dtype == torch.complex64
    assert abs(np.mean(np.abs(np.asarray(c.tolist())) ** 2) - 1) < 0.1


def test_factory_options_and_errors():
    out = torch.empty(N)
    assert torch.rand(N, out=out) is out
    assert torch.rand((N,), requires_grad=True).requires_grad
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch.rand(3, dtype=torch.int64)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch.randn(3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.rand(-1)


def test_randint():
    torch.manual_seed(1)
    r = torch.randint(10, (N,))
    assert r.dtype == torch.int64
    assert set(r.tolist()) == set(range(10))
    r2 = torch.randint(-3, 2, (N,))
    assert set(r2.tolist()) == {-3, -2, -1, 0, 1}
    assert torch.randint(0, 5, (N,), dtype=torch.float32).dtype == torch.float32
    assert min(torch.randint(low=2, high=4, size=(N,)).tolist()) >= 2
    with pytest.raises(
        RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=5"
    ):
        torch.randint(5, 5, (3,))


def test_randperm():
    p = torch.randperm(N)
    assert p.dtype == torch.int64
    assert sorted(p.tolist()) == list(range(N))
    assert p.tolist() != list(range(N))
    assert torch.randperm(4, dtype=torch.float32).dtype == torch.float32
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        torch.randperm(-1)


def test_like_factories():
    x = torch.zeros(2, 3, dtype=torch.float64)
    assert torch.rand_like(x).dtype == torch.float64
    assert tuple(torch.randn_like(x).shape) == (2, 3)
    r = torch.randint_like(x, 3)
    assert r.dtype == torch.float64 and set(r.tolist()[0]) <= {0.0, 1.0, 2.0}
    assert set(torch.randint_like(x, 5, 7).flatten().tolist()) <= {5.0, 6.0}
    with pytest.raises(NotImplementedError):
        torch.rand_like(torch.zeros(2, dtype=torch.int64))


def test_normal_overloads():
    torch.manual_seed(2)
    mean = torch.full((N,), 3.0)
    std = torch.full((N,), 2.0)
    a = torch.normal(mean, std)
    assert a.dtype == torch.float32 and tuple(a.shape) == (N,)
    assert abs(arr(a).mean() - 3) < 0.15 and abs(arr(a).std() - 2) < 0.15
    b = torch.normal(mean, 0.5)
    assert abs(arr(b).std() - 0.5) < 0.05
    c = torch.normal(-1.0, std)
    assert abs(arr(c).mean() + 1) < 0.15
    d = torch.normal(2.0, 3.0, (N,), dtype=torch.float64)
    assert d.dtype == torch.float64 and abs(arr(d).std() - 3) < 0.2
    assert tuple(torch.normal(torch.zeros(2, 3), torch.ones(3)).shape) == (2, 3)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        torch.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="size of tensor a"):
        torch.normal(torch.zeros(2, 3), torch.ones(6))


def test_bernoulli():
    torch.manual_seed(3)
    p = torch.full((N,), 0.3, dtype=torch.float64)
    b = torch.bernoulli(p)
    assert b.dtype == torch.float64
    v = arr(b)
    assert set(v.tolist()) == {0.0, 1.0} and abs(v.mean() - 0.3) < 0.03
    assert arr(torch.bernoulli(torch.zeros(N), 0.8)).mean() > 0.75
    x = torch.zeros(N, dtype=torch.int64)
    assert x.bernoulli_(0.5) is x and set(x.tolist()) == {0, 1}
    x.bernoulli_(torch.ones(N))
    assert set(x.tolist()) == {1}
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        torch.bernoulli(torch.full((2,), 1.5))
    with pytest.raises(NotImplementedError):
        torch.bernoulli(torch.ones(2, dtype=torch.int64))


def test_multinomial():
    torch.manual_seed(4)
    w = torch.tensor([1.0, 0.0, 3.0, 4.0])
    idx = torch.multinomial(w, 3)
    assert idx.dtype == torch.int64 and sorted(idx.tolist()) == [0, 2, 3]
    rows = torch.multinomial(torch.ones(2, 6), 6)
    assert all(sorted(r) == list(range(6)) for r in rows.tolist())
    draws = torch.multinomial(w, N, replacement=True)
    counts = np.bincount(np.asarray(draws.tolist()), minlength=4) / N
    assert counts[1] == 0 and abs(counts[3] - 0.5) < 0.04 and abs(counts[0] - 0.125) < 0.03
    assert tuple(torch.multinomial(torch.ones(3, 4), 5, True).shape) == (3, 5)
    assert torch.ones(4).multinomial(2).dtype == torch.int64
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        torch.multinomial(w, 5)
    with pytest.raises(RuntimeError, match="element < 0"):
        torch.multinomial(torch.tensor([1.0, -1.0]), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        torch.multinomial(torch.zeros(2), 1)
    with pytest.raises(RuntimeError, match="only supports floating-point dtypes"):
        torch.multinomial(torch.tensor([1, 2]), 1)


def test_poisson():
    torch.manual_seed(5)
    p = torch.poisson(torch.full((N,), 4.0))
    assert p.dtype == torch.float32
    v = arr(p)
    assert np.all(v == np.round(v)) and abs(v.mean() - 4) < 0.2 and abs(v.var() - 4) < 0.5


def test_inplace_samplers():
    torch.manual_seed(6)
    x = torch.empty(N)
    assert x.uniform_(2, 3) is x
    v = arr(x)
    assert v.min() >= 2 and v.max() < 3 and abs(v.mean() - 2.5) < 0.03
    v = arr(x.normal_(1.0, 0.5))
    assert abs(v.mean() - 1) < 0.05 and abs(v.std() - 0.5) < 0.05
    v = arr(x.exponential_(2.0))
    assert v.min() >= 0 and abs(v.mean() - 0.5) < 0.05
    v = arr(x.geometric_(0.25))
    assert v.min() >= 1 and np.all(v == np.round(v)) and abs(v.mean() - 4) < 0.3
    v = arr(x.cauchy_(1.0, 2.0))
    assert abs(np.median(v) - 1) < 0.2
    v = arr(x.log_normal_(0.0, 0.5))
    assert v.min() > 0 and abs(np.log(v).std() - 0.5) < 0.05
    assert abs(np.mean(np.log(v))) < 0.05
    assert not math.isnan(v.sum())


def test_random_():
    torch.manual_seed(8)
    x = torch.empty(N, dtype=torch.int64)
    assert set(x.random_(3, 6).tolist()) == {3, 4, 5}
    assert set(x.random_(2).tolist()) == {0, 1}
    b = torch.empty(N, dtype=torch.uint8).random_()
    assert max(b.tolist()) > 200 and min(b.tolist()) >= 0
    f = torch.empty(N).random_()
    v = arr(f)
    assert v.min() >= 0 and v.max() <= 2**24 and np.all(v == np.round(v))
    with pytest.raises(RuntimeError, match="got from=5 >= to=3"):
        x.random_(5, 3)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for unsigned char"):
        b.random_(0, 300)


def test_inplace_errors_leave_tensor_unchanged():
    x = torch.ones(3)
    for call, msg in [
        (lambda: x.uniform_(2, 1), "uniform_ expects to return a \\[from, to\\) range"),
        (lambda: x.normal_(0, -1), "normal expects std >= 0.0"),
        (lambda: x.exponential_(-1), "exponential_ expects lambda > 0.0"),
        (lambda: x.geometric_(1.5), "geometric_ expects p to be in \\(0, 1\\)"),
        (lambda: x.cauchy_(0, -1), "cauchy_ expects sigma > 0.0"),
        (lambda: x.log_normal_(0, -1), "log_normal_ expects std > 0.0"),
    ]:
        with pytest.raises(RuntimeError, match=msg):
            call()
    assert x.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(NotImplementedError):
        torch.ones(2, dtype=torch.int64).uniform_()
    with pytest.raises(RuntimeError, match="must be a floating point"):
        torch.ones(2, dtype=torch.int64).exponential_()


# ---------------------------------------------------------------------------
# fork_rng


def test_fork_rng_restores_state():
    torch.manual_seed(3)
    state = torch.get_rng_state()
    with torch.random.fork_rng(devices=[]):
        inside = torch.rand(2)
    assert bool((torch.get_rng_state() == state).all())
    assert bool((torch.rand(2) == inside).all())
    with torch.random.fork_rng(enabled=False):
        torch.rand(2)
    assert not bool((torch.get_rng_state() == state).all())


# ---------------------------------------------------------------------------
# Keys and bits hashed on the host (jtorch/_threefry.py) are jax's own


def test_host_keys_and_bits_are_jaxs():
    import jax
    import jax.numpy as jnp

    from jtorch import _random, _threefry

    assert _threefry.usable()
    for seed in (0, 7, 67280421310721, 2**63 - 1, -(2**63), -5):
        for offset in (0, 1, 2**31 + 3, 2**32 - 1):
            want = jax.random.fold_in(jax.random.PRNGKey(seed), offset)
            np.testing.assert_array_equal(_threefry.key(seed, offset), np.asarray(want))
    assert _threefry.key(0, 2**32) is None  # (outside what is reproduced: jax's program)
    words = _threefry.key(42, 3)
    key = jax.random.wrap_key_data(jnp.asarray(words))
    for n in (1, 3, 4096, 5001):
        for width in (8, 16, 32, 64):
            want = jax.random.bits(key, (n,), jnp.dtype(f"uint{width}"))
            got = _threefry.bits(words, n, width)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, np.asarray(want))
    # the generator's keys come from here: the numbers jax's key program gives
    g = torch.Generator().manual_seed(11)
    np.testing.assert_array_equal(np.asarray(g.next_key()), np.asarray(_random._key(11, 0)))


@pytest.mark.parametrize(
    "kind,a,b,dtype",
    [
        ("uniform", -2.0, 3.0, "float32"),
        ("uniform", 0.0, 1.0, "float64"),
        ("normal", 0.5, 2.0, "float32"),
        ("normal", 0.0, 1.0, "float64"),
        ("normal", 0.0, 1.0, "bfloat16"),
        ("log_normal", 0.1, 0.3, "float32"),
        ("bernoulli", 0.3, 0.0, "float32"),
        ("exponential", 1.5, 0.0, "float64"),
        ("geometric", 0.2, 0.0, "float32"),
        ("cauchy", 0.0, 1.0, "float16"),
    ],
)
def test_draws_from_host_bits_are_the_keyed_draws(kind, a, b, dtype):
    import jax

    from jtorch import _dtype, _random, _threefry
    from jtorch._ops import random as R

    dt = getattr(_dtype, dtype)
    key = _random._key(5, 9)
    keyed = np.asarray(R._random_draw(key, a, b, kind, (4096,), dt)._array)
    bits = _threefry.bits(np.asarray(key), 4096, 64 if dtype == "float64" else 32)
    of_bits = np.asarray(R._random_of_bits(jax.device_put(bits), a, b, kind, dt)._array)
    assert of_bits.dtype == keyed.dtype
    as_bits = f"u{keyed.itemsize}"
    np.testing.assert_array_equal(of_bits.view(as_bits), keyed.view(as_bits))
