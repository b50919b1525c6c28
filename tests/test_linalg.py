"""`torch.linalg` and legacy linear algebra (`jtorch/_ops/linalg/`), checked with numpy.

Factors that are unique only up to sign (eigenvectors, singular vectors, Q) are
checked through what is invariant: reconstructions and orthogonality.
"""

import functools
import math

import numpy as np
import pytest

import jtorch as torch

from . import helpers
from .helpers import from_np as t

# float64 factorisations against numpy's
close = functools.partial(helpers.close, rtol=1e-8, atol=1e-8)

RNG = np.random.default_rng(0)
M = RNG.standard_normal((3, 3))
SPD = M @ M.T + 3 * np.eye(3)
B = RNG.standard_normal((3, 2))
W = RNG.standard_normal((4, 3))


def test_cholesky_gradient_is_the_hermitian_part():
    # PyTorch treats the input as symmetric: the gradient is symmetric, and its inner product
    # with a symmetric direction E is the directional derivative along E.
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    x = torch.tensor(a, requires_grad=True)
    torch.linalg.cholesky(x).sum().backward()
    g = x.grad.numpy()
    np.testing.assert_allclose(g, g.T, rtol=1e-12)
    e = np.array([[0.3, -0.2], [-0.2, 0.1]])
    h = 1e-6
    fd = (np.linalg.cholesky(a + h * e).sum() - np.linalg.cholesky(a - h * e).sum()) / (2 * h)
    np.testing.assert_allclose((g * e).sum(), fd, rtol=1e-6)


def test_cholesky_and_solves():
    L = torch.linalg.cholesky(t(SPD))
    close(L, np.linalg.cholesky(SPD))
    U = torch.linalg.cholesky(t(SPD), upper=True)
    close(U, np.linalg.cholesky(SPD).T)
    L2, info = torch.linalg.cholesky_ex(t(SPD))
    assert info.item() == 0 and info.dtype == torch.int32
    _, info = torch.linalg.cholesky_ex(t(-SPD))
    assert info.item() == 1
    close(torch.cholesky_solve(t(B), L), np.linalg.solve(SPD, B))
    close(torch.cholesky_inverse(L), np.linalg.inv(SPD))
    close(torch.linalg.solve(t(M), t(B)), np.linalg.solve(M, B))
    close(torch.linalg.solve(t(M), t(B[:, 0])), np.linalg.solve(M, B[:, 0]))
    close(torch.linalg.solve(t(M), t(B.T.copy()), left=False), B.T @ np.linalg.inv(M))
    close(
        torch.linalg.solve_triangular(t(np.triu(M)), t(B), upper=True),
        np.linalg.solve(np.triu(M), B),
    )


def test_lu_family():
    LU, piv = torch.linalg.lu_factor(t(M))
    assert piv.dtype == torch.int32 and piv.min().item() >= 1
    P, L, U = torch.linalg.lu(t(M))
    close(P.numpy() @ L.numpy() @ U.numpy(), M)
    close(torch.linalg.lu_solve(LU, piv, t(B)), np.linalg.solve(M, B))
    close(torch.linalg.lu_solve(LU, piv, t(B), adjoint=True), np.linalg.solve(M.T, B))
    P2, L2, U2 = torch.lu_unpack(LU, piv)
    close(P2, P.numpy())
    close(torch.lu_solve(t(B), LU, piv), np.linalg.solve(M, B))


def test_det_inv_and_norms():
    close(torch.linalg.det(t(M)), np.linalg.det(M))
    sign, logabs = torch.linalg.slogdet(t(M))
    s2, l2 = np.linalg.slogdet(M)
    close(sign, s2)
    close(logabs, l2)
    close(torch.linalg.inv(t(M)), np.linalg.inv(M))
    close(torch.inverse(t(M)), np.linalg.inv(M))
    close(torch.linalg.matrix_power(t(M), -2), np.linalg.matrix_power(M, -2))
    close(torch.linalg.vector_norm(t(W), ord=3), (np.abs(W) ** 3).sum() ** (1 / 3))
    for o in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        close(torch.linalg.matrix_norm(t(W), ord=o), np.linalg.norm(W, ord=o))
    close(torch.linalg.norm(t(W)), np.linalg.norm(W))
    close(torch.linalg.cond(t(M)), np.linalg.cond(M))
    assert torch.linalg.matrix_rank(t(W @ W.T)).item() == 3


