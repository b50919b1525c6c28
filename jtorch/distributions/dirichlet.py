"""Matches `torch.distributions.Dirichlet` and `Beta`."""

from numbers import Number

import jtorch as torch
import jtorch.nn.functional as F

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Dirichlet", "Beta"]


class Dirichlet(ExponentialFamily):
    """Matches `torch.distributions.Dirichlet(concentration)`."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(
            concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = torch.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # The draw's gradient w.r.t. the concentration is the implicit reparameterization
        # gradient (jax differentiates its gamma draws), as PyTorch's `_dirichlet_grad`.
        return torch._sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (
            torch.xlogy(c - 1.0, value).sum(-1) + torch.lgamma(c.sum(-1)) - torch.lgamma(c).sum(-1)
        )

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # All concentrations below 1: the density peaks at the vertex of the largest one.
        vertex = F.one_hot(mode.argmax(dim=-1), cm1.shape[-1]).to(mode)
        below = (self.concentration < 1).all(dim=-1, keepdim=True)
        return torch.where(below, vertex, mode)

    @property
    def variance(self):
        c = self.concentration
        c0 = c.sum(-1, True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (
            torch.lgamma(c).sum(-1)
            - torch.lgamma(a0)
            - (k - a0) * torch.digamma(a0)
            - ((c - 1.0) * torch.digamma(c)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - torch.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """Matches `torch.distributions.Beta(concentration1, concentration0)`."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            both = torch.tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            both = torch.stack([c1, c0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = torch.Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(torch.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x) + torch.lgamma(y) - torch.lgamma(x + y)
