"""Initialisation statistics: `nn.init` and every layer's default initialisation vs PyTorch.

jtorch's random streams are its own, so values are compared as distributions on large
tensors: sample mean and variance within 5 standard errors of PyTorch's sample (and of
the theoretical value), samples inside the distribution's support (uniform bounds,
truncation points) and reaching close to its ends, exact equality for the deterministic
initialisers. The seed is fixed, so the outcome is reproducible.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

K = 5.0  # tolerance in standard errors


def _np(t):
    return np.asarray(t.detach().numpy(), np.float64).ravel()


def _moments(a):
    mean = a.mean()
    c = a - mean
    var = (c**2).mean()
    return mean, var, (c**4).mean()


def _theory(dist):
    """(mean, variance, lower bound, upper bound) of a distribution spec."""
    kind = dist[0]
    if kind == "uniform":
        lo, hi = dist[1], dist[2]
        return (lo + hi) / 2, (hi - lo) ** 2 / 12, lo, hi
    if kind == "normal":
        return dist[1], dist[2] ** 2, -math.inf, math.inf
    if kind == "trunc":
        mu, sd, a, b = dist[1:]
        al, be = (a - mu) / sd, (b - mu) / sd
        pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
        cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
        z = cdf(be) - cdf(al)
        mean = mu + sd * (pdf(al) - pdf(be)) / z
        var = sd**2 * (1 + (al * pdf(al) - be * pdf(be)) / z - ((pdf(al) - pdf(be)) / z) ** 2)
        return mean, var, a, b
    raise ValueError(kind)


def check_distribution(j, t, dist, what=""):
    """jtorch sample `j` vs PyTorch sample `t` (flat float64), both drawn from `dist`."""
    assert j.shape == t.shape, what
    if dist[0] == "const":
        np.testing.assert_array_equal(j, dist[1], err_msg=what)
        np.testing.assert_array_equal(t, dist[1], err_msg=what)
        return
    n = j.size
    mj, vj, m4j = _moments(j)
    mt, vt, m4t = _moments(t)
    mean, var, lo, hi = _theory(dist)
    se_mean = math.sqrt(vt / n + vj / n)
    assert abs(mj - mt) <= K * se_mean, f"{what}: mean jtorch {mj:.5g} vs torch {mt:.5g}"
    assert abs(mj - mean) <= K * math.sqrt(var / n), f"{what}: mean {mj:.5g} vs theory {mean}"
    se_var = math.sqrt(max(m4t - vt**2, 0) / n + max(m4j - vj**2, 0) / n)
    assert abs(vj - vt) <= K * se_var, f"{what}: variance jtorch {vj:.5g} vs torch {vt:.5g}"
    assert abs(vj - var) <= K * math.sqrt(max(m4j - vj**2, 0) / n), (
        f"{what}: variance {vj:.5g} vs theory {var:.5g}"
    )
    if math.isfinite(lo):
        slack = 1e-6 * max(abs(lo), abs(hi))  # float32 rounding at the bounds
        assert j.min() >= lo - slack and j.max() <= hi + slack, (
            f"{what}: jtorch range [{j.min():.5g}, {j.max():.5g}] outside [{lo:.5g}, {hi:.5g}]"
        )
        assert t.min() >= lo - slack and t.max() <= hi + slack, what
        binding = dist[0] == "uniform" or max(hi - mean, mean - lo) < 3 * math.sqrt(var)
        if n >= 5000 and binding:  # the samples reach the ends of the support
            width = hi - lo
            assert j.min() < lo + 0.01 * width and j.max() > hi - 0.01 * width, (
                f"{what}: jtorch range [{j.min():.5g}, {j.max():.5g}] in [{lo}, {hi}]"
            )


# ---------------------------------------------------------------------------
# nn.init functions


def _both(shape, fn_name, *args, **kwargs):
    torch.manual_seed(0)
    jtorch.manual_seed(0)
    t = torch.empty(shape)
    j = jtorch.empty(shape)
    rt = getattr(torch.nn.init, fn_name)(t, *args, **kwargs)
    rj = getattr(jtorch.nn.init, fn_name)(j, *args, **kwargs)
    assert rj is j and rt is t
    return _np(j), _np(t)


BIG = (500, 600)
CONV = (256, 128, 3, 3)  # fan_in 1152, fan_out 2304
FAN = {"fan_in": 128 * 9, "fan_out": 256 * 9}


def _kaiming_std(a, mode, nonlinearity):
    return torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(FAN[mode])


INIT_CASES = [
    ("uniform_", BIG, (-2.0, 3.0), {}, ("uniform", -2.0, 3.0)),
    ("uniform_", BIG, (), {}, ("uniform", 0.0, 1.0)),
    ("normal_", BIG, (1.5, 0.3), {}, ("normal", 1.5, 0.3)),
    ("normal_", BIG, (), {}, ("normal", 0.0, 1.0)),
    ("trunc_normal_", BIG, (), {}, ("trunc", 0.0, 1.0, -2.0, 2.0)),
    ("trunc_normal_", BIG, (0.5, 2.0, -1.0, 3.0), {}, ("trunc", 0.5, 2.0, -1.0, 3.0)),
    ("trunc_normal_", BIG, (), {"std": 0.02}, ("trunc", 0.0, 0.02, -2.0, 2.0)),
    (
        "xavier_uniform_",
        CONV,
        (),
        {},
        ("uniform", -math.sqrt(6 / (1152 + 2304)), math.sqrt(6 / (1152 + 2304))),
    ),
    (
        "xavier_uniform_",
        CONV,
        (),
        {"gain": math.sqrt(2)},
        ("uniform", -math.sqrt(12 / 3456), math.sqrt(12 / 3456)),
    ),
    ("xavier_normal_", CONV, (), {}, ("normal", 0.0, math.sqrt(2 / 3456))),
    ("xavier_normal_", BIG, (0.5,), {}, ("normal", 0.0, 0.5 * math.sqrt(2 / 1100))),
]
for _a, _mode, _nl in [
    (0, "fan_in", "relu"),
    (0.2, "fan_out", "leaky_relu"),
    (math.sqrt(5), "fan_in", "leaky_relu"),
    (0, "fan_in", "tanh"),
    (0, "fan_out", "selu"),
    (0, "fan_in", "linear"),
    (0, "fan_out", "sigmoid"),
    (0, "fan_in", "conv2d"),
]:
    _std = _kaiming_std(_a, _mode, _nl)
    INIT_CASES.append(
        (
            "kaiming_uniform_",
            CONV,
            (),
            {"a": _a, "mode": _mode, "nonlinearity": _nl},
            ("uniform", -math.sqrt(3) * _std, math.sqrt(3) * _std),
        )
    )
    INIT_CASES.append(
        (
            "kaiming_normal_",
            CONV,
            (),
            {"a": _a, "mode": _mode, "nonlinearity": _nl},
            ("normal", 0.0, _std),
        )
    )


def _id(c):
    kw = ",".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in c[3].items())
    return f"{c[0]}({','.join(f'{a:.3g}' for a in c[2])}{kw})"


@pytest.mark.parametrize("case", INIT_CASES, ids=[_id(c) for c in INIT_CASES])
def test_init_function_statistics(case):
    name, shape, args, kwargs, dist = case
    j, t = _both(shape, name, *args, **kwargs)
    check_distribution(j, t, dist, _id(case))


@pytest.mark.parametrize(
    "shape,gain", [((300, 200), 1.0), ((200, 300), 2.0), ((64, 32, 3, 3), 0.5), ((128, 128), 1.0)]
)
def test_orthogonal_(shape, gain):
    j, t = _both(shape, "orthogonal_", gain=gain)
    rows = shape[0]
    cols = j.size // rows
    q = j.reshape(rows, cols)
    gram = q.T @ q if rows >= cols else q @ q.T
    np.testing.assert_allclose(gram, gain**2 * np.eye(min(rows, cols)), atol=1e-4)
    # Entries of a Haar-orthogonal matrix: mean 0, variance gain^2 / max(rows, cols).
    mj, vj, _ = _moments(j)
    mt, vt, _ = _moments(t)
    assert abs(vj - gain**2 / max(rows, cols)) < 1e-3 * gain**2
    assert abs(vj - vt) < 1e-3 * gain**2
    assert abs(mj - mt) <= K * math.sqrt(2 * vt / j.size)


@pytest.mark.parametrize("sparsity,std", [(0.3, 0.05), (0.9, 1.0)])
def test_sparse_(sparsity, std):
    shape = (200, 60)
    j, t = _both(shape, "sparse_", sparsity, std)
    zeros = math.ceil(sparsity * shape[0])
    for arr in (j, t):
        per_col = (arr.reshape(shape) == 0).sum(axis=0)
        np.testing.assert_array_equal(per_col, zeros)
    check_distribution(j[j != 0], t[t != 0], ("normal", 0.0, std), "sparse_ nonzeros")


@pytest.mark.parametrize(
    "fn,shape,args",
    [
        ("eye_", (30, 50), ()),
        ("eye_", (7, 4), ()),
        ("dirac_", (8, 4, 3, 3), (2,)),
        ("dirac_", (6, 6, 5), ()),
        ("dirac_", (4, 8, 3, 3, 3), ()),
        ("constant_", (5, 7), (0.7,)),
        ("ones_", (3, 4), ()),
        ("zeros_", (3, 4), ()),
    ],
)
def test_deterministic_inits(fn, shape, args):
    j, t = _both(shape, fn, *args)
    np.testing.assert_array_equal(j, t)


def test_calculate_gain():
    for nl in [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
        "tanh",
        "relu",
        "leaky_relu",
        "selu",
    ]:
        assert jtorch.nn.init.calculate_gain(nl) == torch.nn.init.calculate_gain(nl), nl
    assert jtorch.nn.init.calculate_gain("leaky_relu", 0.3) == torch.nn.init.calculate_gain(
        "leaky_relu", 0.3
    )
    for lib in (torch, jtorch):
        with pytest.raises(ValueError, match="Unsupported nonlinearity"):
            lib.nn.init.calculate_gain("nope")


# ---------------------------------------------------------------------------
# Default initialisation of the layers


def _u(b):
    return ("uniform", -b, b)


def _kaiming_sqrt5(fan_in):
    """Linear/conv default: kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    return _u(1 / math.sqrt(fan_in))


