"""Matches `torch.distributions.RelaxedBernoulli` and `LogitRelaxedBernoulli`."""

from numbers import Number

import jtorch as torch

from . import constraints
from .bernoulli import _one_of
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli (binary Concrete) sample."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            self._param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        scalar = isinstance(probs if probs is not None else logits, Number)
        super().__init__(
            torch.Size() if scalar else self._param.size(), validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(
            LogitRelaxedBernoulli, batch_shape, _instance, ("probs", "logits")
        )
        new.temperature = self.temperature
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(torch.rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """Matches `torch.distributions.RelaxedBernoulli(temperature, probs, logits)`."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
