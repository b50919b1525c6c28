"""`torch.nn.utils.parametrizations`: `weight_norm`, `spectral_norm`, `orthogonal`.

Each is a small Module registered with `parametrize.register_parametrization`, so the
state_dict layout is PyTorch's (`parametrizations.weight.original0/original1` for weight
norm, `parametrizations.weight.original` plus `_u`/`_v` buffers for spectral norm).
"""

from __future__ import annotations

from enum import Enum, auto

from ... import (
    _weight_norm,
    add,
    allclose,
    cat,
    eye,
    finfo,
    geqrf,
    linalg,
    matrix_exp,
    mv,
    norm_except_dim,
    randn,
    vdot,
    zeros_like,
)
from ..._tensor import Tensor
from ...autograd import grad_mode
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(q) -> bool:
    n, k = q.size(-2), q.size(-1)
    eps = 10.0 * n * finfo(q.dtype).eps
    return allclose(q.mH @ q, eye(k, dtype=q.dtype, device=q.device), atol=eps)


def _make_orthogonal(a):
    """The Q of a QR decomposition of `a`, with columns signed so that diag(R) > 0."""
    x, tau = geqrf(a)
    q = linalg.householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            # Only the lower triangle is used: n*k - k(k-1)/2 free parameters.
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:  # the Cayley retraction (I + A/2)(I - A/2)^-1
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(add(Id, A, alpha=-0.5), add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            # The diagonal of X holds the signs (+-1); it is not differentiated through.
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with grad_mode.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix "
                    "exponential or the Cayley parametrizations when "
                    "use_trivialization=False."
                )
            # Householder: reflectors of Q's QR, with the diagonal holding the signs of R.
            A, tau = geqrf(Q)
            diag = A.diagonal(dim1=-2, dim2=-1)
            diag.sign_()
            diag[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete Q to an n x n orthogonal matrix
            N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        # -Id, so that householder(zeros) gives eye: the trivialization starts at `base`.
        neg_Id = zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Matches `torch.nn.utils.parametrizations.orthogonal`."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = (
            "matrix_exp"
            if weight.size(-2) == weight.size(-1) or weight.is_complex()
            else "householder"
        )
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", '
            f'"householder". Got: {orthogonal_map}'
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0):
    """Matches `torch.nn.utils.parametrizations.weight_norm`: `original0` is the magnitude g,
    `original1` the direction v."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(
        state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        # Loads checkpoints written with the legacy `weight_g`/`weight_v` names.
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # A 1-D weight is normalised exactly in forward; no singular vectors needed.
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # u and v are updated in place (`out=`), as in PyTorch, so that they stay the same
        # buffer objects; forward then uses clones of them.
        with grad_mode.no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _conv_transpose_classes() -> tuple:
    from .. import modules

    names = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
    return tuple(getattr(modules, n) for n in names if hasattr(modules, n))


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Matches `torch.nn.utils.parametrizations.spectral_norm` (power iteration on `_u`,
    `_v`; dim 1 for transposed convolutions)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _conv_transpose_classes()) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
