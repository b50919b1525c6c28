"""torch.distributions: closed forms, shapes and errors (no PyTorch needed)."""

import math

import numpy as np
import pytest

import jtorch as torch
from jtorch import distributions as D
from jtorch.distributions import constraints

from .helpers import close


def test_normal_closed_forms():
    d = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    x = np.array([0.5, -1.0])
    mu, s = np.array([0.0, 1.0]), np.array([1.0, 2.0])
    close(
        d.log_prob(torch.tensor(x, dtype=torch.float32)),
        -((x - mu) ** 2) / (2 * s**2) - np.log(s) - 0.5 * np.log(2 * np.pi),
    )
    close(d.entropy(), 0.5 * np.log(2 * np.pi * np.e * s**2))
    close(d.cdf(torch.tensor([0.0, 1.0])), [0.5, 0.5])
    close(d.icdf(torch.tensor([0.5, 0.5])), mu)
    assert d.batch_shape == (2,) and d.event_shape == ()
    assert d.sample((3,)).shape == (3, 2) and d.rsample().shape == (2,)


def test_python_number_params_use_default_dtype():
    d = D.Normal(0.0, 1.0)
    assert d.batch_shape == () and d.loc.dtype == torch.float32
    assert D.Normal(torch.zeros(2, dtype=torch.float64), 1.0).scale.dtype == torch.float64


def test_bernoulli_and_categorical():
    b = D.Bernoulli(probs=torch.tensor([0.5, 0.25]))
    close(b.entropy()[0], math.log(2))
    close(b.log_prob(torch.tensor([1.0, 0.0])), [math.log(0.5), math.log(0.75)])
    assert b.enumerate_support().tolist() == [[0.0, 0.0], [1.0, 1.0]]
    c = D.Categorical(probs=torch.tensor([1.0, 1.0, 2.0]))  # normalised to 1/4, 1/4, 1/2
    close(c.log_prob(torch.tensor([0, 2])), [math.log(0.25), math.log(0.5)])
    close(D.Categorical(logits=torch.zeros(4)).entropy(), math.log(4))
    s = c.sample((5,))
    assert s.shape == (5,) and s.dtype == torch.int64
    o = D.OneHotCategorical(probs=torch.tensor([0.25, 0.75]))
    assert o.sample((3,)).shape == (3, 2)
    close(o.log_prob(torch.tensor([0.0, 1.0])), math.log(0.75))


def test_continuous_closed_forms():
    close(D.Uniform(1.0, 3.0).entropy(), math.log(2))
    close(D.Beta(1.0, 1.0).log_prob(torch.tensor(0.3)), 0.0)
    # Gamma(1, rate) is Exponential(rate).
    x = torch.tensor([0.5, 2.0])
    close(D.Gamma(1.0, 2.0).log_prob(x), D.Exponential(2.0).log_prob(x))
    close(D.Exponential(2.0).log_prob(x), np.log(2.0) - 2.0 * np.array([0.5, 2.0]))
    # A flat Dirichlet on the 2-simplex has density 2! = 2.
    close(D.Dirichlet(torch.ones(3)).log_prob(torch.tensor([0.2, 0.3, 0.5])), math.log(2))
    close(D.Laplace(0.0, 1.0).log_prob(torch.tensor(1.0)), -1 - math.log(2))
    close(D.Cauchy(0.0, 1.0).cdf(torch.tensor(1.0)), 0.75)
    close(D.LogNormal(0.0, 1.0).mean, math.exp(0.5))
    close(D.HalfNormal(1.0).mean, math.sqrt(2 / math.pi))
    close(D.Chi2(4.0).mean, 4.0)
    close(D.StudentT(3.0).variance, 3.0)
    close(D.Gumbel(0.0, 1.0).mean, 0.5772156649)