def test_decompositions_up_to_sign():
    Q, R = torch.linalg.qr(t(W))
    close(Q.numpy() @ R.numpy(), W)
    close(Q.numpy().T @ Q.numpy(), np.eye(3))
    w, v = torch.linalg.eigh(t(SPD))
    close(w, np.linalg.eigvalsh(SPD))
    close(v.numpy() @ np.diag(w.numpy()) @ v.numpy().T, SPD)
    U, S, Vh = torch.linalg.svd(t(W), full_matrices=False)
    close(S, np.linalg.svd(W, compute_uv=False))
    close(U.numpy() @ np.diag(S.numpy()) @ Vh.numpy(), W)
    U, S, V = torch.svd(t(W))  # the legacy form returns V, not Vh
    close(U.numpy() @ np.diag(S.numpy()) @ V.numpy().T, W)
    ev = torch.linalg.eigvals(t(M))
    assert ev.dtype == torch.complex128
    close(np.sort_complex(ev.numpy()), np.sort_complex(np.linalg.eigvals(M)))
    close(torch.linalg.pinv(t(W)), np.linalg.pinv(W))
    a, tau = torch.geqrf(t(W))
    close(np.abs(torch.linalg.householder_product(a, tau).numpy()), np.abs(Q.numpy()))


def test_return_type_names():
    assert type(torch.linalg.eigh(t(SPD))).__name__ == "linalg_eigh"
    assert type(torch.linalg.slogdet(t(M))).__name__ == "linalg_slogdet"
    assert type(torch.slogdet(t(M))).__name__ == "slogdet"
    assert torch.linalg.qr(t(M))._fields == ("Q", "R")


def test_misc():
    close(torch.linalg.vander(t(np.array([1.0, 2.0, 3.0]))), np.vander([1, 2, 3], increasing=True))
    close(torch.linalg.vecdot(t(W), t(W)), (W * W).sum(-1))
    close(torch.matrix_exp(t(np.diag([0.0, 1.0]))), np.diag([1, np.e]))
    x, res, rank, sv = torch.linalg.lstsq(t(W), t(W[:, :2]))
    close(x, np.linalg.lstsq(W, W[:, :2], rcond=None)[0])
    A4 = RNG.standard_normal((2, 3, 6))
    close(torch.linalg.tensorinv(t(A4), ind=2), np.linalg.tensorinv(A4, ind=2))


@pytest.mark.parametrize(
    "call, msg",
    [
        (
            lambda: torch.linalg.inv(t(W)),
            "linalg.inv: A must be batches of square matrices, but they are 4 by 3 matrices",
        ),
        (
            lambda: torch.linalg.inv(t(np.eye(2, dtype=np.int64))),
            "linalg.inv: Expected a floating point or complex tensor as input. Got Long",
        ),
        (lambda: torch.linalg.det(t(B[:, 0])), "must have at least 2 dimensions"),
        (lambda: torch.linalg.eigh(t(SPD), UPLO="X"), "Expected UPLO argument to be 'L' or 'U'"),
        (lambda: torch.linalg.solve(t(M), t(np.ones(4))), "Incompatible shapes of A and B"),
        (lambda: torch.linalg.matrix_norm(t(W), ord=3), "Order 3 not supported"),
        (lambda: torch.linalg.qr(t(M), mode="x"), "qr received unrecognized mode 'x'"),
    ],
)
def test_errors(call, msg):
    with pytest.raises(RuntimeError, match=msg):
        call()


# ---------------------------------------------------------------------------
# LinAlgError, the _ex variants' info, linalg.matmul and special.logsumexp


def test_linalg_errors():
    err = torch.linalg.LinAlgError
    assert issubclass(err, RuntimeError)
    with pytest.raises(
        err,
        match=r"linalg.cholesky: The factorization could not be completed "
        r"because the input is not positive-definite \(the leading "
        r"minor of order 2 is not positive-definite\).",
    ):
        torch.linalg.cholesky(torch.tensor([[1.0, 0.0], [0.0, -1.0]]))
    a = torch.zeros(3, 2, 2)
    a[0] = torch.eye(2)
    with pytest.raises(
        err,
        match=r"linalg.inv: \(Batch element 1\): The diagonal element 1 is "
        "zero, the inversion could not be completed",
    ):
        torch.linalg.inv(a)
    with pytest.raises(
        err,
        match=r"torch.linalg.solve: The solver failed because the input "
        "matrix is singular.",
    ):
        torch.linalg.solve(torch.tensor([[1.0, 2.0], [2.0, 4.0]]), torch.ones(2))
    with pytest.raises(err, match=r"linalg.inv: \(Batch element 1\)"):
        a.matrix_power(-1)
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        torch.linalg.lu_factor(torch.zeros(2, 2))
    with pytest.raises(err, match="linalg.inv_ex: "):
        torch.linalg.inv_ex(a, check_errors=True)
    # Without check_errors the `_ex` variants report through `info` (LAPACK's 1-based index).
    assert torch.linalg.inv_ex(a).info.tolist() == [0, 1, 1]
    m = torch.tensor([[4.0, 2.0, 1.0], [2.0, 1.0, 0.0], [1.0, 0.0, 3.0]])
    assert torch.linalg.cholesky_ex(m).info.item() == 2  # det of the 2x2 minor is 0
    assert torch.linalg.cholesky_ex(torch.eye(2)).info.item() == 0


