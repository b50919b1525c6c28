"""Gradients of complex decompositions whose vectors carry a free phase, against PyTorch.

A complex SVD's singular vectors and an eigendecomposition's eigenvectors are unique up to
a phase e^{i phi} each. For a loss that does not depend on the phases (|U|, U S Vh, the
projector V V^H, the values alone) both libraries give the same gradient; for one that
does (Re U), PyTorch's backward raises a RuntimeError saying so, and so must jtorch's.
Each case also runs as a training loop does (`backward()` three times on a fresh graph),
where jtorch's fused backward would otherwise trace the node without its check.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _complex(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def _hermitian(n, seed):
    a = _complex((n, n), seed)
    return (a + a.conj().T).astype(np.complex64)


def _weights(shape, seed):
    return np.random.default_rng(seed + 100).uniform(-1, 1, shape).astype(np.float32)


def _svd_vectors(L, A, full):
    U, S, Vh = L.linalg.svd(A, full_matrices=full)
    return U, S, Vh


# name -> (input maker, loss(lib, A) -> scalar)
CASES = {
    "svd_values": (lambda: _complex((4, 3), 0), lambda L, A: L.linalg.svd(A)[1].sum()),
    "svd_abs_u_reduced": (
        lambda: _complex((4, 3), 1),
        lambda L, A: (
            L.linalg.svd(A, full_matrices=False)[0].abs() * L.tensor(_weights((4, 3), 1))
        ).sum(),
    ),
    "svd_abs_vh_wide": (
        lambda: _complex((3, 5), 2),
        lambda L, A: (
            L.linalg.svd(A, full_matrices=False)[2].abs() * L.tensor(_weights((3, 5), 2))
        ).sum(),
    ),
    "svd_reconstruction": (
        lambda: _complex((4, 3), 3),
        lambda L, A: (lambda U, S, Vh: ((U * S.to(U.dtype)) @ Vh).real.sum())(
            *L.linalg.svd(A, full_matrices=False)
        ),
    ),
    "svd_full_projector": (
        lambda: _complex((2, 4, 3), 4),
        lambda L, A: (lambda U: (U[..., :3] @ U[..., :3].mH).real.sum())(L.linalg.svd(A)[0]),
    ),
    "svd_phase_dependent": (
        lambda: _complex((4, 3), 5),
        lambda L, A: L.linalg.svd(A, full_matrices=False)[0].real.sum(),
    ),
    "svd_phase_dependent_vh": (
        lambda: _complex((3, 3), 6),
        lambda L, A: L.linalg.svd(A)[2].imag.sum(),
    ),
    "legacy_svd_abs_v": (
        lambda: _complex((4, 3), 7),
        lambda L, A: (L.svd(A)[2].abs() * L.tensor(_weights((3, 3), 7))).sum(),
    ),
    "legacy_svd_phase_dependent": (
        lambda: _complex((4, 3), 8),
        lambda L, A: L.svd(A, some=False)[2].real.sum(),
    ),
    "eigh_values": (lambda: _hermitian(3, 9), lambda L, A: L.linalg.eigh(A)[0].sum()),
    "eigh_abs_vectors": (
        lambda: _hermitian(4, 10),
        lambda L, A: (L.linalg.eigh(A)[1].abs() * L.tensor(_weights((4, 4), 10))).sum(),
    ),
    "eigh_upper_projector": (
        lambda: _hermitian(3, 11),
        lambda L, A: (lambda V: (V[:, :1] @ V[:, :1].mH).real.sum())(L.linalg.eigh(A, UPLO="U")[1]),
    ),
    "eigh_phase_dependent": (
        lambda: _hermitian(3, 12),
        lambda L, A: L.linalg.eigh(A)[1].real.sum(),
    ),
    "eig_phase_dependent": (
        lambda: _complex((3, 3), 13),
        lambda L, A: L.linalg.eig(A)[1].real.sum(),
    ),
}


def _run(lib, case, steps):
    """Gradients of `steps` backward() calls (a fresh graph each time), or the error."""
    make, loss = CASES[case]
    a = make()
    A = lib.tensor(a).requires_grad_(True)
    grads = []
    for _ in range(steps):
        A.grad = None
        try:
            loss(lib, A).backward()
        except RuntimeError as e:
            return ("error", str(e))
        grads.append(A.grad.detach().numpy().copy() if lib is torch else np.asarray(A.grad._array))
    return ("grads", grads)


@pytest.mark.parametrize("steps", [1, 3], ids=["single", "loop"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_complex_vector_gradients(case, steps):
    expected = _run(torch, case, 1)
    actual = _run(jtorch, case, steps)
    assert actual[0] == expected[0], (expected, actual)
    if expected[0] == "error":
        assert actual[1] == expected[1]
        return
    for g in actual[1]:
        np.testing.assert_allclose(g, expected[1][0], rtol=1e-4, atol=1e-5)