ONES, ZEROS = ("const", 1.0), ("const", 0.0)

LAYERS = [
    (
        "Linear",
        lambda nn: nn.Linear(512, 256),
        {"weight": _kaiming_sqrt5(512), "bias": _u(1 / math.sqrt(512))},
    ),
    ("Bilinear", lambda nn: nn.Bilinear(64, 32, 16), {"weight": _u(1 / 8), "bias": _u(1 / 8)}),
    (
        "Conv1d",
        lambda nn: nn.Conv1d(32, 64, 5),
        {"weight": _kaiming_sqrt5(160), "bias": _u(1 / math.sqrt(160))},
    ),
    (
        "Conv2d",
        lambda nn: nn.Conv2d(32, 64, 3),
        {"weight": _kaiming_sqrt5(288), "bias": _u(1 / math.sqrt(288))},
    ),
    (
        "Conv2d.groups",
        lambda nn: nn.Conv2d(32, 64, 3, groups=4),
        {"weight": _kaiming_sqrt5(72), "bias": _u(1 / math.sqrt(72))},
    ),
    (
        "Conv3d",
        lambda nn: nn.Conv3d(8, 16, 3),
        {"weight": _kaiming_sqrt5(216), "bias": _u(1 / math.sqrt(216))},
    ),
    (
        "ConvTranspose2d",
        lambda nn: nn.ConvTranspose2d(32, 64, 3),
        {"weight": _kaiming_sqrt5(576), "bias": _u(1 / math.sqrt(576))},
    ),
    ("Embedding", lambda nn: nn.Embedding(2000, 64), {"weight": ("normal", 0.0, 1.0)}),
    ("EmbeddingBag", lambda nn: nn.EmbeddingBag(1000, 32), {"weight": ("normal", 0.0, 1.0)}),
    ("LSTM", lambda nn: nn.LSTM(64, 128, num_layers=2), "rnn:128"),
    ("GRU", lambda nn: nn.GRU(64, 128, bidirectional=True), "rnn:128"),
    ("RNN", lambda nn: nn.RNN(64, 256), "rnn:256"),
    ("LSTMCell", lambda nn: nn.LSTMCell(64, 128), "rnn:128"),
    ("LayerNorm", lambda nn: nn.LayerNorm(64), {"weight": ONES, "bias": ZEROS}),
    ("GroupNorm", lambda nn: nn.GroupNorm(4, 64), {"weight": ONES, "bias": ZEROS}),
    (
        "BatchNorm2d",
        lambda nn: nn.BatchNorm2d(64),
        {
            "weight": ONES,
            "bias": ZEROS,
            "running_mean": ZEROS,
            "running_var": ONES,
            "num_batches_tracked": ZEROS,
        },
    ),
    (
        "MultiheadAttention",
        lambda nn: nn.MultiheadAttention(128, 4),
        {
            "in_proj_weight": _u(math.sqrt(6 / (128 + 384))),
            "in_proj_bias": ZEROS,
            "out_proj.weight": _kaiming_sqrt5(128),
            "out_proj.bias": ZEROS,
        },
    ),
    (
        "MultiheadAttention.kdim_vdim_bias_kv",
        lambda nn: nn.MultiheadAttention(128, 4, kdim=32, vdim=16, add_bias_kv=True),
        {
            "q_proj_weight": _u(math.sqrt(6 / 256)),
            "k_proj_weight": _u(math.sqrt(6 / 160)),
            "v_proj_weight": _u(math.sqrt(6 / 144)),
            "in_proj_bias": ZEROS,
            "bias_k": ("normal", 0.0, math.sqrt(2 / 256)),
            "bias_v": ("normal", 0.0, math.sqrt(2 / 256)),
            "out_proj.weight": _kaiming_sqrt5(128),
            "out_proj.bias": ZEROS,
        },
    ),
    ("PReLU", lambda nn: nn.PReLU(64, init=0.3), {"weight": ("const", np.float32(0.3))}),
    ("PReLU.default", lambda nn: nn.PReLU(), {"weight": ("const", 0.25)}),
]


