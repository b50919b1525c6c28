"""Matches `torch.distributions.LKJCholesky`."""

import math

import jtorch as torch

from . import constraints
from .dirichlet import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Matches `torch.distributions.LKJCholesky(dim, concentration=1.0)`: the LKJ
    distribution of correlation matrices, over their lower Cholesky factors.

    Sampling is the onion method: row i of the factor is sqrt(y_i) times a uniform direction
    in i dimensions, y_i ~ Beta, and the diagonal closes the row to unit norm.
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(
            self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device
        )
        offset = torch.cat([offset.new_zeros((1,)), offset])
        # Row i >= 1 has squared norm y_i ~ Beta(i / 2, marginal - (i - 1) / 2) below the
        # diagonal (Lewandowski et al. 2009, the onion method; row 0 takes no draw). PyTorch
        # uses i - 1/2 for the first parameter, which makes the correlations of rows 2 and on
        # too spread out (their variance is not 1 / (2 concentration + dim - 1)); jtorch draws
        # from the distribution log_prob describes.
        self._beta = Beta(0.5 * (offset + 1), marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, torch.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = torch.randn(
                self._extended_shape(sample_shape), dtype=y.dtype, device=y.device
            ).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            # Row 0 has no off-diagonal entries (its 0/0 above is NaN).
            row0 = torch.arange(self.dim, device=y.device).unsqueeze(-1) == 0
            u_hypersphere = torch.where(row0, torch.zeros_like(u_hypersphere), u_hypersphere)
            w = torch.sqrt(y) * u_hypersphere
            tiny = torch.finfo(w.dtype).tiny
            diag = torch.clamp(1 - torch.sum(w**2, dim=-1), min=tiny).sqrt()
            return w + torch.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = torch.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = torch.lgamma(alpha) * dm1
        numerator = torch.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
