"""`torch.distributions` parity: each distribution built from the same parameters in PyTorch
and jtorch gives the same shapes, moments, entropy, log_prob (inside and at the edge of the
support), cdf/icdf, enumerate_support, expand, gradients w.r.t. the parameters and the same
validation errors; KL pairs and transforms likewise. Samples are compared statistically
(jtorch's random streams differ from PyTorch's). `RESULTS` feeds `compat distributions`.
"""

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

RESULTS: dict = {}  # case -> "pass" or the first mismatch

_rng = np.random.default_rng(0)


def _real(*shape):
    return _rng.standard_normal(shape)


def _pos(*shape):
    return _rng.uniform(0.5, 2.0, shape)


def _unit(*shape):
    return _rng.uniform(0.1, 0.9, shape)


def _simplex(*shape):
    p = _rng.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def _lower(n, *batch):
    a = _rng.standard_normal(batch + (n, n)) * 0.3
    return np.tril(a, -1) + np.eye(n) * _rng.uniform(0.8, 1.5, batch + (n,))[..., None]


def _pd(n, *batch):
    low = _lower(n, *batch)
    return low @ np.swapaxes(low, -1, -2)


def _corr_cholesky(n, *batch):
    low = _lower(n, *batch)
    return low / np.linalg.norm(low, axis=-1, keepdims=True)


# GeneralizedPareto: values inside the support [loc, loc - scale / concentration].
_GP = {"loc": _real(3), "scale": _pos(3), "concentration": np.array([0.0, 0.3, -0.4])}
_GP_VALUES = _GP["loc"] + _GP["scale"] * 2 * _unit(2, 3)