@pytest.mark.parametrize("layer", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_default_init(layer):
    name, make, spec = layer
    cls_name = name.split(".")[0]
    if getattr(jtorch.nn, cls_name, None) is None:
        pytest.skip(f"jtorch.nn.{cls_name} is not built yet")
    torch.manual_seed(0)
    jtorch.manual_seed(0)
    tm, jm = make(torch.nn), make(jtorch.nn)
    tsd, jsd = tm.state_dict(), jm.state_dict()
    assert list(tsd) == list(jsd)
    if isinstance(spec, str):  # recurrent layers: every tensor is U(-1/sqrt(h), 1/sqrt(h))
        b = 1 / math.sqrt(int(spec.split(":")[1]))
        spec = {k: _u(b) for k in tsd}
    assert set(spec) == set(tsd), f"untested entries: {set(tsd) - set(spec)}"
    for key, dist in spec.items():
        assert str(tsd[key].dtype) == str(jsd[key].dtype), key
        check_distribution(_np(jsd[key]), _np(tsd[key]), dist, f"{name}.{key}")


def test_embedding_padding_idx_row_is_zero():
    torch.manual_seed(0)
    tm, jm = torch.nn.Embedding(500, 32, padding_idx=3), jtorch.nn.Embedding(500, 32, padding_idx=3)
    for m in (tm, jm):
        assert not _np(m.weight[3]).any()
    rows = [i for i in range(500) if i != 3]
    check_distribution(
        _np(jm.weight[rows]), _np(tm.weight[rows]), ("normal", 0.0, 1.0), "Embedding(padding_idx)"
    )
