"""Matches `torch.distributions.ExponentialFamily`."""

import jtorch as torch

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution with density exp(<t(x), theta> - F(theta) + k(x)).

    Subclasses give `_natural_params`, `_log_normalizer` (F) and `_mean_carrier_measure`;
    the entropy and the KL divergence between two members then follow from F's gradient
    (a Bregman divergence), as in PyTorch.
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = torch.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
