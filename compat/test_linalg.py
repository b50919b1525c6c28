"""`torch.linalg` errors (`LinAlgError`, with PyTorch's messages), the `_ex` variants'
`info`, `linalg.matmul`, `special.logsumexp` and `cholesky_solve`'s gradients against real
PyTorch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.outcomes import same_outcome  # noqa: E402

LIBS = (torch, jtorch)
_rng = np.random.default_rng(3)
_SING = np.zeros((3, 2, 2), np.float32)
_SING[0] = np.eye(2)
LINALG_ERRORS = {
    "cholesky": lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 0], [0, -1]])),
    "cholesky upper": lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 2], [2, 1]]), upper=True),
    "cholesky batch": lambda lib: lib.linalg.cholesky(-lib.tensor(_SING)),
    "cholesky nan": lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 0], [0, float("nan")]])),
    "legacy cholesky": lambda lib: lib.tensor([[1.0, 2], [2, 1]]).cholesky(),
    "cholesky_ex": lambda lib: lib.linalg.cholesky_ex(-lib.tensor(_SING), check_errors=True),
    "inv": lambda lib: lib.linalg.inv(lib.tensor([[1.0, 2], [2, 4]])),
    "inv batch": lambda lib: lib.linalg.inv(lib.tensor(_SING)),
    "inverse": lambda lib: lib.tensor(_SING).inverse(),
    "inv complex": lambda lib: lib.linalg.inv(lib.zeros(2, 2, dtype=lib.complex64)),
    "inv_ex": lambda lib: lib.linalg.inv_ex(lib.tensor(_SING), check_errors=True),
    "solve": lambda lib: lib.linalg.solve(lib.tensor(_SING), lib.ones(2)),
    "solve_ex": lambda lib: lib.linalg.solve_ex(lib.zeros(2, 2), lib.ones(2), check_errors=True),
    "matrix_power": lambda lib: lib.tensor(_SING).matrix_power(-2),
    "tensorinv": lambda lib: lib.linalg.tensorinv(lib.zeros(2, 2, 2, 2), ind=2),
    "cholesky_inverse": lambda lib: lib.cholesky_inverse(
        lib.tensor([[1.0, 1], [0, 0]]), upper=True
    ),
    "lu_factor": lambda lib: lib.linalg.lu_factor(lib.tensor(_SING)),
    "lu_factor_ex": lambda lib: lib.linalg.lu_factor_ex(lib.tensor(_SING), check_errors=True),
}


@pytest.mark.parametrize("case", list(LINALG_ERRORS))
def test_linalg_errors(case):
    def run(lib):
        try:
            LINALG_ERRORS[case](lib)
        except RuntimeError as e:
            return type(e).__name__, str(e), isinstance(e, lib.linalg.LinAlgError)
        return None

    assert same_outcome(run) is not None


def test_linalg_infos_and_aliases():
    mats = [[[1.0, 0], [0, -1]], [[4.0, 2, 1], [2, 1, 0], [1, 0, 3]], [[1.0, 2], [0, 1]]]
    same_outcome(
        lambda lib: [
            lib.linalg.cholesky_ex(lib.tensor(m), upper=u).info.tolist()
            for m in mats
            for u in (False, True)
        ]
    )
    same_outcome(
        lambda lib: [
            lib.linalg.inv_ex(lib.tensor(_SING)).info.tolist(),
            lib.linalg.lu_factor_ex(lib.tensor(_SING)).info.tolist(),
            lib.linalg.solve_ex(lib.tensor(_SING), lib.ones(2)).info.tolist(),
        ]
    )
    # nan input: LAPACK finds no zero pivot, so no error (the result is nan).
    same_outcome(
        lambda lib: lib.linalg.inv(lib.tensor([[1.0, 2], [2, float("nan")]])).isnan().all().item()
    )
    same_outcome(lambda lib: lib.linalg.matrix_power(lib.zeros(2, 2), 2).tolist())
    assert issubclass(jtorch.linalg.LinAlgError, RuntimeError)
    assert jtorch.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__

    a = _rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = _rng.standard_normal((4, 2)).astype(np.float32)
    res = {}
    for lib in LIBS:
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.linalg.matmul(x, y)
        lse = lib.special.logsumexp(x, dim=(0, 2), keepdim=True)
        (out.sum() + lse.sum()).backward()
        res[lib.__name__] = [
            out.detach().numpy(),
            lse.detach().numpy(),
            x.grad.numpy(),
            y.grad.numpy(),
            str(out.dtype),
            tuple(lse.shape),
        ]
        with pytest.raises(RuntimeError, match="cannot be multiplied"):
            lib.linalg.matmul(lib.ones(2, 3), lib.ones(2, 3))
    for t, j in zip(res["torch"], res["jtorch"]):
        if isinstance(t, np.ndarray):
            np.testing.assert_allclose(j, t, rtol=1e-5, atol=1e-6)
        else:
            assert t == j


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cholesky_solve_gradients(upper, dtype):
    # PyTorch's backward treats the factor as the full matrix in L L^H (an upper-triangle
    # gradient for a lower factor): jtorch gives the same gradients.
    low = np.array([[2.0, 0.0], [0.5 + (0.3j if dtype == "complex128" else 0), 1.0]])
    factor = low.conj().T if upper else low
    rhs = np.array([[1.0, 0.3], [0.2, 2.0]]) * (1 + (0.5j if dtype == "complex128" else 0))
    grads = {}
    for lib in (torch, jtorch):
        f = lib.tensor(factor, dtype=getattr(lib, dtype), requires_grad=True)
        b = lib.tensor(rhs, dtype=getattr(lib, dtype), requires_grad=True)
        lib.cholesky_solve(b, f, upper=upper).abs().pow(2).sum().backward()
        grads[lib.__name__] = (f.grad.numpy(), b.grad.numpy())
    for a, b in zip(grads["jtorch"], grads["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
