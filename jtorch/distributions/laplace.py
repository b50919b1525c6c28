"""Matches `torch.distributions.Laplace`."""

from numbers import Number

import jtorch as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Matches `torch.distributions.Laplace(loc, scale)`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(torch.Size() if numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2**0.5 * self.scale

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        eps = torch.finfo(self.loc.dtype).eps
        # u in [eps - 1, 1): keeps log1p(-|u|) finite.
        u = torch.empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * torch.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + torch.log(2 * self.scale)