# name -> (params, build(D, p, lib), log_prob values, edge values)
# params: numpy arrays (float ones become leaves with requires_grad) or Python numbers.
CASES = {
    "Normal": (
        {"loc": _real(3), "scale": _pos(3)},
        lambda D, p, lib: D.Normal(p["loc"], p["scale"]),
        _real(2, 3),
        None,
    ),
    "Normal_scalar_params": (
        {"loc": 0.5, "scale": 2.0},
        lambda D, p, lib: D.Normal(p["loc"], p["scale"]),
        _real(3),
        None,
    ),
    "Normal_broadcast": (
        {"loc": _real(2, 1), "scale": _pos(3)},
        lambda D, p, lib: D.Normal(p["loc"], p["scale"]),
        _real(2, 3),
        None,
    ),
    "Bernoulli_probs": (
        {"probs": _unit(3)},
        lambda D, p, lib: D.Bernoulli(probs=p["probs"]),
        np.array([0.0, 1.0, 1.0]),
        None,
    ),
    "Bernoulli_logits": (
        {"logits": _real(2, 3)},
        lambda D, p, lib: D.Bernoulli(logits=p["logits"]),
        np.array([0.0, 1.0, 0.0]),
        None,
    ),
    "Categorical_probs": (
        {"probs": _simplex(2, 3)},
        lambda D, p, lib: D.Categorical(probs=p["probs"]),
        np.array([[0, 2], [1, 2], [2, 2]]),
        None,
    ),
    "Categorical_logits": (
        {"logits": _real(3)},
        lambda D, p, lib: D.Categorical(logits=p["logits"]),
        np.array([0, 1, 2]),
        None,
    ),
    "OneHotCategorical": (
        {"probs": _simplex(2, 3)},
        lambda D, p, lib: D.OneHotCategorical(probs=p["probs"]),
        np.eye(3)[[0, 2]],
        None,
    ),
    "Uniform": (
        {"low": -1.0 - _pos(3), "high": _pos(3) + 2.0},
        lambda D, p, lib: D.Uniform(p["low"], p["high"]),
        _rng.uniform(0.1, 0.9, (2, 3)) + 1.0,
        None,
    ),
    "Beta": (
        {"concentration1": _pos(3), "concentration0": _pos(3)},
        lambda D, p, lib: D.Beta(p["concentration1"], p["concentration0"]),
        _unit(2, 3),
        np.array([0.0, 1.0, 0.5]),
    ),
    "Gamma": (
        {"concentration": _pos(3), "rate": _pos(3)},
        lambda D, p, lib: D.Gamma(p["concentration"], p["rate"]),
        _pos(2, 3),
        np.array([0.0, 0.0, 1.0]),
    ),
    "Dirichlet": (
        {"concentration": _pos(2, 3)},
        lambda D, p, lib: D.Dirichlet(p["concentration"]),
        _simplex(2, 3),
        None,
    ),
    "Exponential": (
        {"rate": _pos(3)},
        lambda D, p, lib: D.Exponential(p["rate"]),
        _pos(2, 3),
        np.zeros(3),
    ),
    "Laplace": (
        {"loc": _real(3), "scale": _pos(3)},
        lambda D, p, lib: D.Laplace(p["loc"], p["scale"]),
        _real(2, 3),
        None,
    ),
    "LogNormal": (
        {"loc": _real(3), "scale": _pos(3)},
        lambda D, p, lib: D.LogNormal(p["loc"], p["scale"]),
        _pos(2, 3),
        None,
    ),
    "MultivariateNormal_scale_tril": (
        {"loc": _real(2, 3), "scale_tril": _lower(3)},
        lambda D, p, lib: D.MultivariateNormal(p["loc"], scale_tril=p["scale_tril"]),
        _real(2, 3),
        None,
    ),
    "MultivariateNormal_covariance": (
        {"loc": _real(3), "covariance_matrix": _pd(3, 2)},
        lambda D, p, lib: D.MultivariateNormal(p["loc"], covariance_matrix=p["covariance_matrix"]),
        _real(2, 3),
        None,
    ),
    "MultivariateNormal_precision": (
        {"loc": _real(3), "precision_matrix": _pd(3)},
        lambda D, p, lib: D.MultivariateNormal(p["loc"], precision_matrix=p["precision_matrix"]),
        _real(2, 3),
        None,
    ),
    "Independent": (
        {"loc": _real(2, 3), "scale": _pos(2, 3)},
        lambda D, p, lib: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
        _real(2, 3),
        None,
    ),
    "TransformedDistribution": (
        {"loc": _real(3), "scale": _pos(3)},
        lambda D, p, lib: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]), [D.AffineTransform(1.0, 2.0), D.SigmoidTransform()]
        ),
        _unit(2, 3),
        None,
    ),
    "Poisson": (
        {"rate": _pos(3)},
        lambda D, p, lib: D.Poisson(p["rate"]),
        np.array([[0.0, 1.0, 4.0]]),
        None,
    ),
    "Binomial": (
        {"total_count": np.array([5.0, 5.0, 5.0]), "probs": _unit(3)},
        lambda D, p, lib: D.Binomial(p["total_count"].detach(), probs=p["probs"]),
        np.array([[0.0, 3.0, 5.0]]),
        None,
    ),
    "Binomial_logits": (
        {"logits": _real(3)},
        lambda D, p, lib: D.Binomial(5, logits=p["logits"]),
        np.array([0.0, 2.0, 5.0]),
        None,
    ),
    "Geometric": (
        {"probs": _unit(3)},
        lambda D, p, lib: D.Geometric(probs=p["probs"]),
        np.array([[0.0, 2.0, 5.0]]),
        None,
    ),
    "Geometric_logits": (
        {"logits": _real(3)},
        lambda D, p, lib: D.Geometric(logits=p["logits"]),
        np.array([0.0, 2.0, 5.0]),
        None,
    ),
    "Cauchy": (
        {"loc": _real(3), "scale": _pos(3)},
        lambda D, p, lib: D.Cauchy(p["loc"], p["scale"]),
        _real(2, 3),
        None,
    ),
    "StudentT": (
        {"df": np.array([0.8, 1.5, 3.0]), "loc": _real(3), "scale": _pos(3)},
        lambda D, p, lib: D.StudentT(p["df"], p["loc"], p["scale"]),
        _real(2, 3),
        None,
    ),
    "Chi2": ({"df": _pos(3) + 1.0}, lambda D, p, lib: D.Chi2(p["df"]), _pos(2, 3), None),
    "HalfNormal": (
        {"scale": _pos(3)},
        lambda D, p, lib: D.HalfNormal(p["scale"]),
        _pos(2, 3),
        np.zeros(3),
    ),
    "Gumbel": (
        {"loc": _real(3), "scale": _pos(3)},
        lambda D, p, lib: D.Gumbel(p["loc"], p["scale"]),
        _real(2, 3),
        None,
    ),
    "RelaxedBernoulli": (
        {"temperature": np.array(0.5), "probs": _unit(3)},
        lambda D, p, lib: D.RelaxedBernoulli(p["temperature"], probs=p["probs"]),
        _unit(2, 3),
        None,
    ),
    "RelaxedOneHotCategorical": (
        {"temperature": np.array(0.7), "logits": _real(2, 3)},
        lambda D, p, lib: D.RelaxedOneHotCategorical(p["temperature"], logits=p["logits"]),
        _simplex(2, 3),
        None,
    ),
    "MixtureSameFamily": (
        {"logits": _real(2, 3), "loc": _real(2, 3), "scale": _pos(2, 3)},
        lambda D, p, lib: D.MixtureSameFamily(
            D.Categorical(logits=p["logits"]), D.Normal(p["loc"], p["scale"])
        ),
        _real(4, 2),
        None,
    ),
    "Multinomial": (
        {"probs": _simplex(2, 3)},
        lambda D, p, lib: D.Multinomial(4, probs=p["probs"]),
        np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 4.0]]),
        None,
    ),
    "HalfCauchy": (
        {"scale": _pos(3)},
        lambda D, p, lib: D.HalfCauchy(p["scale"]),
        _pos(2, 3),
        np.zeros(3),
    ),
    "Pareto": (
        {"scale": _pos(3), "alpha": _pos(3) + 1.5},
        lambda D, p, lib: D.Pareto(p["scale"], p["alpha"]),
        _pos(2, 3) + 2.0,
        None,
    ),
    "Weibull": (
        {"scale": _pos(3), "concentration": _pos(3)},
        lambda D, p, lib: D.Weibull(p["scale"], p["concentration"]),
        _pos(2, 3),
        None,
    ),
    "LowRankMultivariateNormal": (
        {"loc": _real(2, 3), "cov_factor": _real(3, 2) * 0.5, "cov_diag": _pos(3)},
        lambda D, p, lib: D.LowRankMultivariateNormal(p["loc"], p["cov_factor"], p["cov_diag"]),
        _real(2, 3),
        None,
    ),
    "Kumaraswamy": (
        {"concentration1": np.array([0.5, 2.0, 3.0]), "concentration0": _pos(3)},
        lambda D, p, lib: D.Kumaraswamy(p["concentration1"], p["concentration0"]),
        _unit(2, 3),
        None,
    ),
    "FisherSnedecor": (
        {"df1": np.array([1.0, 3.0, 5.0]), "df2": np.array([1.5, 3.0, 6.0])},
        lambda D, p, lib: D.FisherSnedecor(p["df1"], p["df2"]),
        _pos(2, 3),
        None,
    ),
    "NegativeBinomial": (
        {"total_count": np.array([2.0, 3.5, 5.0]), "probs": _unit(3)},
        lambda D, p, lib: D.NegativeBinomial(p["total_count"], probs=p["probs"]),
        np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 7.0]]),
        None,
    ),
    "NegativeBinomial_logits": (
        {"logits": _real(3)},
        lambda D, p, lib: D.NegativeBinomial(3.0, logits=p["logits"]),
        np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 7.0]]),
        None,
    ),
    "ContinuousBernoulli": (
        {"probs": np.array([0.2, 0.5, 0.8])},
        lambda D, p, lib: D.ContinuousBernoulli(probs=p["probs"]),
        _unit(2, 3),
        np.array([0.0, 1.0, 0.5]),
    ),
    "ContinuousBernoulli_logits": (
        {"logits": np.array([-1.5, 0.7, 2.0])},
        lambda D, p, lib: D.ContinuousBernoulli(logits=p["logits"]),
        _unit(2, 3),
        None,
    ),
    "VonMises": (
        {"loc": _real(3), "concentration": np.array([0.5, 2.0, 5.0])},
        lambda D, p, lib: D.VonMises(p["loc"], p["concentration"]),
        _real(2, 3),
        None,
    ),
    "LogisticNormal": (
        {"loc": _real(2), "scale": _pos(2)},
        lambda D, p, lib: D.LogisticNormal(p["loc"], p["scale"]),
        _simplex(2, 3),
        None,
    ),
    "LKJCholesky": (
        {"concentration": np.array([0.5, 2.0])},
        lambda D, p, lib: D.LKJCholesky(3, p["concentration"]),
        _corr_cholesky(3, 2),
        None,
    ),
    "Wishart_covariance": (
        {"df": np.array([4.0, 5.0]), "covariance_matrix": _pd(3, 2)},
        lambda D, p, lib: D.Wishart(p["df"], covariance_matrix=p["covariance_matrix"]),
        _pd(3, 2),
        None,
    ),
    "Wishart_scale_tril": (
        {"scale_tril": _lower(3)},
        lambda D, p, lib: D.Wishart(3.5, scale_tril=p["scale_tril"]),
        _pd(3, 2),
        None,
    ),
    "Wishart_precision": (
        {"df": np.array([2.5, 4.0]), "precision_matrix": _pd(3)},
        lambda D, p, lib: D.Wishart(p["df"], precision_matrix=p["precision_matrix"]),
        _pd(3, 2),
        None,
    ),
    "InverseGamma": (
        {"concentration": np.array([0.8, 1.5, 3.0]), "rate": _pos(3)},
        lambda D, p, lib: D.InverseGamma(p["concentration"], p["rate"]),
        _pos(2, 3),
        None,
    ),
    "GeneralizedPareto": (
        _GP,
        lambda D, p, lib: D.GeneralizedPareto(p["loc"], p["scale"], p["concentration"]),
        _GP_VALUES,
        None,
    ),
}
# One case in float64 checks that dtypes follow the parameters.
F64 = {"Exponential"}


