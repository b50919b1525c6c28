"""Matches `torch.distributions.kl`: `kl_divergence(p, q)` and `register_kl`.

Implementations are looked up by the pair of types; when no pair is registered exactly,
the most specific registered pair of base classes is used (ties warn, as in PyTorch).
This module holds the registry and the pairs within one family; `_kl_cross.py` holds the
pairs across families (the package imports it right after this module).
"""

import functools
import warnings

import jtorch as torch
from jtorch.nn.functional import softplus

from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Beta, Dirichlet
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}  # (type_p, type_q) -> fn
_KL_MEMOIZE = {}  # (type_p, type_q) -> fn, after dispatch


def register_kl(type_p, type_q):
    """Decorator registering `fn(p, q)` as KL(p || q) for the pair of types."""
    # PyTorch's check only rejects non-classes (a class that is no Distribution passes).
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not isinstance(t, type):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@functools.total_ordering
class _Match:
    """Orders pairs of types by specificity: lexicographic on subclass-ness."""

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [
        (sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)
    ]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    if left_fun is not _KL_REGISTRY[right_p, right_q]:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=2,
        )
    return left_fun


def kl_divergence(p, q):
    """KL(p || q), batched over the distributions' batch shape. Matches `kl_divergence`."""
    key = (type(p), type(q))
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type "
            f"{p.__class__.__name__} and q type {q.__class__.__name__}"
        )
    return fun(p, q)


_INF = float("inf")


def _infinite_like(t):
    return torch.full_like(t, _INF)


def _set(t, mask, value):
    """`t` with `value` where `mask` (PyTorch writes these in place: t[mask] = value)."""
    return torch.where(mask, torch.full_like(t, value), t)


def _batch_trace_XXT(m):
    """trace(X X^T) over the last two dims."""
    return m.reshape(tuple(m.shape[:-2]) + (-1,)).pow(2).sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _set(_set(t1, q.probs == 0, _INF), p.probs == 0, 0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _set(_set(t2, q.probs == 1, _INF), p.probs == 1, 0)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s1, s2 = a1 + b1, a2 + b2
    return (
        a2.lgamma()
        + b2.lgamma()
        + s1.lgamma()
        - a1.lgamma()
        - b1.lgamma()
        - s2.lgamma()
        + (a1 - a2) * torch.digamma(a1)
        + (b1 - b2) * torch.digamma(b1)
        + (s2 - s1) * torch.digamma(s1)
    )


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _set(kl, p.total_count > q.total_count, _INF)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _set(t, (q.probs == 0).expand_as(t), _INF)
    t = _set(t, (p.probs == 0).expand_as(t), 0)
    return t.sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0, b0 = a.sum(-1), b.sum(-1)
    t1 = a0.lgamma() - b0.lgamma()
    t2 = (a.lgamma() - b.lgamma()).sum(-1)
    t4 = a.digamma() - a0.digamma().unsqueeze(-1)
    return t1 - t2 + ((a - b) * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # The Bregman divergence of the log normalizer between the natural parameters.
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential "
            "families cannot be computed using Bregman divergences"
        )
    p_params = [n.detach().requires_grad_() for n in p._natural_params]
    q_params = q._natural_params
    log_norm = p._log_normalizer(*p_params)
    grads = torch.autograd.grad(log_norm.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_norm
    for pn, qn, g in zip(p_params, q_params, grads):
        result = result - _sum_rightmost((qn - pn) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = torch.lgamma(q.concentration) - torch.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * torch.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t3 = torch.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return -ct1.log() - ct2 + ct3 + ct1 * euler_constant + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - torch.log1p(-q.probs) / p.probs - q.logits


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    ratio = p.scale / q.scale
    dist = (p.loc - q.loc).abs()
    return -ratio.log() + dist / q.scale + ratio * torch.exp(-dist / p.scale) - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with "
            "different event shapes cannot be computed"
        )
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - lp.diagonal(
        dim1=-2, dim2=-1
    ).log().sum(-1)
    n = p.event_shape[0]
    shape = tuple(torch.broadcast_shapes(lq.shape[:-2], lp.shape[:-2])) + (n, n)
    term2 = _batch_trace_XXT(
        torch.linalg.solve_triangular(lq.expand(shape), lp.expand(shape), upper=False)
    )
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _set(result, (q.low > p.low) | (q.high < p.high), _INF)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + torch.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - torch.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _set(result, p.support.lower_bound < q.support.lower_bound, _INF)


# Gaussians with low-rank-plus-diagonal covariances. With C the capacitance matrix of q and
# A = C^-1/2 W_q^T D_q^-1, the Woodbury identity gives inv(cov_q) = D_q^-1 - A^T A, and
# tr(inv(cov_q) cov_p) splits into traces of products that never form an n x n inverse.


def _check_event_shapes(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(
            f"KL-divergence between two {what} with different event shapes cannot be computed"
        )


def _woodbury_factor(q):
    qWt_qDinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return torch.linalg.solve_triangular(q._capacitance_tril, qWt_qDinv, upper=False)


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(
        d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril
    )


def _lowrank_mahalanobis(q, x):
    return _batch_lowrank_mahalanobis(
        q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, x, q._capacitance_tril
    )


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    A = _woodbury_factor(q)
    pW, pD, qD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    term2 = (
        (pD / qD).sum(-1)
        + _batch_trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
        - _batch_trace_XXT(A * pD.sqrt().unsqueeze(-2))
        - _batch_trace_XXT(A.matmul(pW))
    )
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    pL = p._unbroadcasted_scale_tril
    term1 = _lowrank_logdet(q) - 2 * pL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    A = _woodbury_factor(q)
    term2 = _batch_trace_XXT(
        pL * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1)
    ) - _batch_trace_XXT(A.matmul(pL))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    qL = q._unbroadcasted_scale_tril
    term1 = 2 * qL.diagonal(dim1=-2, dim2=-1).log().sum(-1) - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    n = p.event_shape[0]
    batch = tuple(torch.broadcast_shapes(qL.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2]))
    qL = qL.expand(batch + (n, n))
    pW = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    pD_sqrt = torch.diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term2 = _batch_trace_XXT(torch.linalg.solve_triangular(qL, pW, upper=False)) + _batch_trace_XXT(
        torch.linalg.solve_triangular(qL, pD_sqrt, upper=False)
    )
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])
