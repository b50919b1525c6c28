"""Matches `torch.distributions.utils`: parameter broadcasting and probability helpers."""

from numbers import Number

import jax

import jtorch as torch
import jtorch.nn.functional as F

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values):
    """Matches `torch.distributions.utils.broadcast_all`.

    Python numbers become tensors of the first tensor's dtype and device (of the default
    dtype when there is no tensor); then everything is broadcast together.
    """
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, torch.Tensor) for v in values):
        options = dict(dtype=torch.get_default_dtype())
        for v in values:
            if isinstance(v, torch.Tensor):
                options = dict(dtype=v.dtype, device=v.device)
                break
        values = [v if isinstance(v, torch.Tensor) else torch.tensor(v, **options) for v in values]
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return torch.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim: int):
    """Sums the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Matches `logits_to_probs`: sigmoid for binary logits, softmax over the last dim else."""
    return torch.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities into [eps, 1 - eps] of their dtype."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Matches `probs_to_logits`: log-odds when binary, log-probabilities otherwise."""
    p = clamp_probs(probs)
    if is_binary:
        return torch.log(p) - torch.log1p(-p)
    return torch.log(p)


class lazy_property:
    """A property computed on first access and then stored on the instance.

    On the class it acts as a plain property (so `arg_constraints` checks can skip it).
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    arange = torch.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower-triangular entries (below diagonal `diag`) of `mat`, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of `tril_matrix_to_vec`: a lower-triangular matrix from its entries."""
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > torch.finfo(vec.dtype).eps:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def _all_true(valid) -> bool:
    """`valid.all()`, or True when the values are traced (under `jtorch.compile` the values
    are not known, so validation is skipped, as for other value-dependent checks)."""
    if isinstance(valid, bool):
        return valid
    if isinstance(valid._array, jax.core.Tracer):
        return True
    return bool(valid.all())
