"""Randomized low-rank factorisations: `torch.svd_lowrank` and `torch.pca_lowrank`.

Both follow Halko, Martinsson and Tropp (2009), as PyTorch does: a random Gaussian sketch,
`niter` subspace iterations re-orthonormalised by QR, then an exact SVD of the small
projected matrix. The sketch is drawn from jtorch's generator, so the factors match
PyTorch's up to the (random) signs of singular-vector pairs, not bit for bit.
Written with jtorch ops, so autograd differentiates through them.
"""

from .._registry import composite


def _sketch_dtype(A):
    import jtorch

    return A.dtype if A.is_floating_point() or A.is_complex() else jtorch.float32


def _approximate_basis(A, q, niter, M):
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M."""
    import jtorch

    qr = jtorch.linalg.qr
    R = jtorch.randn(A.shape[-1], q, dtype=_sketch_dtype(A), device=A.device)

    def times(X):  # (A - M) @ X, without forming A - M (PyTorch's order of operations)
        Y = A @ X
        return Y if M is None else Y - M @ X

    def times_h(X):  # (A - M)^H @ X
        Y = A.mH @ X
        return Y if M is None else Y - M.mH @ X

    Q = qr(times(R)).Q
    for _ in range(niter):
        Q = qr(times_h(Q)).Q
        Q = qr(times(Q)).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # sketch the taller side
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    import jtorch

    U, S, Vh = jtorch.linalg.svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if m < n else (U, S, V)


@composite(name="svd_lowrank", method=False)
def svd_lowrank(A, q: int | None = 6, niter: int | None = 2, M=None):
    """Matches `torch.svd_lowrank`: `(U, S, V)` with `A - M ~ U diag(S) V^H` (M optional)."""
    return _svd_lowrank(A, q, niter, M)


@composite(name="pca_lowrank", method=False)
def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2):
    """Matches `torch.pca_lowrank`: the low-rank SVD of A, its columns centred first."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A, q, niter, None)
