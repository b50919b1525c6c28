"""Matches `torch.distributions.FisherSnedecor`."""

from numbers import Number

import jtorch as torch

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]

_NAN = float("nan")


class FisherSnedecor(Distribution):
    """Matches `torch.distributions.FisherSnedecor(df1, df2)`: (X1 / df1) / (X2 / df2) for
    chi-squared X1, X2."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        numbers = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(torch.Size() if numbers else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(new.batch_shape)
        new._gamma2 = self._gamma2.expand(new.batch_shape)
        return new

    @property
    def mean(self):
        df2 = torch.where(self.df2 <= 2, _NAN, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return torch.where(self.df1 <= 2, _NAN, mode)

    @property
    def variance(self):
        df2 = torch.where(self.df2 <= 4, _NAN, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        X1 = self._gamma1.rsample(sample_shape).view(shape)
        X2 = self._gamma2.rsample(sample_shape).view(shape)
        # Draws that underflow become the smallest normal number (no gradient change).
        tiny = torch.finfo(X2.dtype).tiny
        X2.detach().clamp_(min=tiny)
        Y = X1 / X2
        Y.detach().clamp_(min=tiny)
        return Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * torch.log(value)
        t3 = (ct1 + ct2) * torch.log1p(ct3 * value)
        return t1 + t2 - t3
