"""Forward results bit for bit against PyTorch, where PyTorch's CPU kernels round once.

`x / 7` (one division, correctly rounded in PyTorch) came out of XLA as `x * (1/7)`,
one bit off in about half of the elements; Python numbers met a half-precision tensor
after being rounded to it; `x ** 3` went through `pow`. The grids hold normal-range
values of each dtype; tiny values are left out (XLA's CPU code flushes subnormal results
to zero, PyTorch's keeps them).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

_rng = np.random.default_rng(0)
_VALUES = np.concatenate(
    [
        _rng.standard_normal(4000),
        _rng.uniform(-1e4, 1e4, 4000),
        [0.0, -0.0, 1.0, 3.0, 7.0, np.inf, -np.inf, np.nan],
    ]
)

CASES = {
    "div_python_scalar": lambda x: x / 7,
    "div_fraction": lambda x: x / 0.1,
    "div_method": lambda x: x.div(3),
    "div_zero_dim_tensor": lambda x: x / x.new_tensor(7.0),
    "div_row_broadcast": lambda x: x.reshape(-1, 4) / x.new_tensor([3.0, 7.0, 0.1, 11.0]),
    "div_inplace": lambda x: x.clone().div_(7),
    "true_divide": lambda x: x.true_divide(7),
    "rdiv": lambda x: 7 / x,
    "div_trunc": lambda x: x.div(7, rounding_mode="trunc"),
    "div_floor": lambda x: x.div(0.7, rounding_mode="floor"),
    "floor_divide": lambda x: x.floor_divide(0.7),
    "mul_fraction": lambda x: x * 0.1,
    "mul_inplace": lambda x: x.clone().mul_(0.1),
    "addcdiv": lambda x: x.addcdiv(x, x.abs() + 1, value=0.3),
    "pow_2": lambda x: x**2,
    "pow_3": lambda x: x**3,
    "pow_minus_1": lambda x: x**-1,
    "pow_minus_2": lambda x: x**-2,
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bitwise_equal_to_pytorch(case, dtype):
    values = _VALUES.astype(np.float32)
    if dtype in ("float16", "bfloat16"):
        values = values[np.abs(np.nan_to_num(values)) < 300]
    if dtype == "float64":
        values = values.astype(np.float64) * np.pi
    values = values[: len(values) // 4 * 4]
    t = CASES[case](torch.tensor(values).to(getattr(torch, dtype)))
    j = CASES[case](jtorch.tensor(values).to(getattr(jtorch, dtype)))
    assert str(j.dtype) == str(t.dtype)
    e, a = t.double().numpy(), j.double().numpy()
    tiny = np.finfo(getattr(np, dtype) if dtype != "bfloat16" else np.float32).tiny
    keep = ~((np.abs(e) < tiny) & (e != 0))  # subnormal results: flushed by XLA
    same = (e == a) | (np.isnan(e) & np.isnan(a))
    assert same[keep].all(), (
        f"{np.sum(~same[keep])} of {keep.sum()} differ, e.g. "
        f"torch {e[keep][~same[keep]][:3]} jtorch {a[keep][~same[keep]][:3]}"
    )


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int8", "uint8", "bool"]
)
def test_hash_tensor(dtype):
    values = np.concatenate([_VALUES[:64], [-0.0]]).astype(np.float32)
    if dtype == "bool":
        values = values > 0
    elif dtype.startswith(("int", "uint")):
        values = np.nan_to_num(values, posinf=100, neginf=-100).astype(np.int64) % 120

    def run(lib):
        x = lib.tensor(values).to(getattr(lib, dtype))
        return [
            lib.hash_tensor(x),
            lib.hash_tensor(x[:64].reshape(8, 8), 1),
            lib.hash_tensor(x[:64].reshape(8, 8), (0,), keepdim=True),
        ]

    for t, j in zip(run(torch), run(jtorch)):
        assert str(j.dtype) == str(t.dtype) == "torch.uint64"
        assert j.tolist() == t.tolist()


def test_hash_tensor_errors():
    for fn in (
        lambda lib: lib.hash_tensor(lib.ones(3), mode=1),
        lambda lib: lib.hash_tensor(lib.ones(2, dtype=lib.complex64)),
        lambda lib: lib.hash_tensor(lib.ones(0)),
        lambda lib: lib.hash_tensor(lib.ones(0, 3), 0),
    ):
        with pytest.raises(Exception) as t_err:
            fn(torch)
        with pytest.raises(type(t_err.value), match=str(t_err.value)[:30].replace("(", r"\(")):
            fn(jtorch)


@pytest.mark.parametrize("n,scale", [(2, 60), (3, 30), (8, 30), (20, 10), (20, 60)])
def test_matrix_exp_float32_accuracy_is_pytorchs(n, scale):
    # Not bit for bit (PyTorch uses a degree-18 Taylor polynomial, jtorch a degree-7 Pade
    # approximant after more squarings): each library's float32 result against PyTorch's
    # float64 one, elementwise on the entries that are not negligible. jtorch's error is
    # at most about 3x PyTorch's on these batches (often below it); 4x is the bound.
    rng = np.random.default_rng(n * 100 + scale)
    A = (rng.standard_normal((4, n, n)) * scale / np.sqrt(n)).astype(np.float32)
    ref = torch.linalg.matrix_exp(torch.tensor(A, dtype=torch.float64)).numpy()
    t = torch.linalg.matrix_exp(torch.tensor(A)).double().numpy()
    j = jtorch.linalg.matrix_exp(jtorch.tensor(A)).double().numpy()
    big = np.abs(ref) > 1e-2 * np.abs(ref).max(axis=(-2, -1), keepdims=True)
    err_t = np.max(np.abs(t - ref)[big] / np.abs(ref)[big])
    err_j = np.max(np.abs(j - ref)[big] / np.abs(ref)[big])
    assert err_j <= max(4 * err_t, 1e-6), (err_j, err_t)
