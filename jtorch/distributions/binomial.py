"""Matches `torch.distributions.Binomial`."""

import jtorch as torch

from . import constraints
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0) whose gradient at 0 is 1/2 (PyTorch's choice, kept for gradient parity).
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """Matches `torch.distributions.Binomial(total_count=1, probs=None, logits=None)`."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            self._param = self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(
            Binomial, batch_shape, _instance, ("total_count", "probs", "logits")
        )
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_n_choose_k = torch.lgamma(n + 1) - torch.lgamma(value + 1) - torch.lgamma(n - value + 1)
        # n * log(1 + exp(logits)), written to stay finite for large |logits|.
        log_norm = n * _clamp_by_zero(logits) + n * torch.log1p(torch.exp(-torch.abs(logits)))
        return value * logits + log_n_choose_k - log_norm

    def _homogeneous_count(self, what):
        total = int(self.total_count.max())
        if not self.total_count.min() == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = self._homogeneous_count("enumerate_support")
        values = torch.arange(1 + total, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