def _params(lib, spec, dtype):
    out = {}
    for k, v in spec.items():
        if isinstance(v, np.ndarray):
            t = lib.tensor(v, dtype=getattr(lib, dtype))
            out[k] = t.requires_grad_() if t.dtype.is_floating_point else t
        else:
            out[k] = v
    return out


def _np(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def _call(fn):
    """(value, None) or (None, exception)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # noqa: BLE001 - any exception is compared by type
        return None, e


def _same(tag, a, b, rtol=1e-5, atol=1e-6):
    """Compares torch result `a` with jtorch result `b` (tensor, shape, number, bool)."""
    if isinstance(a, torch.Size) or isinstance(a, tuple):
        assert tuple(a) == tuple(b), f"{tag}: {a} vs {b}"
        return
    if not hasattr(a, "detach"):
        assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), (
            f"{tag}: {a} vs {b}"
        )
        return
    assert str(a.dtype) == str(b.dtype), f"{tag}: dtype {a.dtype} vs {b.dtype}"
    assert tuple(a.shape) == tuple(b.shape), f"{tag}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
    np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol, err_msg=tag)


def _both(tag, tf, jf, **tol):
    ta, te = _call(tf)
    ja, je = _call(jf)
    if te is not None:
        assert je is not None and type(je) is type(te), f"{tag}: torch raised {te!r}, got {ja!r}"
        return None
    assert je is None, f"{tag}: {je!r}"
    _same(tag, ta, ja, **tol)
    return ta, ja


def _check_case(name, dtype):
    spec, build, values, edge = CASES[name]
    tp, jp = _params(torch, spec, dtype), _params(jtorch, spec, dtype)
    td, jd = build(torch.distributions, tp, torch), build(jtorch.distributions, jp, jtorch)
    _same("batch_shape", td.batch_shape, jd.batch_shape)
    _same("event_shape", td.event_shape, jd.event_shape)
    assert td.has_rsample == jd.has_rsample and td.has_enumerate_support == jd.has_enumerate_support
    assert repr(td) == repr(jd), f"repr {td!r} vs {jd!r}"
    for prop in ("mean", "mode", "variance", "stddev"):
        _both(prop, lambda: getattr(td, prop), lambda: getattr(jd, prop))
    _both("entropy", td.entropy, jd.entropy, rtol=1e-5, atol=1e-5)
    tv, jv = (
        torch.tensor(values, dtype=getattr(torch, dtype)),
        jtorch.tensor(values, dtype=getattr(jtorch, dtype)),
    )
    if td.support.is_discrete and isinstance(td, torch.distributions.Categorical):
        tv, jv = tv.long(), jv.long()
    _both("log_prob", lambda: td.log_prob(tv), lambda: jd.log_prob(jv), atol=1e-5)
    if edge is not None:
        te, je = torch.tensor(edge, dtype=tv.dtype), jtorch.tensor(edge, dtype=jv.dtype)
        _both("log_prob edge", lambda: td.log_prob(te), lambda: jd.log_prob(je))
    got = _both("cdf", lambda: td.cdf(tv), lambda: jd.cdf(jv), atol=1e-5)
    if got is not None:
        _both(
            "icdf",
            lambda: td.icdf(got[0]),
            lambda: jd.icdf(jtorch.tensor(_np(got[0]))),
            rtol=1e-4,
            atol=1e-5,
        )
    if td.has_enumerate_support:
        _both("enumerate_support", td.enumerate_support, jd.enumerate_support)
        _both(
            "enumerate_support(False)",
            lambda: td.enumerate_support(False),
            lambda: jd.enumerate_support(False),
        )
    # Gradients of log_prob + entropy w.r.t. every float parameter.
    leaves = [
        (k, tp[k], jp[k]) for k in tp if hasattr(tp[k], "requires_grad") and tp[k].requires_grad
    ]
    tl = td.log_prob(tv).sum()
    jl = jd.log_prob(jv).sum()
    te_, _ = _call(td.entropy)
    if te_ is not None:
        tl, jl = tl + te_.sum(), jl + jd.entropy().sum()
    if leaves and tl.requires_grad:
        tg = torch.autograd.grad(tl, [t for _, t, _ in leaves], allow_unused=True)
        jg = jtorch.autograd.grad(jl, [j for _, _, j in leaves], allow_unused=True)
        for (k, _, _), a, b in zip(leaves, tg, jg):
            if a is None:
                assert b is None or not np.any(_np(b)), f"grad {k}: None vs {b}"
            else:
                _same(f"grad {k}", a, b, rtol=1e-4, atol=1e-5)
    # Samples: shapes and dtypes exact (families in _STATS are sampled there, with the same
    # checks; their samplers are not compiled a second time for these shapes).
    if type(td).__name__ not in _STATS:
        ts, js = td.sample((2,)), jd.sample((2,))
        _same("sample shape", ts.shape, js.shape)
        assert str(ts.dtype) == str(js.dtype), f"sample dtype {ts.dtype} vs {js.dtype}"
        assert not js.requires_grad
        if td.has_rsample:
            js = jd.rsample((2,))
            _same("rsample shape", td.rsample((2,)).shape, js.shape)
    # expand: a new leading batch dim.
    shape = (2,) + tuple(td.batch_shape)
    te2, je2 = td.expand(shape), jd.expand(shape)
    _same("expand batch_shape", te2.batch_shape, je2.batch_shape)
    assert type(je2) is type(jd)
    _both("expand log_prob", lambda: te2.log_prob(tv), lambda: je2.log_prob(jv), atol=1e-5)
    _both("expand mean", lambda: te2.mean, lambda: je2.mean)


@pytest.mark.parametrize("name", sorted(CASES))
def test_distribution(name):
    dtype = "float64" if name in F64 else "float32"
    try:
        _check_case(name, dtype)
    except AssertionError as e:
        RESULTS[name] = str(e).splitlines()[0][:200]
        raise
    RESULTS[name] = "pass"


def test_cholesky_grad_is_symmetrized():
    # PyTorch's Cholesky backward returns the Hermitian part of the gradient.
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    t, j = torch.tensor(a, requires_grad=True), jtorch.tensor(a, requires_grad=True)
    torch.linalg.cholesky(t).sum().backward()
    jtorch.linalg.cholesky(j).sum().backward()
    np.testing.assert_allclose(j.grad.numpy(), t.grad.numpy(), rtol=1e-6)


# ---------------------------------------------------------------------------
# Validation errors: same exception type and message.


def _record(name, fn):
    try:
        fn()
    except AssertionError as e:
        RESULTS[name] = str(e).splitlines()[0][:200]
        raise
    RESULTS[name] = "pass"


def _same_error(tag, tf, jf):
    _, te = _call(tf)
    _, je = _call(jf)
    assert te is not None, f"{tag}: torch did not raise"
    assert type(je) is type(te), f"{tag}: {te!r} vs {je!r}"
    if tag not in _TYPE_ONLY:
        assert " ".join(str(je).split()) == " ".join(str(te).split()), (
            f"{tag}: message {str(te)!r} vs {str(je)!r}"
        )


# Errors whose message is Python's own in PyTorch (from a failed builtin call).
_TYPE_ONLY = {"register_kl_type"}


_ERRORS = {
    "scale_negative": lambda L, D: D.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    "scale_number": lambda L, D: D.Normal(0.0, -1.0),
    "probs_range": lambda L, D: D.Bernoulli(probs=1.5),
    "probs_and_logits": lambda L, D: D.Bernoulli(probs=0.5, logits=0.0),
    "neither": lambda L, D: D.Categorical(),
    "categorical_0d": lambda L, D: D.Categorical(probs=L.tensor(0.5)),
    "categorical_simplex": lambda L, D: D.Categorical(probs=L.tensor([0.5, -0.5, 1.0])),
    "uniform_order": lambda L, D: D.Uniform(L.tensor([0.0, 2.0]), L.tensor([1.0, 1.0])),
    "dirichlet": lambda L, D: D.Dirichlet(L.tensor([1.0, -1.0])),
    "dirichlet_0d": lambda L, D: D.Dirichlet(L.tensor(1.0)),
    "beta": lambda L, D: D.Beta(-1.0, 1.0),
    "geometric_zero": lambda L, D: D.Geometric(probs=L.tensor([0.0, 0.5])),
    "mvn_two_matrices": lambda L, D: D.MultivariateNormal(
        L.zeros(2), L.eye(2), scale_tril=L.eye(2)
    ),
    "mvn_not_pd": lambda L, D: D.MultivariateNormal(
        L.zeros(2), covariance_matrix=L.tensor([[1.0, 2.0], [2.0, 1.0]])
    ),
    "mvn_not_lower": lambda L, D: D.MultivariateNormal(
        L.zeros(2), scale_tril=L.tensor([[1.0, 0.0], [2.0, -1.0]])
    ),
    "mvn_loc_0d": lambda L, D: D.MultivariateNormal(L.tensor(0.0), L.eye(2)),
    "independent_ndims": lambda L, D: D.Independent(D.Normal(L.zeros(3), 1.0), 2),
    "binomial_count": lambda L, D: D.Binomial(L.tensor([2.5]), probs=L.tensor([0.5])),
    "multinomial_count": lambda L, D: D.Multinomial(L.tensor(3), probs=L.ones(2)),
    "mixture_type": lambda L, D: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)),
    "mixture_k": lambda L, D: D.MixtureSameFamily(
        D.Categorical(logits=L.zeros(2)), D.Normal(L.zeros(3), 1.0)
    ),
    "transforms_type": lambda L, D: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
    "log_prob_support": lambda L, D: D.Exponential(L.ones(2)).log_prob(L.tensor([1.0, -1.0])),
    "log_prob_boolean": lambda L, D: D.Bernoulli(0.3).log_prob(L.tensor(0.5)),
    "log_prob_categorical": lambda L, D: D.Categorical(logits=L.zeros(3)).log_prob(L.tensor(3)),
    "log_prob_simplex": lambda L, D: D.Dirichlet(L.ones(3)).log_prob(L.tensor([0.5, 0.6, 0.1])),
    "log_prob_interval": lambda L, D: D.Uniform(0.0, 1.0).log_prob(L.tensor(1.5)),
    "log_prob_event_shape": lambda L, D: D.MultivariateNormal(L.zeros(3), L.eye(3)).log_prob(
        L.zeros(2)
    ),
    "log_prob_broadcast": lambda L, D: D.Normal(L.zeros(3), 1.0).log_prob(L.zeros(2)),
    "log_prob_not_tensor": lambda L, D: D.Normal(0.0, 1.0).log_prob(0.5),
    "cdf_support": lambda L, D: D.Gamma(1.0, 1.0).cdf(L.tensor(-1.0)),
    "kl_not_implemented": lambda L, D: D.kl_divergence(D.Cauchy(0.0, 1.0), D.Normal(0.0, 1.0)),
    "kl_expfamily_cross": lambda L, D: D.kl_divergence(D.Poisson(1.0), D.Gamma(1.0, 1.0)),
    "register_kl_type": lambda L, D: D.register_kl(1, D.Normal),
    "enumerate_independent": lambda L, D: D.Independent(
        D.Bernoulli(L.full((2,), 0.5)), 1
    ).enumerate_support(),
    "binomial_inhomogeneous": lambda L, D: D.Binomial(
        L.tensor([2.0, 3.0]), L.tensor([0.5, 0.5])
    ).entropy(),
    "default_validate_args": lambda L, D: D.Distribution.set_default_validate_args("yes"),
    "biject_to_unknown": lambda L, D: D.biject_to(D.constraints.lower_cholesky),
    "reshape_numel": lambda L, D: D.ReshapeTransform((2, 3), (5,)),
    "cache_size": lambda L, D: D.ExpTransform(cache_size=2),
    "lowrank_loc_0d": lambda L, D: D.LowRankMultivariateNormal(
        L.tensor(0.0), L.ones(3, 1), L.ones(3)
    ),
    "lowrank_factor_1d": lambda L, D: D.LowRankMultivariateNormal(L.zeros(3), L.ones(3), L.ones(3)),
    "lowrank_factor_rows": lambda L, D: D.LowRankMultivariateNormal(
        L.zeros(3), L.ones(2, 1), L.ones(3)
    ),
    "lowrank_diag_shape": lambda L, D: D.LowRankMultivariateNormal(
        L.zeros(3), L.ones(3, 1), L.ones(2)
    ),
    "lowrank_batch": lambda L, D: D.LowRankMultivariateNormal(
        L.zeros(2, 3), L.ones(3, 3, 1), L.ones(3)
    ),
    "lowrank_diag_positive": lambda L, D: D.LowRankMultivariateNormal(
        L.zeros(2), L.ones(2, 1), L.tensor([1.0, -1.0])
    ),
    "kl_lowrank_event": lambda L, D: D.kl_divergence(
        D.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(2)),
        D.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(3)),
    ),
    "lkj_dim": lambda L, D: D.LKJCholesky(1),
    "lkj_support": lambda L, D: D.LKJCholesky(2).log_prob(L.eye(2) * 2),
    "wishart_two": lambda L, D: D.Wishart(4.0, L.eye(2), scale_tril=L.eye(2)),
    "wishart_df": lambda L, D: D.Wishart(0.5, L.eye(2)),
    "wishart_1d": lambda L, D: D.Wishart(4.0, L.ones(2)),
    "cb_probs": lambda L, D: D.ContinuousBernoulli(probs=L.tensor([1.5]), validate_args=True),
    "cb_neither": lambda L, D: D.ContinuousBernoulli(),
    "nb_neither": lambda L, D: D.NegativeBinomial(2.0),
    "nb_probs_one": lambda L, D: D.NegativeBinomial(2.0, probs=L.tensor([1.0])),
    "nb_support": lambda L, D: D.NegativeBinomial(2.0, probs=L.tensor([0.5])).log_prob(
        L.tensor([1.5])
    ),
    "gp_scale": lambda L, D: D.GeneralizedPareto(0.0, -1.0, 0.5),
    "gp_support": lambda L, D: D.GeneralizedPareto(0.0, 1.0, -0.5).log_prob(L.tensor(3.0)),
    "vonmises_concentration": lambda L, D: D.VonMises(L.zeros(2), L.tensor([1.0, 0.0])),
    "kumaraswamy_support": lambda L, D: D.Kumaraswamy(1.0, 1.0).log_prob(L.tensor(1.5)),
    "inverse_gamma": lambda L, D: D.InverseGamma(-1.0, 1.0),
    "fisher_snedecor": lambda L, D: D.FisherSnedecor(1.0, -1.0),
    "logistic_normal_support": lambda L, D: D.LogisticNormal(L.zeros(2), 1.0).log_prob(
        L.tensor([0.5, 0.6, 0.1])
    ),
}


@pytest.mark.parametrize("case", sorted(_ERRORS))
def test_validation_error(case):
    fn = _ERRORS[case]
    _record(
        f"error {case}",
        lambda: _same_error(
            case, lambda: fn(torch, torch.distributions), lambda: fn(jtorch, jtorch.distributions)
        ),
    )


def test_validate_args_off():
    def run(L):
        D = L.distributions
        D.Distribution.set_default_validate_args(False)
        try:
            d = D.Normal(L.tensor([0.0]), L.tensor([-1.0]))
            lp = D.Exponential(L.ones(1)).log_prob(L.tensor([-1.0]))
            on = D.Normal(0.0, 1.0, validate_args=True)
            _, err = _call(lambda: on.log_prob(L.tensor(float("nan"))))
        finally:
            D.Distribution.set_default_validate_args(True)
        return d.scale, lp, type(err)

    t, j = run(torch), run(jtorch)
    _record(
        "validate_args off",
        lambda: (
            _same("scale", t[0], j[0]),
            _same("lp", t[1], j[1]),
            _same("err", t[2].__name__, j[2].__name__),
        ),
    )


# ---------------------------------------------------------------------------
# KL divergences: values and gradients for each registered pair.


_KL = {
    "Normal": (lambda D, p: D.Normal(p[0], p[1] + 0.5), 2),
    "Bernoulli": (lambda D, p: D.Bernoulli(logits=p[0]), 1),
    "Categorical": (lambda D, p: D.Categorical(logits=p[0].reshape(3, 1).expand(3, 3) * p[1]), 2),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(logits=p[0].unsqueeze(-1) * p[1]), 2),
    "Beta": (lambda D, p: D.Beta(p[0].exp(), p[1] + 0.5), 2),
    "Gamma": (lambda D, p: D.Gamma(p[0].exp(), p[1] + 0.5), 2),
    "Dirichlet": (lambda D, p: D.Dirichlet(p[0].exp().reshape(3, 1) * (p[1] + 0.5)), 2),
    "Exponential": (lambda D, p: D.Exponential(p[1] + 0.5), 2),
    "Laplace": (lambda D, p: D.Laplace(p[0], p[1] + 0.5), 2),
    "Uniform": (lambda D, p: D.Uniform(p[0] - 2.0, p[0] + p[1] + 1.0), 2),
    "MultivariateNormal": (
        lambda D, p: D.MultivariateNormal(
            p[0].reshape(1, 3).expand(2, 3),
            scale_tril=(p[1] + 0.5).diag_embed() + 0.1 * p[0].reshape(3, 1).expand(3, 3).tril(-1),
        ),
        2,
    ),
    "Independent": (lambda D, p: D.Independent(D.Normal(p[0], p[1] + 0.5), 1), 2),
    "Poisson": (lambda D, p: D.Poisson(p[1] + 0.5), 2),
    "Geometric": (lambda D, p: D.Geometric(logits=p[0]), 1),
    "Binomial": (lambda D, p: D.Binomial(5, logits=p[0]), 1),
    "Cauchy": (lambda D, p: D.Cauchy(p[0], p[1] + 0.5), 2),
    "Gumbel": (lambda D, p: D.Gumbel(p[0], p[1] + 0.5), 2),
    "HalfNormal": (lambda D, p: D.HalfNormal(p[1] + 0.5), 2),
    "LogNormal": (lambda D, p: D.LogNormal(p[0], p[1] + 0.5), 2),
    "Chi2": (lambda D, p: D.Chi2(p[1] + 0.5), 2),
    # |logits| >= 0.5: near probs 1/2 the closed forms cancel and float32 rounding differs.
    "ContinuousBernoulli": (
        lambda D, p: D.ContinuousBernoulli(logits=p[0].sign() * (p[1] + 0.5)),
        2,
    ),
    "Pareto": (lambda D, p: D.Pareto(p[1] * 0.05, p[1] + 1.5), 2),
    "LowRankMultivariateNormal": (
        lambda D, p: D.LowRankMultivariateNormal(
            p[0].reshape(1, 3).expand(2, 3), 0.3 * p[0].unsqueeze(-1) * p[1], p[1] + 0.5
        ),
        2,
    ),
    # A Uniform inside (0, 1), for the pairs that are finite only there.
    "UnitUniform": (lambda D, p: D.Uniform(p[1] * 0.1, p[1] * 0.1 + 0.5), 2),
}
_KL_PAIRS = [(k, k) for k in _KL] + [
    ("Bernoulli", "Poisson"),
    ("Exponential", "Gamma"),
    ("Exponential", "Normal"),
    ("Normal", "Laplace"),
    ("Laplace", "Normal"),
    ("Uniform", "Normal"),
    ("Uniform", "Exponential"),
    ("Uniform", "Gamma"),
    ("Uniform", "Gumbel"),
    ("Normal", "Gamma"),
    ("Poisson", "Binomial"),
    ("Gamma", "Beta"),
    ("MultivariateNormal", "LowRankMultivariateNormal"),
    ("LowRankMultivariateNormal", "MultivariateNormal"),
    ("Beta", "ContinuousBernoulli"),
    ("Beta", "Exponential"),
    ("Beta", "Gamma"),
    ("Beta", "Normal"),
    ("Beta", "Uniform"),
    ("Beta", "UnitUniform"),
    ("Beta", "Pareto"),
    ("ContinuousBernoulli", "Exponential"),
    ("ContinuousBernoulli", "Normal"),
    ("ContinuousBernoulli", "Uniform"),
    ("ContinuousBernoulli", "Pareto"),
    ("Exponential", "Gumbel"),
    ("Exponential", "ContinuousBernoulli"),
    ("Exponential", "Pareto"),
    ("Gamma", "Exponential"),
    ("Gamma", "Gumbel"),
    ("Gamma", "Normal"),
    ("Gumbel", "Normal"),
    ("Normal", "Gumbel"),
    ("Normal", "Pareto"),
    ("Laplace", "Pareto"),
    ("Pareto", "Exponential"),
    ("Pareto", "Gamma"),
    ("Pareto", "Normal"),
    ("Pareto", "Beta"),
    ("UnitUniform", "ContinuousBernoulli"),
    ("Uniform", "ContinuousBernoulli"),
    ("UnitUniform", "Pareto"),
    ("Uniform", "Pareto"),
    ("UnitUniform", "Beta"),
]
_P = [(_real(3), _pos(3)), (_real(3), _pos(3))]


def _kl_check(pn, qn):
    out = []
    for L in (torch, jtorch):
        D = L.distributions
        leaves = [[L.tensor(a, dtype=L.float32).requires_grad_() for a in ps] for ps in _P]
        p = _KL[pn][0](D, leaves[0])
        q = _KL[qn][0](D, leaves[1])
        kl = D.kl_divergence(p, q)
        flat = [t for ps in leaves for t in ps]
        grads = (
            L.autograd.grad(kl.sum(), flat, allow_unused=True)
            if kl.requires_grad
            else [None] * len(flat)
        )
        out.append((kl, grads))
    (tk, tg), (jk, jg) = out
    _same("kl", tk, jk, rtol=1e-4, atol=1e-5)
    for i, (a, b) in enumerate(zip(tg, jg)):
        if a is None:
            assert b is None or not np.any(_np(b)), f"grad {i}: None vs {b}"
        else:
            _same(f"grad {i}", a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("pair", _KL_PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_kl(pair):
    _record(f"kl {pair[0]}-{pair[1]}", lambda: _kl_check(*pair))


# ---------------------------------------------------------------------------
# Transforms: forward, inverse, log_abs_det_jacobian, shapes; biject_to / transform_to.


_TRANSFORMS = {
    "Exp": (lambda D, L: D.ExpTransform(), _real(2, 3)),
    "Affine": (
        lambda D, L: D.AffineTransform(L.tensor([1.0, -2.0, 0.5]), L.tensor([2.0, -0.5, 3.0])),
        _real(2, 3),
    ),
    "Affine_event": (
        lambda D, L: D.AffineTransform(1.0, L.tensor([2.0, -0.5, 3.0]), event_dim=1),
        _real(2, 3),
    ),
    "Sigmoid": (lambda D, L: D.SigmoidTransform(), _real(2, 3)),
    "Tanh": (lambda D, L: D.TanhTransform(), _real(2, 3)),
    "Softplus": (lambda D, L: D.SoftplusTransform(), _real(2, 3)),
    "Power": (lambda D, L: D.PowerTransform(L.tensor(2.5)), _pos(2, 3)),
    "Abs": (lambda D, L: D.AbsTransform(), _real(2, 3)),
    "Softmax": (lambda D, L: D.SoftmaxTransform(), _real(2, 3)),
    "StickBreaking": (lambda D, L: D.StickBreakingTransform(), _real(2, 3)),
    "LowerCholesky": (lambda D, L: D.LowerCholeskyTransform(), _real(2, 3, 3)),
    "CorrCholesky": (lambda D, L: D.CorrCholeskyTransform(), _real(2, 3)),
    "Compose": (
        lambda D, L: D.ComposeTransform(
            [D.AffineTransform(0.5, 2.0), D.ExpTransform(), D.AffineTransform(-1.0, 3.0)]
        ),
        _real(2, 3),
    ),
    "Compose_event": (
        lambda D, L: D.ComposeTransform([D.ExpTransform(), D.StickBreakingTransform()]),
        _real(2, 3),
    ),
    "Independent": (lambda D, L: D.IndependentTransform(D.SigmoidTransform(), 1), _real(2, 3)),
    "Reshape": (lambda D, L: D.ReshapeTransform((2, 3), (3, 2)), _real(4, 2, 3)),
    "Inverse_exp": (lambda D, L: D.ExpTransform().inv, _pos(2, 3)),
    "Cat": (
        lambda D, L: D.CatTransform(
            [D.ExpTransform(), D.AffineTransform(1.0, 2.0)], dim=1, lengths=[1, 2]
        ),
        _real(2, 3),
    ),
    "Stack": (
        lambda D, L: D.StackTransform(
            [D.ExpTransform(), D.SigmoidTransform(), D.TanhTransform()], dim=1
        ),
        _real(2, 3),
    ),
}
# Transforms PyTorch gives no log_abs_det_jacobian for (not bijective or not implemented).
_NO_JACOBIAN = {"Abs", "Softmax", "LowerCholesky"}


def _transform_check(name):
    build, x = _TRANSFORMS[name]
    tt, jt = build(torch.distributions, torch), build(jtorch.distributions, jtorch)
    tx = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    jx = jtorch.tensor(x, dtype=jtorch.float32, requires_grad=True)
    ty, jy = tt(tx), jt(jx)
    _same("forward", ty, jy, rtol=1e-5, atol=1e-6)
    _same("inverse", tt.inv(ty.detach()), jt.inv(jy.detach()), rtol=1e-4, atol=1e-5)
    assert repr(tt) == repr(jt), f"repr {tt!r} vs {jt!r}"
    assert repr(tt.domain) == repr(jt.domain) and repr(tt.codomain) == repr(jt.codomain)
    assert tt.bijective == jt.bijective
    _same("forward_shape", tt.forward_shape(tx.shape), jt.forward_shape(jx.shape))
    _same("inverse_shape", tt.inverse_shape(ty.shape), jt.inverse_shape(jy.shape))
    if name in _NO_JACOBIAN:
        _same_error(
            "jacobian",
            lambda: tt.log_abs_det_jacobian(tx, ty),
            lambda: jt.log_abs_det_jacobian(jx, jy),
        )
        return
    tj, jj = tt.log_abs_det_jacobian(tx, ty), jt.log_abs_det_jacobian(jx, jy)
    _same("log_abs_det_jacobian", tj, jj, rtol=1e-4, atol=1e-5)
    (tg,) = torch.autograd.grad((ty.sum() + tj.sum()), [tx])
    (jg,) = jtorch.autograd.grad((jy.sum() + jj.sum()), [jx])
    _same("grad", tg, jg, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(_TRANSFORMS))
def test_transform(name):
    _record(f"transform {name}", lambda: _transform_check(name))


def _cache_check():
    for L in (torch, jtorch):
        t = L.distributions.ExpTransform(cache_size=1)
        x = L.tensor([0.5])
        y = t(x)
        assert t.inv(y) is x and t(x) is y
        assert t.with_cache(0)._cache_size == 0
        assert L.distributions.ExpTransform() == L.distributions.ExpTransform()
        assert L.distributions.AffineTransform(1.0, 2.0) == L.distributions.AffineTransform(
            1.0, 2.0
        )


def test_transform_cache_and_equality():
    _record("transform cache", _cache_check)


_CONSTRAINTS = {
    "real": lambda C, L: C.real,
    "positive": lambda C, L: C.positive,
    "nonnegative": lambda C, L: C.nonnegative,
    "unit_interval": lambda C, L: C.unit_interval,
    "greater_than": lambda C, L: C.greater_than(-1.5),
    "greater_than_eq": lambda C, L: C.greater_than_eq(2.0),
    "less_than": lambda C, L: C.less_than(0.5),
    "interval": lambda C, L: C.interval(-2.0, 3.0),
    "half_open_interval": lambda C, L: C.half_open_interval(-1.0, 1.0),
    "simplex": lambda C, L: C.simplex,
    "real_vector": lambda C, L: C.real_vector,
    "independent": lambda C, L: C.independent(C.positive, 2),
    "lower_cholesky": lambda C, L: C.lower_cholesky,
    "corr_cholesky": lambda C, L: C.corr_cholesky,
    "positive_definite": lambda C, L: C.positive_definite,
    "tensor_bound": lambda C, L: C.interval(L.tensor([0.0, 1.0, 2.0]), 4.0),
}


def _constraint_check(name):
    x = np.abs(_real(2, 3, 3))
    x[0] = np.eye(3) * 0.3 + np.tril(np.full((3, 3), 0.1), -1)
    for kind in ("biject_to", "transform_to"):
        tc = _CONSTRAINTS[name](torch.distributions.constraints, torch)
        jc = _CONSTRAINTS[name](jtorch.distributions.constraints, jtorch)
        assert repr(tc) == repr(jc), f"repr {tc!r} vs {jc!r}"
        assert tc.event_dim == jc.event_dim and tc.is_discrete == jc.is_discrete
        _same("check", tc.check(torch.tensor(x)), jc.check(jtorch.tensor(x)))
        tt, te = _call(lambda: getattr(torch.distributions, kind)(tc))
        jt, je = _call(lambda: getattr(jtorch.distributions, kind)(jc))
        if te is not None:
            assert type(je) is type(te), f"{kind}: {te!r} vs {je!r}"
            continue
        assert repr(tt) == repr(jt), f"{kind} {tt!r} vs {jt!r}"
        u = _real(2, 3) if tt.domain.event_dim < 2 else _real(2, 3, 3)
        ty, jy = tt(torch.tensor(u)), jt(jtorch.tensor(u))
        _same(f"{kind} value", ty, jy, rtol=1e-5, atol=1e-6)
        assert bool(jc.check(jy).all())


@pytest.mark.parametrize("name", sorted(_CONSTRAINTS))
def test_constraint(name):
    _record(f"constraint {name}", lambda: _constraint_check(name))


# ---------------------------------------------------------------------------
# Samples, statistically: jtorch's sample mean and variance of N draws against PyTorch's
# analytic mean and variance (jtorch's streams differ from PyTorch's, so no exact match).

N = 4000
_STATS = {
    "Normal": lambda D, L: D.Normal(L.tensor([0.5, -1.0]), L.tensor([1.0, 2.0])),
    "Bernoulli": lambda D, L: D.Bernoulli(L.tensor([0.2, 0.7])),
    "Categorical": lambda D, L: D.Categorical(L.tensor([0.2, 0.3, 0.5])),
    "Uniform": lambda D, L: D.Uniform(L.tensor([0.0, -2.0]), L.tensor([1.0, 3.0])),
    "Beta": lambda D, L: D.Beta(L.tensor([0.5, 2.0]), L.tensor([1.5, 3.0])),
    "Gamma": lambda D, L: D.Gamma(L.tensor([0.5, 3.0]), L.tensor([1.0, 2.0])),
    "Dirichlet": lambda D, L: D.Dirichlet(L.tensor([0.5, 1.0, 2.0])),
    "Exponential": lambda D, L: D.Exponential(L.tensor([0.5, 2.0])),
    "Laplace": lambda D, L: D.Laplace(L.tensor([0.5, -1.0]), L.tensor([1.0, 0.5])),
    "MultivariateNormal": lambda D, L: D.MultivariateNormal(
        L.tensor([1.0, -1.0]), L.tensor([[1.0, 0.5], [0.5, 2.0]])
    ),
    "Poisson": lambda D, L: D.Poisson(L.tensor([0.5, 6.0])),
    "Binomial": lambda D, L: D.Binomial(L.tensor([5.0, 20.0]), L.tensor([0.3, 0.8])),
    "Geometric": lambda D, L: D.Geometric(L.tensor([0.3, 0.8])),
    "StudentT": lambda D, L: D.StudentT(L.tensor([5.0, 8.0])),
    "Gumbel": lambda D, L: D.Gumbel(L.tensor([0.0, 1.0]), L.tensor([1.0, 0.5])),
    "Multinomial": lambda D, L: D.Multinomial(5, L.tensor([0.2, 0.3, 0.5])),
    "MixtureSameFamily": lambda D, L: D.MixtureSameFamily(
        D.Categorical(L.tensor([0.3, 0.7])), D.Normal(L.tensor([-2.0, 2.0]), L.tensor([0.5, 1.0]))
    ),
    "NegativeBinomial": lambda D, L: D.NegativeBinomial(L.tensor([2.0, 5.0]), L.tensor([0.3, 0.6])),
    "LowRankMultivariateNormal": lambda D, L: D.LowRankMultivariateNormal(
        L.tensor([1.0, -1.0]), L.tensor([[1.0], [0.5]]), L.tensor([0.5, 1.0])
    ),
    "FisherSnedecor": lambda D, L: D.FisherSnedecor(L.tensor([5.0, 10.0]), L.tensor([12.0, 20.0])),
    "Kumaraswamy": lambda D, L: D.Kumaraswamy(L.tensor([0.5, 2.0]), L.tensor([2.0, 3.0])),
    "ContinuousBernoulli": lambda D, L: D.ContinuousBernoulli(L.tensor([0.2, 0.5])),
    "InverseGamma": lambda D, L: D.InverseGamma(L.tensor([5.0, 6.0]), L.tensor([1.0, 2.0])),
    "GeneralizedPareto": lambda D, L: D.GeneralizedPareto(
        L.tensor([0.0, 1.0]), L.tensor([1.0, 0.5]), L.tensor([-0.2, 0.1])
    ),
    "Wishart": lambda D, L: D.Wishart(L.tensor(4.0), L.tensor([[1.0, 0.5], [0.5, 2.0]])),
    "VonMises": lambda D, L: D.VonMises(L.tensor([0.5, 3.0]), L.tensor([0.5, 4.0])),
    # No moments in PyTorch: the support is checked.
    "LKJCholesky": lambda D, L: D.LKJCholesky(3, L.tensor(2.0)),
    "LogisticNormal": lambda D, L: D.LogisticNormal(L.tensor([0.5, -1.0]), L.tensor([1.0, 2.0])),
}


def _stats_check(name):
    jtorch.manual_seed(0)  # the bounds are 5 standard errors; a fixed seed keeps them stable
    td, jd = _STATS[name](torch.distributions, torch), _STATS[name](jtorch.distributions, jtorch)
    s = jd.sample((N,))
    assert tuple(s.shape) == (N,) + tuple(td.batch_shape + td.event_shape)
    assert str(s.dtype) == str(td.sample().dtype)
    x = _np(s).astype(np.float64)
    assert bool(td.support.check(torch.tensor(x, dtype=td.sample().dtype)).all()), (
        "sample outside the support"
    )
    if name in ("LKJCholesky", "LogisticNormal"):
        return
    mean, var = _np(td.mean), _np(td.variance)
    if name == "Categorical":
        x = np.eye(3)[x.astype(int)]
        mean, var = _np(td.probs), _np(td.probs * (1 - td.probs))
    if name == "VonMises":
        # The circular variance is 1 - E[cos(x - loc)]; E[sin(x - loc)] = 0.
        x = np.stack([np.cos(x - mean), np.sin(x - mean)], -1)
        c = 1 - var
        mean, var = np.stack([c, 0 * c], -1), np.full(x.shape[1:], 0.5)
    sd_of_mean = np.sqrt(var / N)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * sd_of_mean + 1e-3), f"mean {x.mean(0)} vs {mean}"
    # VonMises: the variances of (cos, sin) are Bessel ratios, at most 1/2 (at concentration 0).
    if name != "VonMises":
        assert np.allclose(x.var(0), var, rtol=0.2, atol=1e-3), f"variance {x.var(0)} vs {var}"


@pytest.mark.parametrize("name", sorted(_STATS))
def test_sample_moments(name):
    _record(f"sample {name}", lambda: _stats_check(name))


# rsample gradients: the gradient of the mean of N reparameterized draws approaches the
# gradient of the analytic mean (exactly, for location-scale families). The parameters are
# expanded to batch (2,), so the draws have the shapes _STATS compiled the samplers for.
_RSAMPLE = {
    "Normal": (lambda D, a, b: D.Normal(a, b), [0.5, 1.5]),
    "Gamma": (lambda D, a, b: D.Gamma(a, b), [0.7, 2.0]),
    "Beta": (lambda D, a, b: D.Beta(a, b), [2.0, 3.0]),
    "Dirichlet": (lambda D, a, b: D.Dirichlet(L_stack(a, b)), [1.5, 2.5]),
    "MultivariateNormal": (
        lambda D, a, b: D.MultivariateNormal(a.expand(2), scale_tril=b * L_eye(a)),
        [0.5, 1.5],
    ),
    "Chi2": (lambda D, a, b: D.Chi2(a * b), [2.0, 1.5]),
    "Kumaraswamy": (lambda D, a, b: D.Kumaraswamy(a, b), [2.0, 3.0]),
    "InverseGamma": (lambda D, a, b: D.InverseGamma(a, b), [3.0, 2.0]),
    "FisherSnedecor": (lambda D, a, b: D.FisherSnedecor(a, b), [4.0, 6.0]),
    "GeneralizedPareto": (lambda D, a, b: D.GeneralizedPareto(0.0, a, b), [1.5, 0.2]),
    "ContinuousBernoulli": (lambda D, a, b: D.ContinuousBernoulli(a * b), [0.3, 2.0]),
    "LowRankMultivariateNormal": (
        lambda D, a, b: D.LowRankMultivariateNormal(
            a.expand(2), (b * L_eye(a))[:, :1], b.expand(2)
        ),
        [0.5, 1.5],
    ),
    "Wishart": (lambda D, a, b: D.Wishart(a[0], scale_tril=b[0] * L_eye(a)), [4.0, 1.5]),
}


def L_stack(a, b):
    return (jtorch if isinstance(a, jtorch.Tensor) else torch).stack([a, b])


def L_eye(a):
    lib = jtorch if isinstance(a, jtorch.Tensor) else torch
    return lib.eye(2, dtype=a.dtype)


def _rsample_check(name):
    jtorch.manual_seed(0)
    build, (a0, b0) = _RSAMPLE[name]
    grads = []
    for lib, sampled in ((torch, False), (jtorch, True)):
        a = lib.tensor(a0, requires_grad=True)
        b = lib.tensor(b0, requires_grad=True)
        d = build(lib.distributions, a.expand(2), b.expand(2))
        m = d.rsample((N,)).mean(0) if sampled else d.mean
        gs = lib.autograd.grad(m.sum(), [a, b], allow_unused=True)
        grads.append([np.zeros(()) if g is None else _np(g) for g in gs])
    (ta, tb), (ja, jb) = grads
    np.testing.assert_allclose([ja, jb], [ta, tb], rtol=0.1, atol=0.08, err_msg=name)


@pytest.mark.parametrize("name", sorted(_RSAMPLE))
def test_rsample_gradient(name):
    _record(f"rsample {name}", lambda: _rsample_check(name))


def test_rsample_normal_exact():
    mu = jtorch.tensor([0.3, -1.0], requires_grad=True)
    s = jtorch.tensor([1.0, 2.0], requires_grad=True)
    x = jtorch.distributions.Normal(mu, s).rsample((512,))  # 1/512 is exact in float32
    gm, gs = jtorch.autograd.grad(x.mean(0).sum(), [mu, s])
    eps = (x.detach() - mu.detach()) / s.detach()
    _record(
        "rsample Normal exact",
        lambda: (
            np.testing.assert_array_equal(gm.numpy(), np.ones(2, np.float32)),
            np.testing.assert_allclose(gs.numpy(), eps.mean(0).numpy(), rtol=1e-5, atol=1e-6),
        ),
    )