def test_linalg_matmul_and_special_logsumexp():
    assert torch.linalg.matmul(torch.ones(2, 3), torch.ones(3)).tolist() == [3.0, 3.0]
    x = torch.tensor([[1.0, 2.0], [0.0, 0.0]])
    np.testing.assert_allclose(
        torch.special.logsumexp(x, 1).numpy(),
        [math.log(math.e + math.e**2), math.log(2)],
        rtol=1e-6,
    )


def test_out_and_failed_out():
    out = torch.empty(3, 3, dtype=torch.float64)
    torch.linalg.inv(t(M), out=out)
    close(out, np.linalg.inv(M))
    with pytest.raises(RuntimeError):
        torch.linalg.inv(t(W), out=out)
    close(out, np.linalg.inv(M))


def test_ldl():
    S = M + M.T
    LD, piv = torch.linalg.ldl_factor(t(S))
    assert piv.dtype == torch.int32
    assert np.allclose(np.triu(LD.numpy(), 1), 0)
    close(torch.linalg.ldl_solve(LD, piv, t(B)), np.linalg.solve(S, B))


def test_cholesky_solve_gradient_treats_the_factor_as_full():
    # PyTorch differentiates X = (L L^H)^-1 B with respect to the whole matrix L (its
    # gradient has an upper triangle): compare with finite differences of that function.
    L0 = np.array([[2.0, 0.0], [0.5, 1.0]])
    B0 = np.array([[1.0, 0.3], [0.2, 2.0]])

    def f(L):
        return (np.linalg.solve(L @ L.T, B0) ** 2).sum()

    x = torch.tensor(L0, requires_grad=True)
    torch.cholesky_solve(torch.tensor(B0), x).pow(2).sum().backward()
    h, fd = 1e-6, np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            e = np.zeros((2, 2))
            e[i, j] = h
            fd[i, j] = (f(L0 + e) - f(L0 - e)) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_full_svd_gradient_reads_the_first_k_singular_vectors(shape):
    # PyTorch's documented convention for full_matrices=True: the gradient of U[:, k:] and
    # Vh[k:] (not unique) is ignored and the rest is differentiated as the reduced SVD.
    # The loss is invariant to the singular vectors' signs, so finite differences of
    # numpy's SVD give its derivative.
    a = RNG.standard_normal(shape)
    c = RNG.standard_normal(shape)
    k = min(shape)

    def loss_np(a):
        u, s, vh = np.linalg.svd(a)
        return (
            s.sum()
            + ((u[:, :k] * c[:, :1]).sum(0) ** 2).sum()
            + ((vh[:k] * c[:1, :]).sum(1) ** 2).sum()
        )

    x = torch.tensor(a, requires_grad=True)
    U, S, Vh = torch.linalg.svd(x, full_matrices=True)
    extra = U[:, k:].sum() + Vh[k:].sum()  # ignored
    loss = (
        S.sum()
        + ((U[:, :k] * t(c[:, :1])).sum(0) ** 2).sum()
        + ((Vh[:k] * t(c[:1, :])).sum(1) ** 2).sum()
        + extra
    )
    loss.backward()
    h = 1e-6
    fd = np.zeros(shape)
    for i in np.ndindex(*shape):
        e = np.zeros(shape)
        e[i] = h
        fd[i] = (loss_np(a + e) - loss_np(a - e)) / (2 * h)
    close(x.grad, fd, rtol=1e-6, atol=1e-6)
    # Forward mode: the tangents of the extra columns are zero.
    du = torch.func.jvp(lambda a: torch.linalg.svd(a)[0], (t(a),), (t(c),))[1]
    close(du[:, k:], np.zeros((shape[0], shape[0] - k)))
