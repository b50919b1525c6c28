"""Matches `torch.distributions.StudentT`."""

import math

import jtorch as torch

from . import constraints
from .distribution import Distribution
from .gamma import Chi2
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Matches `torch.distributions.StudentT(df, loc=0., scale=1.)`."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return torch.where(self.df <= 1, float("nan"), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        var = torch.where(df > 2, finite, float("inf"))
        return torch.where(df <= 1, float("nan"), var)

    def rsample(self, sample_shape=torch.Size()):
        # X / sqrt(Z / df) with X ~ N(0, 1), Z ~ Chi2(df).
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * torch.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        df = self.df
        z = (
            self.scale.log()
            + 0.5 * df.log()
            + 0.5 * math.log(math.pi)
            + torch.lgamma(0.5 * df)
            - torch.lgamma(0.5 * (df + 1.0))
        )
        return -0.5 * (df + 1.0) * torch.log1p(y**2.0 / df) - z

    def entropy(self):
        df = self.df
        lbeta = torch.lgamma(0.5 * df) + math.lgamma(0.5) - torch.lgamma(0.5 * (df + 1))
        return (
            self.scale.log()
            + 0.5 * (df + 1) * (torch.digamma(0.5 * (df + 1)) - torch.digamma(0.5 * df))
            + 0.5 * df.log()
            + lbeta
        )