def test_discrete_closed_forms():
    close(D.Poisson(torch.tensor([2.0])).log_prob(torch.tensor([0.0])), [-2.0])
    b = D.Binomial(4, probs=torch.tensor(0.5))
    close(b.log_prob(torch.tensor(2.0)), math.log(6 / 16))
    assert b.enumerate_support().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    g = D.Geometric(probs=torch.tensor(0.25))
    close(g.mean, 3.0)
    close(g.log_prob(torch.tensor(2.0)), math.log(0.75**2 * 0.25))
    m = D.Multinomial(3, probs=torch.tensor([0.5, 0.5]))
    close(m.log_prob(torch.tensor([1.0, 2.0])), math.log(3 / 8))
    assert m.sample((4,)).sum(-1).tolist() == [3.0] * 4


def test_multivariate_normal_matches_independent_normals():
    loc = torch.tensor([1.0, -1.0])
    x = torch.tensor([[0.5, 0.0], [1.0, 2.0]])
    mvn = D.MultivariateNormal(loc, scale_tril=torch.diag(torch.tensor([1.0, 2.0])))
    ind = D.Independent(D.Normal(loc, torch.tensor([1.0, 2.0])), 1)
    close(mvn.log_prob(x), ind.log_prob(x))
    close(mvn.entropy(), ind.entropy())
    cov = D.MultivariateNormal(loc, covariance_matrix=torch.diag(torch.tensor([1.0, 4.0])))
    close(cov.log_prob(x), ind.log_prob(x))
    prec = D.MultivariateNormal(loc, precision_matrix=torch.diag(torch.tensor([1.0, 0.25])))
    close(prec.scale_tril, [[1.0, 0.0], [0.0, 2.0]])
    assert mvn.rsample((3,)).shape == (3, 2) and mvn.event_shape == (2,)


def test_kl_closed_forms():
    p, q = D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)
    close(D.kl_divergence(p, q), math.log(2) + (1 + 1) / 8 - 0.5)
    close(D.kl_divergence(p, p), 0.0)
    close(
        D.kl_divergence(D.Bernoulli(0.5), D.Bernoulli(0.25)),
        0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75),
    )
    close(D.kl_divergence(D.Exponential(1.0), D.Exponential(2.0)), 2 - 1 - math.log(2))
    close(D.kl_divergence(D.Poisson(2.0), D.Poisson(1.0)), 2 * math.log(2) - 1)
    close(D.kl_divergence(D.Uniform(0.0, 1.0), D.Uniform(0.0, 2.0)), math.log(2))
    assert math.isinf(D.kl_divergence(D.Uniform(0.0, 2.0), D.Uniform(0.0, 1.0)).item())
    # Independent sums the base KLs over the reinterpreted dims.
    pi = D.Independent(D.Normal(torch.zeros(3), 1.0), 1)
    qi = D.Independent(D.Normal(torch.ones(3), 1.0), 1)
    close(D.kl_divergence(pi, qi), 1.5)
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Cauchy(0.0, 1.0), D.Normal(0.0, 1.0))


