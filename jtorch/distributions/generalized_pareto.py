"""Matches `torch.distributions.GeneralizedPareto`."""

import math
from numbers import Number, Real

import jtorch as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]

_NAN = float("nan")


class GeneralizedPareto(Distribution):
    """Matches `torch.distributions.GeneralizedPareto(loc, scale, concentration)`.

    The support is [loc, inf) for concentration >= 0 and [loc, loc - scale / concentration]
    otherwise; a concentration close to 0 uses the exponential limit.
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(torch.Size() if numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration")
        )

    def _safe_concentration(self):
        """(concentration near 0, concentration with those entries set to 1)."""
        c = self.concentration
        eq_zero = torch.isclose(c, torch.zeros_like(c))
        return eq_zero, torch.where(eq_zero, torch.ones_like(c), c)

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + torch.ones_like(z)
        where_nonzero = torch.where(y == 0, y, y * torch.log1p(safe * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        return torch.where(eq_zero, -z, -torch.log1p(safe * z) / safe)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe = self._safe_concentration()
        logu = torch.log1p(-value)
        where_nonzero = self.loc + self.scale / safe * torch.expm1(-safe * logu)
        return torch.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe = torch.where(valid, self.concentration, 0.5)
        return torch.where(valid, self.loc + self.scale / (1 - safe), _NAN)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe = torch.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return torch.where(valid, result, _NAN)

    def entropy(self):
        ans = torch.log(self.scale) + self.concentration + 1
        return torch.broadcast_to(ans, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torch.where(
            self.concentration < 0, lower - self.scale / self.concentration, float("inf")
        )
        return constraints.interval(lower, upper)
