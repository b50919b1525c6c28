"""Matches `torch.distributions.Geometric`."""

from numbers import Number

import jtorch as torch
from jtorch.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """Matches `torch.distributions.Geometric`: failures before the first success (>= 0)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = torch.Size() if isinstance(given, Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # probs = 0 passes unit_interval but has no distribution: PyTorch rejects it.
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{value.detach()[~valid]}"
                )

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = torch.empty(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 and k = 0: 0 * log(0) is 0 here, as PyTorch makes it.
        probs = torch.where((probs == 1) & (value == 0), torch.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return (
            binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
        )
