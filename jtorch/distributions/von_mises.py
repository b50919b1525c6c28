"""Matches `torch.distributions.VonMises`."""

import math

import jtorch as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _eval_poly(y, coef):
    """sum_k coef[k] y^k by Horner's rule."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


# Polynomial approximations of the modified Bessel functions I0 and I1 (Abramowitz & Stegun
# 9.8.1-9.8.4), the ones PyTorch uses: log_prob and variance then agree to the last digit.
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_COEF_LARGE = [
    0.39894228,
    0.01328592,
    0.00225319,
    -0.00157565,
    0.00916281,
    -0.02057706,
    0.02635537,
    -0.01647633,
    0.00392377,
]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_COEF_LARGE = [
    0.39894228,
    -0.03988024,
    -0.00362018,
    0.00163801,
    -0.01031555,
    0.02282967,
    -0.02895312,
    0.01787654,
    -0.00420059,
]


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0 and order 0 or 1."""
    y = (x / 3.75).pow(2)
    small = _eval_poly(y, _I1_COEF_SMALL if order else _I0_COEF_SMALL)
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large_poly = _eval_poly(3.75 / x, _I1_COEF_LARGE if order else _I0_COEF_LARGE)
    large = x - 0.5 * x.log() + large_poly.log()
    return torch.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best & Fisher (1979): wrapped-Cauchy proposals, accepted until every entry is drawn."""
    x = torch.zeros(shape, dtype=loc.dtype, device=loc.device)
    done = torch.zeros(shape, dtype=torch.bool, device=loc.device)
    while not done.all():
        u1, u2, u3 = torch.rand((3,) + tuple(shape), dtype=loc.dtype, device=loc.device).unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)) & ~done
        x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Matches `torch.distributions.VonMises(loc, concentration)`: a circular normal on
    [-pi, pi). Samples are drawn in float64 and cast back, as in PyTorch."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, torch.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return (
            log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)
        )

    @lazy_property
    def _loc(self):
        return self.loc.to(torch.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(torch.double)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        # Small concentrations lose every digit in rho; the Taylor form keeps them.
        return torch.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            shape = self._extended_shape(sample_shape)
            x = _rejection_sample(
                self._loc.expand(shape),
                self._concentration.expand(shape),
                self._proposal_r.expand(shape),
                shape,
            )
            return x.to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(
            self.loc.expand(batch_shape),
            self.concentration.expand(batch_shape),
            validate_args=validate_args,
        )

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (
            1
            - (
                _log_modified_bessel_fn(self.concentration, order=1)
                - _log_modified_bessel_fn(self.concentration, order=0)
            ).exp()
        )
