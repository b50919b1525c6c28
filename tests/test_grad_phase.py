"""Complex SVD / eigendecomposition gradients: defined only for phase-invariant losses.

Each singular vector or eigenvector of a complex matrix is unique up to a factor e^{i phi};
a loss depending on that factor has no gradient, and PyTorch's backward raises (its
`svd_backward` / `linalg_eig_backward` test Im diag(U^H gU) on the incoming gradient).
"""

import numpy as np
import pytest

import jtorch as torch
from jtorch.autograd import _fused

SVD_ERROR = "svd_backward: The singular vectors in the complex case are specified up to"
EIGH_ERROR = "linalg_eigh_backward: The eigenvectors in the complex case are specified up to"


def _complex(shape, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def test_nuclear_norm_gradient_is_u_vh():
    # d sum(S) / dA = U V^H for a complex A (PyTorch's convention: dL/dRe + i dL/dIm)
    a = _complex((4, 3))
    A = torch.tensor(a, requires_grad=True)
    torch.linalg.svd(A, full_matrices=False)[1].sum().backward()
    u, _, vh = np.linalg.svd(a.astype(np.complex128), full_matrices=False)
    np.testing.assert_allclose(A.grad.numpy(), u @ vh, rtol=1e-4, atol=1e-5)


def test_phase_invariant_vector_losses_have_gradients():
    A = torch.tensor(_complex((4, 3), 1), requires_grad=True)
    U, S, Vh = torch.linalg.svd(A, full_matrices=False)
    ((U * S.to(U.dtype)) @ Vh).real.sum().backward()  # = Re(A).sum(): gradient all ones
    np.testing.assert_allclose(A.grad.numpy(), np.ones((4, 3)), atol=1e-4)
    h = _complex((3, 3), 2)
    H = torch.tensor(h + h.conj().T, requires_grad=True)
    torch.linalg.eigh(H)[1].abs().sum().backward()
    assert np.isfinite(H.grad.numpy()).all()


@pytest.mark.parametrize(
    "loss, message",
    [
        (lambda A: torch.linalg.svd(A, full_matrices=False)[0].real.sum(), SVD_ERROR),
        (lambda A: torch.linalg.svd(A)[2].imag.sum(), SVD_ERROR),
        (lambda A: torch.svd(A)[2].real.sum(), SVD_ERROR),
        (lambda A: torch.linalg.eigh(A + A.mH)[1].real.sum(), EIGH_ERROR),
    ],
)
def test_phase_dependent_losses_raise_every_step(loss, message, monkeypatch):
    # a training loop's later steps go through the fused backward, which must keep the check
    monkeypatch.setattr(_fused, "_BACKGROUND", False)
    monkeypatch.setattr(_fused, "_AFTER", 2)
    A = torch.tensor(_complex((3, 3), 3), requires_grad=True)
    for _ in range(3):
        with pytest.raises(RuntimeError, match=message[:30]):
            loss(A).backward()
        assert A.grad is None


def test_real_decompositions_carry_no_check():
    A = torch.tensor(np.random.default_rng(4).standard_normal((3, 3)), requires_grad=True)
    assert torch.linalg.svd(A)[0].grad_fn.grad_check is None
    assert torch.linalg.eigh(A)[1].grad_fn.grad_check is None
    C = torch.tensor(_complex((3, 3)), requires_grad=True)
    assert torch.linalg.svd(C)[0].grad_fn.grad_check is not None
