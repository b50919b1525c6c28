"""Matches `torch.distributions.Gamma` and `Chi2`."""

from numbers import Number

import jtorch as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma", "Chi2"]


class Gamma(ExponentialFamily):
    """Matches `torch.distributions.Gamma(concentration, rate)`."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        numbers = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(
            torch.Size() if numbers else self.concentration.size(), validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        value = torch._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # Draws that underflow to 0 become the smallest normal number (no gradient change).
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            torch.xlogy(self.concentration, self.rate)
            + torch.xlogy(self.concentration - 1, value)
            - self.rate * value
            - torch.lgamma(self.concentration)
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - torch.log(self.rate) + torch.lgamma(c) + (1.0 - c) * torch.digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())


class Chi2(Gamma):
    """Matches `torch.distributions.Chi2(df)`: Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