def test_register_kl_most_specific():
    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return torch.tensor(42.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 0.0


def test_transforms():
    x = torch.tensor([-1.0, 0.0, 2.0])
    t = D.ExpTransform()
    y = t(x)
    close(y, np.exp([-1.0, 0.0, 2.0]))
    close(t.inv(y), x)
    close(t.log_abs_det_jacobian(x, y), x)  # log |d exp(x)/dx| = x
    a = D.AffineTransform(1.0, -2.0)
    close(a(x), [3.0, 1.0, -3.0])
    close(a.log_abs_det_jacobian(x, a(x)), [math.log(2)] * 3)
    assert a.sign == -1
    s = D.StickBreakingTransform()
    p = s(torch.zeros(2))
    close(p, [1 / 3, 1 / 3, 1 / 3])
    close(s.inv(p), [0.0, 0.0], atol=1e-6)
    close(D.SigmoidTransform().log_abs_det_jacobian(torch.tensor(0.0), None), math.log(0.25))
    c = D.ComposeTransform([D.AffineTransform(0.0, 2.0), D.ExpTransform()])
    close(c(torch.tensor(1.0)), math.exp(2))
    close(c.inv(torch.tensor(math.exp(2))), 1.0)
    r = D.ReshapeTransform((2, 3), (6,))
    assert r(torch.zeros(4, 2, 3)).shape == (4, 6)


def test_transformed_distribution_log_prob():
    # exp(Normal(0, 1)) is LogNormal(0, 1): log p(y) = log N(log y) - log y.
    d = D.TransformedDistribution(D.Normal(0.0, 1.0), D.ExpTransform())
    y = torch.tensor([0.5, 2.0])
    close(d.log_prob(y), D.LogNormal(0.0, 1.0).log_prob(y))
    close(
        d.log_prob(y),
        -(np.log([0.5, 2.0]) ** 2) / 2 - 0.5 * math.log(2 * math.pi) - np.log([0.5, 2.0]),
    )


def test_biject_to_and_constraints():
    # PyTorch registers by constraint type: positive is a GreaterThan, mapped by exp + shift.
    pos = D.biject_to(constraints.positive)
    close(pos(torch.tensor([0.0, 1.0])), [1.0, math.e])
    assert isinstance(D.transform_to(constraints.simplex), D.SoftmaxTransform)
    t = D.biject_to(constraints.interval(-1.0, 3.0))
    assert constraints.interval(-1.0, 3.0).check(t(torch.tensor([-20.0, 0.0, 20.0]))).all()
    assert constraints.positive.check(torch.tensor([1.0, 0.0, -1.0])).tolist() == [
        True,
        False,
        False,
    ]
    assert constraints.simplex.check(torch.tensor([0.25, 0.75])).item()
    assert repr(constraints.greater_than(0.5)) == "GreaterThan(lower_bound=0.5)"


def test_validation_errors():
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli()
    with pytest.raises(ValueError, match="to be within the support"):
        D.Exponential(1.0).log_prob(torch.tensor(-1.0))
    with pytest.raises(ValueError, match="must match event_shape"):
        D.Dirichlet(torch.ones(3)).log_prob(torch.ones(2))
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0


def test_expand_and_mixture():
    d = D.Normal(torch.zeros(3), 1.0).expand((2, 3))
    assert d.batch_shape == (2, 3) and d.sample().shape == (2, 3)
    mix = D.MixtureSameFamily(
        D.Categorical(torch.tensor([0.5, 0.5])), D.Normal(torch.tensor([-1.0, 1.0]), 1.0)
    )
    close(mix.mean, 0.0)
    close(mix.variance, 2.0)
    n = D.Normal(torch.tensor([-1.0, 1.0]), 1.0)
    close(mix.log_prob(torch.tensor(0.0)), n.log_prob(torch.tensor(0.0))[0])


def test_relaxed_and_rsample_gradient():
    t = torch.tensor(0.5)
    r = D.RelaxedBernoulli(t, probs=torch.tensor([0.3, 0.6]))
    s = r.rsample((4,))
    assert s.shape == (4, 2) and bool(((s > 0) & (s < 1)).all())
    oh = D.RelaxedOneHotCategorical(t, logits=torch.zeros(3)).rsample((2,))
    close(oh.sum(-1), [1.0, 1.0])
    mu = torch.tensor(0.5, requires_grad=True)
    D.Normal(mu, 2.0).rsample((8,)).mean().backward()
    assert mu.grad.item() == 1.0


def test_samplers_behind_distributions():
    a = torch.tensor([0.5, 2.0, 5.0], requires_grad=True)
    g = torch._standard_gamma(a)
    assert g.shape == (3,) and bool((g > 0).all())
    g.sum().backward()
    assert a.grad.shape == (3,) and bool((a.grad > 0).all())  # draws increase with alpha
    d = torch._sample_dirichlet(torch.ones(4, 3))
    close(d.sum(-1), [1.0] * 4)
    b = torch.binomial(torch.tensor([5.0, 10.0]), torch.tensor([0.0, 1.0]))
    assert b.tolist() == [0.0, 10.0] and b.dtype == torch.float32
    with pytest.raises(NotImplementedError):
        torch._standard_gamma(torch.tensor([1, 2]))


def test_half_cauchy_pareto_weibull():
    close(D.HalfCauchy(2.0).cdf(torch.tensor(2.0)), 0.5)  # 2/pi * atan(1)
    close(D.Pareto(2.0, 3.0).mean, 3.0)  # alpha * scale / (alpha - 1)
    close(D.Pareto(2.0, 3.0).log_prob(torch.tensor(4.0)), math.log(3 * 2**3 / 4**4))
    # Weibull with concentration 1 is Exponential(1 / scale).
    x = torch.tensor([0.5, 3.0])
    close(D.Weibull(2.0, 1.0).log_prob(x), D.Exponential(0.5).log_prob(x))


def test_low_rank_multivariate_normal_is_a_multivariate_normal():
    W, d = torch.tensor([[1.0], [0.5], [-0.5]]), torch.tensor([0.5, 1.0, 2.0])
    loc, x = torch.tensor([1.0, 0.0, -1.0]), torch.tensor([[0.5, 0.0, 1.0], [0.0, 0.0, 0.0]])
    lr = D.LowRankMultivariateNormal(loc, W, d)
    cov = np.array([[1.0, 0.5, -0.5], [0.5, 0.25, -0.25], [-0.5, -0.25, 0.25]]) + np.diag(
        [0.5, 1.0, 2.0]
    )
    mvn = D.MultivariateNormal(loc, covariance_matrix=torch.tensor(cov, dtype=torch.float32))
    close(lr.log_prob(x), mvn.log_prob(x), rtol=1e-5)
    close(lr.entropy(), mvn.entropy(), rtol=1e-5)
    close(lr.covariance_matrix, cov)
    close(lr.variance, np.diag(cov))
    close(lr.precision_matrix @ lr.covariance_matrix, np.eye(3), atol=1e-5)
    close(lr.scale_tril @ lr.scale_tril.mT, cov, atol=1e-5)
    assert lr.rsample((4,)).shape == (4, 3)
    close(D.kl_divergence(lr, lr), 0.0, atol=1e-5)
    close(D.kl_divergence(lr, mvn), 0.0, atol=1e-5)
    close(D.kl_divergence(mvn, lr), 0.0, atol=1e-5)
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
        D.LowRankMultivariateNormal(loc, torch.ones(2, 1), d)


def test_kumaraswamy_closed_forms():
    k = D.Kumaraswamy(1.0, 1.0)  # Uniform(0, 1)
    close(k.log_prob(torch.tensor([0.2, 0.7])), [0.0, 0.0], atol=1e-6)
    close(k.mean, 0.5)
    close(k.entropy(), 0.0, atol=1e-6)
    # With concentration0 = 1 the cdf is x^a and the mean a / (a + 1).
    k = D.Kumaraswamy(3.0, 1.0)
    close(k.cdf(torch.tensor(0.5)), 0.125)
    close(k.mean, 0.75)
    close(k.icdf(torch.tensor(0.125)), 0.5)
    s = D.Kumaraswamy(torch.tensor([0.5, 2.0]), torch.tensor([2.0, 3.0])).rsample((3,))
    assert s.shape == (3, 2) and bool(((s > 0) & (s < 1)).all())


def test_fisher_snedecor_closed_forms():
    f = D.FisherSnedecor(2.0, 2.0)  # density (1 + x)^-2
    x = np.array([0.5, 3.0])
    close(f.log_prob(torch.tensor(x, dtype=torch.float32)), -2 * np.log1p(x))
    close(D.FisherSnedecor(3.0, 6.0).mean, 1.5)
    assert math.isnan(D.FisherSnedecor(3.0, 2.0).mean.item())
    assert D.FisherSnedecor(torch.ones(2), 5.0).rsample((3,)).shape == (3, 2)


def test_negative_binomial_closed_forms():
    nb = D.NegativeBinomial(2.0, probs=torch.tensor(0.5))
    # P(k) = C(k + r - 1, k) p^k (1 - p)^r
    close(
        nb.log_prob(torch.tensor([0.0, 1.0, 3.0])), np.log([0.25, 2 * 0.5 * 0.25, 4 * 0.125 * 0.25])
    )
    close(nb.mean, 2.0)
    close(nb.variance, 4.0)
    close(D.NegativeBinomial(0.0, probs=torch.tensor(0.3)).log_prob(torch.tensor(0.0)), 0.0)
    close(D.NegativeBinomial(2.0, logits=torch.tensor(0.0)).mean, 2.0)
    s = nb.sample((5,))
    assert s.shape == (5,) and bool((s >= 0).all()) and bool((s == s.round()).all())


def test_continuous_bernoulli_closed_forms():
    u = D.ContinuousBernoulli(probs=torch.tensor(0.5))  # Uniform(0, 1)
    close(u.log_prob(torch.tensor([0.1, 0.9])), [0.0, 0.0], atol=1e-6)
    close(u.mean, 0.5)
    close(u.variance, 1 / 12)
    p, x = 0.2, np.array([0.0, 0.3, 1.0])
    log_c = math.log(2 * math.atanh(1 - 2 * p) / (1 - 2 * p))
    cb = D.ContinuousBernoulli(probs=torch.tensor(p))
    close(
        cb.log_prob(torch.tensor(x, dtype=torch.float32)),
        log_c + x * math.log(p) + (1 - x) * math.log(1 - p),
    )
    close(cb.cdf(torch.tensor([0.0, 1.0])), [0.0, 1.0], atol=1e-6)
    close(cb.icdf(cb.cdf(torch.tensor(0.3))), 0.3)
    close(D.kl_divergence(cb, cb), 0.0, atol=1e-6)
    with pytest.raises(ValueError, match="probs has invalid values"):
        D.ContinuousBernoulli(probs=torch.tensor([1.5]), validate_args=True)


def test_von_mises():
    kappa = np.array([0.5, 5.0])
    vm = D.VonMises(torch.tensor([0.0, 1.0]), torch.tensor(kappa, dtype=torch.float32))
    # The density at the mode is exp(kappa) / (2 pi I0(kappa)).
    close(
        vm.log_prob(torch.tensor([0.0, 1.0])), kappa - np.log(2 * np.pi * np.i0(kappa)), rtol=1e-5
    )
    s = vm.sample((50,))
    assert s.shape == (50, 2) and s.dtype == torch.float32
    assert bool(((s >= -math.pi) & (s < math.pi)).all())


def test_logistic_normal_two_categories():
    # K = 2: y = (sigmoid(x), 1 - sigmoid(x)), density N(logit y1) / (y1 (1 - y1)).
    d = D.LogisticNormal(torch.tensor([0.5]), torch.tensor([2.0]))
    y1 = 0.3
    logit = math.log(y1 / (1 - y1))
    expected = (
        -((logit - 0.5) ** 2) / 8
        - math.log(2)
        - 0.5 * math.log(2 * math.pi)
        - math.log(y1 * (1 - y1))
    )
    close(d.log_prob(torch.tensor([y1, 1 - y1])), expected, rtol=1e-5)
    s = d.sample((3,))
    assert s.shape == (3, 2)
    close(s.sum(-1), [1.0] * 3)


def test_lkj_cholesky():
    # dim 2, concentration 1: the correlation is uniform on (-1, 1).
    d = D.LKJCholesky(2, 1.0)
    r = 0.6
    close(d.log_prob(torch.tensor([[1.0, 0.0], [r, math.sqrt(1 - r * r)]])), -math.log(2))
    # dim 3, concentration 2: each correlation has variance 1 / (2 eta + d - 1) = 1 / 6.
    torch.manual_seed(0)
    L = D.LKJCholesky(3, 2.0).sample((2000,))
    assert L.shape == (2000, 3, 3)
    close((L * L).sum(-1), np.ones((2000, 3)), atol=1e-5)  # unit-norm rows
    corr = (L @ L.mT)[:, 2, 0].numpy()
    assert abs(corr.mean()) < 0.05 and abs(corr.var() - 1 / 6) < 0.02


def test_wishart_one_dimensional_is_gamma():
    # W(nu, [[s2]]) in one dimension is Gamma(nu / 2, rate 1 / (2 s2)).
    nu, s2 = 3.0, 2.0
    w = D.Wishart(torch.tensor(nu), covariance_matrix=torch.tensor([[s2]]))
    g = D.Gamma(nu / 2, 1 / (2 * s2))
    x = torch.tensor([0.5, 4.0])
    close(w.log_prob(x.view(2, 1, 1)), g.log_prob(x), rtol=1e-5)
    close(w.entropy(), g.entropy(), rtol=1e-5)
    close(w.mean, [[nu * s2]])
    close(w.variance, [[2 * nu * s2 * s2]])
    s = D.Wishart(torch.tensor(4.0), torch.eye(2)).rsample((3,))
    assert s.shape == (3, 2, 2)
    close(s, s.mT)
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1"):
        D.Wishart(0.5, torch.eye(2))


def test_inverse_gamma_closed_forms():
    a, b = 3.0, 2.0
    d = D.InverseGamma(a, b)
    x = np.array([0.5, 2.0])
    close(
        d.log_prob(torch.tensor(x, dtype=torch.float32)),
        a * math.log(b) - math.lgamma(a) - (a + 1) * np.log(x) - b / x,
        rtol=1e-5,
    )
    close(d.mean, b / (a - 1))
    close(d.mode, b / (a + 1))
    assert math.isinf(D.InverseGamma(1.0, 1.0).mean.item())


def test_generalized_pareto_closed_forms():
    x = np.array([1.5, 3.0])
    # concentration 0: an Exponential(1 / scale) shifted by loc.
    e = D.GeneralizedPareto(1.0, 2.0, 0.0)
    close(e.log_prob(torch.tensor(x, dtype=torch.float32)), -math.log(2) - (x - 1) / 2)
    # concentration 1: cdf 1 - 1 / (1 + z).
    g = D.GeneralizedPareto(1.0, 2.0, 1.0)
    close(g.cdf(torch.tensor(x, dtype=torch.float32)), 1 - 1 / (1 + (x - 1) / 2))
    close(g.icdf(g.cdf(torch.tensor(3.0))), 3.0, rtol=1e-5)
    # A negative concentration bounds the support at loc - scale / concentration.
    assert D.GeneralizedPareto(0.0, 1.0, -0.5).support.upper_bound.item() == 2.0
    close(D.GeneralizedPareto(0.0, 1.0, 0.25).mean, 4 / 3)


def test_new_kl_pairs():
    p, q = D.Pareto(1.0, 3.0), D.Pareto(0.5, 2.0)
    close(D.kl_divergence(p, q), 2 * math.log(2) - math.log(2 / 3) + 2 / 3 - 1, rtol=1e-5)
    assert math.isinf(D.kl_divergence(q, p).item())
    # Gamma(1, r) is Exponential(r): KL(Exp(1) || Exp(2)) = log(1 / 2) + 2 - 1.
    close(D.kl_divergence(D.Gamma(1.0, 1.0), D.Exponential(2.0)), 1 - math.log(2), rtol=1e-5)
    assert math.isinf(D.kl_divergence(D.Normal(0.0, 1.0), D.Pareto(1.0, 1.0)).item())


def test_torch_module_paths():
    # PyTorch has one module per distribution; scripts import from them.
    from jtorch.distributions.beta import Beta
    from jtorch.distributions.chi2 import Chi2
    from jtorch.distributions.von_mises import VonMises

    assert Beta is D.Beta and Chi2 is D.Chi2 and VonMises is D.VonMises
