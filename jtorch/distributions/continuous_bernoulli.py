"""Matches `torch.distributions.ContinuousBernoulli`."""

import math
from numbers import Number

import jtorch as torch
from jtorch.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .bernoulli import _one_of
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Matches `torch.distributions.ContinuousBernoulli(probs=None, logits=None,
    lims=(0.499, 0.501))`: density C(p) p^x (1-p)^(1-x) on [0, 1].

    Near p = 1/2 the closed forms divide 0 by 0; inside `lims` Taylor expansions are used
    instead, as in PyTorch.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            # PyTorch checks here (before clamping) whenever validate_args is given at all.
            if (
                validate_args is not None
                and not self.arg_constraints["probs"].check(self.probs).all()
            ):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        scalar = isinstance(probs if probs is not None else logits, Number)
        self._lims = lims
        super().__init__(
            torch.Size() if scalar else self._param.size(), validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._lims = self._lims
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return torch.where(
            self._outside_unstable_region(), self.probs, self._lims[0] * torch.ones_like(self.probs)
        )

    def _cont_bern_log_norm(self):
        """log C(p), C(p) = 2 atanh(1 - 2p) / (1 - 2p)."""
        cut = self._cut_probs()
        below = torch.where(cut <= 0.5, cut, torch.zeros_like(cut))
        above = torch.where(cut >= 0.5, cut, torch.ones_like(cut))
        log_norm = torch.log(torch.abs(torch.log1p(-cut) - torch.log(cut))) - torch.where(
            cut <= 0.5, torch.log1p(-2.0 * below), torch.log(2.0 * above - 1.0)
        )
        x = torch.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return torch.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (torch.log1p(-cut) - torch.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * torch.pow(x, 2)) * x
        return torch.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return torch.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        var = cut * (cut - 1.0) / torch.pow(1.0 - 2.0 * cut, 2) + 1.0 / torch.pow(
            torch.log1p(-cut) - torch.log(cut), 2
        )
        x = torch.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return torch.where(self._outside_unstable_region(), var, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (
            -binary_cross_entropy_with_logits(logits, value, reduction="none")
            + self._cont_bern_log_norm()
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (torch.pow(cut, value) * torch.pow(1.0 - cut, 1.0 - value) + cut - 1.0) / (
            2.0 * cut - 1.0
        )
        unbounded = torch.where(self._outside_unstable_region(), cdfs, value)
        return torch.where(
            value <= 0.0,
            torch.zeros_like(value),
            torch.where(value >= 1.0, torch.ones_like(value), unbounded),
        )

    def icdf(self, value):
        cut = self._cut_probs()
        return torch.where(
            self._outside_unstable_region(),
            (torch.log1p(-cut + value * (2.0 * cut - 1.0)) - torch.log1p(-cut))
            / (torch.log(cut) - torch.log1p(-cut)),
            value,
        )

    def entropy(self):
        log_probs0 = torch.log1p(-self.probs)
        log_probs1 = torch.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        lo, hi = self._lims[0] - 0.5, self._lims[1] - 0.5
        outside = (x <= lo) | (x > hi)
        cut = torch.where(outside, x, lo * torch.ones_like(x))
        log_norm = torch.log(torch.abs(torch.special.expm1(cut))) - torch.log(torch.abs(cut))
        taylor = 0.5 * x + torch.pow(x, 2) / 24.0 - torch.pow(x, 4) / 2880.0
        return torch.where(outside, log_norm, taylor)
