"""KL divergences between distributions of different families (PyTorch's cross pairs).

Where p's support is not contained in q's, the KL is infinite; those pairs are registered
in bulk. Registered into `kl`'s registry on import (`jtorch.distributions` imports this
module right after `kl`, so every pair is registered before the package is usable).
"""

import math

import jtorch as torch

from .bernoulli import Bernoulli
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Beta
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import _INF, _infinite_like, _set, register_kl
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler_constant


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


def _register_infinite(pairs, param):
    def fun(p, q):
        return _infinite_like(getattr(p, param))

    for type_p, type_q in pairs:
        register_kl(type_p, type_q)(fun)


# Supports that are not contained in the other's: KL is infinite.
_BOUNDED = [Beta, ContinuousBernoulli, Uniform]
_register_infinite([(Beta, Pareto)], "concentration1")
_register_infinite([(ContinuousBernoulli, Pareto)], "probs")
_register_infinite([(Exponential, q) for q in _BOUNDED + [Pareto]], "rate")
_register_infinite([(Gamma, q) for q in _BOUNDED + [Pareto]], "concentration")
_register_infinite(
    [(p, q) for p in (Gumbel, Laplace, Normal) for q in _BOUNDED + [Exponential, Gamma, Pareto]],
    "loc",
)
_register_infinite([(Pareto, q) for q in _BOUNDED], "scale")


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * torch.log(ratio)
    return (
        t1
        + ratio
        + q.concentration.lgamma()
        + q.concentration * euler_constant
        - (1 + euler_constant)
    )


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * torch.log(rate_sqr * var_normal * 2 * math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = torch.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * torch.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * torch.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * torch.log(2 * scale_sqr_var_ratio / math.pi)
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = (common_term).pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _set(result, p.low < 0, _INF)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t4 = q.rate * (p.high + p.low) / 2
    return _set(-t1 + t2 + t3 + t4, p.low < 0, _INF)


def _x_log_x(t):
    return torch.special.xlogy(t, t)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = torch.log(common_term)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t3 = (
        (q.concentration0 - 1)
        * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term)
        / common_term
    )
    t4 = (
        q.concentration1.lgamma()
        + q.concentration0.lgamma()
        - (q.concentration1 + q.concentration0).lgamma()
    )
    result = t3 + t4 - t1 - t2
    return _set(result, (p.high > 1) | (p.low < 0), _INF)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * (torch.exp(-high_loc_diff) - torch.exp(-low_loc_diff))
    return t1 - t2


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - torch.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    a, b = p.concentration1, p.concentration0
    return -p.entropy() - q.rate.log() + q.rate * (a / (a + b))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    a, b = p.concentration1, p.concentration0
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (a.digamma() - (a + b).digamma())
    return -p.entropy() + t2 - t3 + q.rate * a / (a + b)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    a, b = p.concentration1, p.concentration0
    E_beta = a / (a + b)
    var_normal = q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (E_beta * (1 - E_beta) / (a + b + 1) + E_beta.pow(2)) * 0.5
    t4 = q.loc * E_beta
    t5 = q.loc.pow(2) * 0.5
    return -p.entropy() + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _set(result, (q.low > 0) | (q.high < 1), _INF)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - torch.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + torch.square(q.loc / q.scale)) + torch.log(q.scale)
    t3 = (p.variance + torch.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * torch.square(q.scale))
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    # PyTorch's test is q.low >= 0 or q.high <= 1, so Uniform(0, 1) itself gives inf too.
    result = -p.entropy() + (q.high - q.low).log()
    return _set(result, (q.low >= 0) | (q.high <= 1), _INF)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = torch.exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    return t1 - loc_scale_ratio + t2 + scale_rate_prod.reciprocal()


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    a = p.concentration
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = (a - 1) * a.digamma() - a.lgamma() - a
    t2 = beta_scale_prod.log() + a / beta_scale_prod
    t3 = torch.exp(loc_scale_ratio) * (1 + beta_scale_prod.reciprocal()).pow(-a) - loc_scale_ratio
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    a = p.concentration
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = 0.5 * torch.log(beta_sqr * var_normal * 2 * math.pi) - a - a.lgamma()
    t2 = 0.5 * (a.pow(2) + a) / beta_sqr
    t3 = q.loc * a / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (a - 1) * a.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = torch.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return _set(t1 - p.alpha.reciprocal() + t3 - 1, p.alpha <= 1, _INF)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _set(t1 + t2 + t3 + t4 - 1, p.alpha <= 1, _INF)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return _set(t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1, p.alpha <= 2, _INF)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    # PyTorch's test is p.high >= 1 or p.low <= 0 (so also inf for Uniform(0, 0.5)).
    result = -p.entropy() - p.mean * q.logits - torch.log1p(-q.probs) - q._cont_bern_log_norm()
    return _set(result, (p.high >= 1) | (p.low <= 0), _INF)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    return _set(t2 * (q.alpha + 1) - t1, p.low < q.support.lower_bound, _INF)
