"""Tensor printing parity: `repr(jtorch tensor) == repr(torch tensor)` over random inputs."""

import math

import jax
import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp

from jtorch import _dtype, _tensor_str
from jtorch._tensor import wrap

DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "complex64",
    "complex128",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
]

SHAPES = [
    (),
    (1,),
    (0,),
    (0, 3),
    (2, 0, 4),
    (5,),
    (17,),
    (3, 4),
    (2, 3, 4),
    (2, 2, 2, 3),
    (40,),
    (7, 13),
    (1, 1, 1),
    (1001,),
    (40, 30),
    (11, 11, 11),
    (2, 600),
    (600, 2),
    (3, 4, 5, 20),
]


@pytest.fixture(autouse=True)
def _reset_print_options():
    yield
    torch.set_printoptions(profile="default")
    _tensor_str.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    _dtype.set_default_dtype(_dtype.float32)


def _set_both(**options):
    torch.set_printoptions(**options)
    _tensor_str.set_printoptions(**options)


def _pair(arr: np.ndarray, dtype: str):
    """The same values as a torch tensor and as a jtorch tensor."""
    if dtype == "bfloat16":
        # Round once, in torch, then carry the exact bfloat16 values across.
        t = torch.from_numpy(arr.astype(np.float32)).to(torch.bfloat16)
        j = wrap(jnp.asarray(t.float().numpy().astype(ml_dtypes.bfloat16)))
        return t, j
    with np.errstate(over="ignore"):  # large values overflow float16 to inf on purpose
        arr = arr.astype(dtype)
    return torch.from_numpy(arr.copy()), wrap(jnp.asarray(arr))


def _random_values(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        hi = int(min(info.max, 10 ** int(rng.integers(1, 19))))
        lo = 0 if dtype.startswith("u") else -hi
        return rng.integers(lo, hi, size=shape, dtype=dtype, endpoint=True)
    kind = rng.integers(0, 5)
    scale = 10.0 ** rng.integers(-12, 14)
    if kind == 0:  # integer-valued floats
        values = np.round(rng.normal(size=shape) * rng.choice([1, 10, 1000]))
    elif kind == 1:  # one magnitude
        values = rng.normal(size=shape) * scale
    elif kind == 2:  # widely spread magnitudes
        values = rng.normal(size=shape) * 10.0 ** rng.integers(-8, 9, size=shape)
    elif kind == 3:  # uniform in [0, 1)
        values = rng.random(shape)
    else:
        values = rng.normal(size=shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.normal(size=shape) * rng.choice([0.0, 1.0, scale])
    values = np.asarray(values)
    if values.size and rng.random() < 0.4:  # sprinkle specials
        flat = values.reshape(-1)
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0]
        for _ in range(int(rng.integers(1, 4))):
            flat[rng.integers(0, flat.size)] = rng.choice(specials)
    return values


def _check(t, j):
    assert repr(j) == repr(t)
    assert str(j) == str(t)


@pytest.mark.parametrize("seed", range(400))
def test_random_tensor(seed):
    rng = np.random.default_rng(seed)
    dtype = DTYPES[seed % len(DTYPES)]
    shape = SHAPES[rng.integers(0, len(SHAPES))]
    t, j = _pair(_random_values(rng, shape, dtype), dtype)
    _check(t, j)


@pytest.mark.parametrize("seed", range(200))
def test_random_print_options(seed):
    rng = np.random.default_rng(1000 + seed)
    options = {}
    if rng.random() < 0.3:
        options["profile"] = str(rng.choice(["default", "short", "full"]))
    if rng.random() < 0.5:
        options["precision"] = int(rng.integers(0, 9))
    if rng.random() < 0.5:
        options["threshold"] = int(rng.choice([0, 5, 20, 100, 1000]))
    if rng.random() < 0.5:
        options["edgeitems"] = int(rng.integers(0, 5))
    if rng.random() < 0.5:
        options["linewidth"] = int(rng.choice([10, 20, 40, 60, 120, 200]))
    if rng.random() < 0.4:
        options["sci_mode"] = bool(rng.random() < 0.5)
    _set_both(**options)
    assert _tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
    dtype = DTYPES[seed % len(DTYPES)]
    shape = SHAPES[rng.integers(0, len(SHAPES))]
    t, j = _pair(_random_values(rng, shape, dtype), dtype)
    _check(t, j)


@pytest.mark.parametrize("seed", range(60))
def test_requires_grad(seed):
    rng = np.random.default_rng(2000 + seed)
    dtype = ["float32", "float64", "float16", "bfloat16", "complex64"][seed % 5]
    shape = SHAPES[rng.integers(0, len(SHAPES))]
    t, j = _pair(_random_values(rng, shape, dtype), dtype)
    t.requires_grad_()
    j.requires_grad = True
    _check(t, j)


@pytest.mark.parametrize("seed", range(40))
def test_default_dtype_float64(seed):
    torch.set_default_dtype(torch.float64)
    _dtype.set_default_dtype(_dtype.float64)
    rng = np.random.default_rng(3000 + seed)
    dtype = ["float32", "float64", "complex64", "complex128", "int64", "bool"][seed % 6]
    shape = SHAPES[rng.integers(0, len(SHAPES))]
    t, j = _pair(_random_values(rng, shape, dtype), dtype)
    _check(t, j)


@pytest.mark.parametrize(
    "values",
    [
        [1e8],
        [1.1e8],
        [1e-4],
        [9.9e-5],
        [1.0, 1000.0],
        [1.0, 1000.5],
        [0.001, 1.0],
        [0.5, 600.0],
        [math.nan],
        [math.inf, -math.inf],
        [-0.0],
        [0.0, -0.0],
        [1e300, 1e-300],
        [5e-324],
        [1.5, math.nan],
        [123456789.0],
        [-1.0, 2.0, math.nan],
        [0.1 + 0.2],
        [2.5, 3.5, -2.5],
        [0.00005, 0.00015],
        [1e15, 1.0],
        [1e-20],
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex128"])
def test_float_edge_values(values, dtype):
    t, j = _pair(np.array(values), dtype)
    _check(t, j)
    t, j = _pair(np.array(values[0]), dtype)
    _check(t, j)


def test_print_option_profiles():
    for profile in ["short", "full", "default"]:
        _set_both(profile=profile)
        assert _tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
    _set_both(precision=2, sci_mode=True)
    _set_both(precision=3)  # leaves sci_mode out: both reset it
    assert _tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
