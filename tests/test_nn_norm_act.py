"""Normalization, dropout, embedding, activation and distance layers (no torch needed)."""

import math
import warnings

import numpy as np
import pytest

import jtorch as torch
from jtorch import nn

from .helpers import close, f32

_rng = np.random.default_rng(0)


def _x(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------------------
# Batch norm


def test_batchnorm_buffers_and_state_dict():
    m = nn.BatchNorm2d(3)
    assert list(m.state_dict()) == [
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]
    assert m.num_batches_tracked.dtype == torch.int64 and m.num_batches_tracked.ndim == 0
    close(m.weight.detach(), np.ones(3))
    close(m.bias.detach(), np.zeros(3))
    close(m.running_mean, np.zeros(3))
    close(m.running_var, np.ones(3))
    assert list(nn.BatchNorm1d(3, affine=False).state_dict()) == [
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]
    assert list(nn.BatchNorm1d(3, bias=False).state_dict())[:2] == ["weight", "running_mean"]
    m = nn.BatchNorm1d(3, track_running_stats=False)
    assert list(m.state_dict()) == ["weight", "bias"]
    assert m.running_mean is None and m.num_batches_tracked is None


def test_batchnorm_running_stats_momentum():
    x = _x(6, 3, 4)
    m = nn.BatchNorm1d(3, momentum=0.25)
    y = m(f32(x))
    mean = x.mean(axis=(0, 2))
    var = x.var(axis=(0, 2))
    n = 6 * 4
    close(y, (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-5), atol=1e-5)
    close(m.running_mean, 0.25 * mean, atol=1e-6)
    close(m.running_var, 0.75 + 0.25 * var * n / (n - 1), atol=1e-6)
    assert int(m.num_batches_tracked) == 1
    m.eval()
    z = _x(2, 3, 4)
    rm, rv = m.running_mean.numpy(), m.running_var.numpy()
    close(m(f32(z)), (z - rm[:, None]) / np.sqrt(rv[:, None] + 1e-5), atol=1e-5)
    assert int(m.num_batches_tracked) == 1  # eval does not count batches


def test_batchnorm_momentum_none_is_cumulative_average():
    m = nn.BatchNorm1d(2, momentum=None)
    batches = [_x(5, 2) + i for i in range(4)]
    for b in batches:
        m(f32(b))
    close(m.running_mean, np.mean([b.mean(0) for b in batches], axis=0), atol=1e-5)
    close(m.running_var, np.mean([b.var(0, ddof=1) for b in batches], axis=0), atol=1e-5)
    assert int(m.num_batches_tracked) == 4


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    x = _x(4, 3)
    m = nn.BatchNorm1d(3, track_running_stats=False, affine=False).eval()
    close(m(f32(x)), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), atol=1e-5)


def test_batchnorm_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(torch.zeros(2, 3, 4, 4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="at least 2D"):
        nn.SyncBatchNorm(3)(torch.zeros(3))


def test_batchnorm_reset_and_repr():
    m = nn.BatchNorm3d(4, momentum=None, eps=1e-3)
    assert repr(m) == (
        "BatchNorm3d(4, eps=0.001, momentum=None, affine=True, bias=True, track_running_stats=True)"
    )
    m(torch.randn(2, 4, 2, 2, 2))
    m.reset_running_stats()
    close(m.running_var, np.ones(4))
    assert int(m.num_batches_tracked) == 0


def test_lazy_batchnorm_materialises():
    m = nn.LazyBatchNorm2d(momentum=0.5)
    assert m.has_uninitialized_params()
    m(torch.randn(2, 5, 3, 3))
    assert type(m) is nn.BatchNorm2d and m.num_features == 5
    assert tuple(m.weight.shape) == (5,) and tuple(m.running_var.shape) == (5,)
    assert int(m.num_batches_tracked) == 1


def test_sync_batchnorm_convert():
    net = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3, momentum=0.3))
    w = net[1].weight
    out = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(out[1]) is nn.SyncBatchNorm and out[1].momentum == 0.3
    assert out[1].weight is w
    out[1](torch.randn(4, 3, 2))  # any rank >= 2


# ---------------------------------------------------------------------------
# Instance, layer, group, RMS and response norms


def test_instance_norm_values_and_stats():
    x = _x(2, 3, 6)
    m = nn.InstanceNorm1d(3, track_running_stats=True)
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    close(m(f32(x)), (x - mean) / np.sqrt(var + 1e-5), atol=1e-5)
    close(m.running_mean, 0.1 * mean[..., 0].mean(0), atol=1e-6)
    close(m.running_var, 0.9 + 0.1 * x.var(-1, ddof=1).mean(0), atol=1e-6)
    assert list(nn.InstanceNorm2d(3).state_dict()) == []
    assert list(nn.InstanceNorm2d(3, affine=True).state_dict()) == ["weight", "bias"]


def test_instance_norm_unbatched_and_checks():
    x = _x(3, 4, 4)
    y = nn.InstanceNorm2d(3)(f32(x))
    assert tuple(y.shape) == (3, 4, 4)
    mean = x.mean(axis=(1, 2), keepdims=True)
    close(y, (x - mean) / np.sqrt(x.var(axis=(1, 2), keepdims=True) + 1e-5), atol=1e-5)
    with pytest.raises(ValueError, match="to match num_features"):
        nn.InstanceNorm2d(4, affine=True)(f32(x))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm2d(4)(f32(x))
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(3)(torch.zeros(3, 4))


def test_lazy_instance_norm_defaults():
    # PyTorch's lazy instance norms default to affine=True, track_running_stats=True.
    m = nn.LazyInstanceNorm1d()
    m(torch.randn(2, 4, 5))
    assert type(m) is nn.InstanceNorm1d
    assert m.affine and m.track_running_stats and tuple(m.running_mean.shape) == (4,)


def test_layer_norm():
    x = _x(2, 3, 4)
    m = nn.LayerNorm([3, 4], eps=1e-6)
    mean = x.mean(axis=(1, 2), keepdims=True)
    close(m(f32(x)), (x - mean) / np.sqrt(x.var(axis=(1, 2), keepdims=True) + 1e-6), atol=1e-5)
    assert m.normalized_shape == (3, 4) and tuple(m.weight.shape) == (3, 4)
    assert (
        repr(nn.LayerNorm(4, bias=False))
        == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=False)"
    )
    assert list(nn.LayerNorm(4, elementwise_affine=False).state_dict()) == []
    assert list(nn.LayerNorm(4, bias=False).state_dict()) == ["weight"]


def test_group_norm():
    x = _x(2, 4, 3)
    g = x.reshape(2, 2, 6)
    ref = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    close(nn.GroupNorm(2, 4)(f32(x)), ref.reshape(2, 4, 3), atol=1e-5)
    with pytest.raises(
        ValueError,
        match=r"num_channels \(5\) must be divisible by "
        r"num_groups \(2\)",
    ):
        nn.GroupNorm(2, 5)
    assert (
        repr(nn.GroupNorm(2, 4, affine=False))
        == "GroupNorm(2, 4, eps=1e-05, affine=False, bias=False)"
    )


def test_rms_norm():
    x = _x(3, 5)
    ref = x / np.sqrt((x * x).mean(-1, keepdims=True) + np.finfo(np.float32).eps)
    close(nn.RMSNorm(5)(f32(x)), ref, atol=1e-5)
    close(
        nn.RMSNorm(5, eps=0.5, elementwise_affine=False)(f32(x)),
        x / np.sqrt((x * x).mean(-1, keepdims=True) + 0.5),
        atol=1e-5,
    )
    assert repr(nn.RMSNorm([2, 3], eps=0.1)) == "RMSNorm((2, 3), eps=0.1, elementwise_affine=True)"


def test_local_response_norm():
    x = _x(1, 4, 2)
    size, alpha, beta, k = 3, 0.5, 0.75, 2.0
    sq = np.pad(x * x, ((0, 0), (1, 1), (0, 0)))
    avg = np.stack([sq[:, c : c + size].mean(1) for c in range(4)], 1)
    close(
        nn.LocalResponseNorm(size, alpha, beta, k)(f32(x)), x / (k + alpha * avg) ** beta, atol=1e-6
    )


def test_cross_map_lrn2d():
    # PyTorch's running-sum window for size 3 should be channels c-1..c+1, but its loop only
    # starts dropping channels at c = 3 (and then drops c-2): channel 2 sums channels 0..3
    # and channel 3 sums channels 0, 2 and 3.
    x = _x(1, 4, 2, 2)
    sq = x * x
    win = [sq[:, 0:2].sum(1), sq[:, 0:3].sum(1), sq[:, 0:4].sum(1), sq[:, [0, 2, 3]].sum(1)]
    scale = 1.0 + (0.3 / 3) * np.stack(win, 1)
    close(nn.CrossMapLRN2d(3, 0.3)(f32(x)), x * scale**-0.75, atol=1e-6)
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D"):
        nn.CrossMapLRN2d(3)(torch.zeros(1, 4, 2))


# ---------------------------------------------------------------------------
# Dropout


def test_dropout_statistics():
    p = 0.3
    x = torch.ones(200, 100)
    y = nn.Dropout(p)(x).numpy()
    zero = (y == 0).mean()
    assert abs(zero - p) < 0.02
    np.testing.assert_allclose(y[y != 0], 1 / (1 - p), rtol=1e-6)


def test_dropout_eval_is_identity_and_inplace():
    x = torch.randn(3, 4)
    m = nn.Dropout(0.5).eval()
    assert m(x) is x
    y = torch.ones(10, 10)
    out = nn.Dropout(0.5, inplace=True)(y)
    assert out is y and (y.numpy() == 0).any()
    assert nn.Dropout(0.0)(x) is x


def test_feature_dropout_zeroes_whole_channels():
    for cls, shape in (
        (nn.Dropout1d, (8, 16, 5)),
        (nn.Dropout2d, (8, 16, 3, 3)),
        (nn.Dropout3d, (8, 16, 2, 2, 2)),
    ):
        y = cls(0.5)(torch.ones(*shape)).numpy().reshape(8, 16, -1)
        per_channel = y.min(-1) == y.max(-1)
        assert per_channel.all(), cls
        assert set(np.unique(y)) <= {0.0, 2.0} and 0.2 < (y == 0).mean() < 0.8
    y = nn.Dropout1d(0.5)(torch.ones(16, 5)).numpy()  # unbatched (C, L)
    assert (y.min(-1) == y.max(-1)).all()


def test_alpha_dropout_keeps_mean_and_variance():
    x = torch.randn(100000)
    y = nn.AlphaDropout(0.2)(x).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    assert nn.AlphaDropout(0.2).eval()(x) is x
    y = nn.FeatureAlphaDropout(0.5)(torch.randn(4, 8, 3, 3)).numpy().reshape(32, 9)
    dropped = y.min(-1) == y.max(-1)
    assert dropped.any()
    # a dropped channel holds alpha' * a + b = the SELU saturation value, mapped
    a = 1 / math.sqrt((1.7580993408473766**2 * 0.5 + 1) * 0.5)
    np.testing.assert_allclose(y[dropped], -1.7580993408473766 * a * 0.5, rtol=1e-5)


def test_dropout_errors_and_repr():
    with pytest.raises(
        ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"
    ):
        nn.Dropout(1.5)
    assert repr(nn.Dropout2d(0.1, True)) == "Dropout2d(p=0.1, inplace=True)"


# ---------------------------------------------------------------------------
# Embedding


def test_embedding_init_and_padding():
    torch.manual_seed(0)
    m = nn.Embedding(1000, 8, padding_idx=-2)
    assert m.padding_idx == 998
    w = m.weight.detach().numpy()
    assert (w[998] == 0).all()
    assert abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05  # N(0, 1)
    out = m(torch.tensor([[998, 1], [1, 5]]))
    out.sum().backward()
    g = m.weight.grad.numpy()
    assert (g[998] == 0).all() and (g[1] == 2).all() and (g[5] == 1).all()
    assert repr(m) == "Embedding(1000, 8, padding_idx=998)"


def test_embedding_checks_and_repr():
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 2, padding_idx=-6)
    m = nn.Embedding(5, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)
    assert repr(m) == (
        "Embedding(5, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)"
    )


def test_embedding_max_norm_renormalises_used_rows():
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], np.float32)
    m = nn.Embedding.from_pretrained(f32(w), max_norm=1.0)
    out = m(torch.tensor([0, 1]))
    close(out, [[0.6, 0.8], [0.3, 0.4]], atol=1e-6)
    close(m.weight.detach(), [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]], atol=1e-6)


def test_embedding_from_pretrained():
    w = f32(np.arange(6.0).reshape(3, 2))
    m = nn.Embedding.from_pretrained(w)
    assert not m.weight.requires_grad
    close(m(torch.tensor([2, 0])), [[4, 5], [0, 1]])
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(torch.zeros(3))


def test_embedding_bag_modes():
    w = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    idx = torch.tensor([0, 2, 5, 1, 3])
    offs = torch.tensor([0, 3, 3])
    m = nn.EmbeddingBag.from_pretrained(f32(w), mode="sum")
    close(m(idx, offs), [w[[0, 2, 5]].sum(0), [0, 0], w[[1, 3]].sum(0)])
    m.mode = "mean"
    close(m(idx, offs), [w[[0, 2, 5]].mean(0), [0, 0], w[[1, 3]].mean(0)])
    m.mode = "max"
    close(m(idx, offs), [w[[0, 2, 5]].max(0), [0, 0], w[[1, 3]].max(0)])
    m = nn.EmbeddingBag.from_pretrained(f32(w), mode="sum", include_last_offset=True)
    close(m(idx, torch.tensor([0, 2, 5])), [w[[0, 2]].sum(0), w[[5, 1, 3]].sum(0)])
    m = nn.EmbeddingBag.from_pretrained(f32(w), mode="sum")
    psw = f32([1.0, 2.0, -1.0, 0.5, 0.0])
    close(m(idx, offs, psw), [w[0] + 2 * w[2] - w[5], [0, 0], 0.5 * w[1]])
    m = nn.EmbeddingBag.from_pretrained(f32(w), padding_idx=2)
    close(m(idx, offs), [w[[0, 5]].mean(0), [0, 0], w[[1, 3]].mean(0)])
    assert repr(m) == "EmbeddingBag(6, 2, mode='mean', padding_idx=2)"
    assert not m.weight.requires_grad


def test_embedding_bag_2d_input():
    m = nn.EmbeddingBag(10, 3, mode="sum")
    idx = torch.tensor([[1, 2], [3, 3]])
    w = m.weight.detach().numpy()
    close(m(idx), [w[1] + w[2], 2 * w[3]], atol=1e-6)


# ---------------------------------------------------------------------------
# Activations


def _act_ref():
    x = np.linspace(-4, 4, 17, dtype=np.float32)
    sig = 1 / (1 + np.exp(-x))
    sp = np.log1p(np.exp(x))
    return x, {
        nn.ReLU(): np.maximum(x, 0),
        nn.ReLU6(): np.clip(x, 0, 6),
        nn.LeakyReLU(0.2): np.where(x > 0, x, 0.2 * x),
        nn.ELU(0.5): np.where(x > 0, x, 0.5 * np.expm1(x)),
        nn.CELU(2.0): np.maximum(x, 0) + np.minimum(0, 2.0 * np.expm1(x / 2.0)),
        nn.SELU(): 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
        nn.Sigmoid(): sig,
        nn.Tanh(): np.tanh(x),
        nn.SiLU(): x * sig,
        nn.Mish(): x * np.tanh(sp),
        nn.Hardtanh(-2, 3): np.clip(x, -2, 3),
        nn.Hardsigmoid(): np.clip(x / 6 + 0.5, 0, 1),
        nn.Hardswish(): x * np.clip(x + 3, 0, 6) / 6,
        nn.Hardshrink(1.0): np.where(np.abs(x) > 1.0, x, 0),
        nn.Softshrink(1.0): np.sign(x) * np.maximum(np.abs(x) - 1.0, 0),
        nn.Tanhshrink(): x - np.tanh(x),
        nn.Softplus(2.0, 4.0): np.where(2 * x > 4, x, np.log1p(np.exp(2 * x)) / 2),
        nn.Softsign(): x / (1 + np.abs(x)),
        nn.LogSigmoid(): np.log(sig),
        nn.Threshold(0.5, -3.0): np.where(x > 0.5, x, -3.0),
        nn.GELU(): np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x]),
        nn.GELU("tanh"): 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        nn.PReLU(init=0.3): np.where(x > 0, x, 0.3 * x),
        nn.RReLU(0.1, 0.3).eval(): np.where(x >= 0, x, 0.2 * x),
    }


def test_activation_values():
    x, refs = _act_ref()
    for m, ref in refs.items():
        close(m(f32(x)), ref, rtol=1e-5, atol=1e-6)


def test_activation_inplace_returns_input():
    for m in (
        nn.ReLU(True),
        nn.ReLU6(True),
        nn.LeakyReLU(0.1, True),
        nn.ELU(inplace=True),
        nn.CELU(inplace=True),
        nn.SELU(True),
        nn.SiLU(True),
        nn.Mish(True),
        nn.Hardtanh(inplace=True),
        nn.Hardsigmoid(True),
        nn.Hardswish(True),
        nn.Threshold(0.0, 1.0, True),
        nn.RReLU(inplace=True),
    ):
        x = torch.tensor([-1.5, 7.0])
        assert m(x) is x, m
        assert x.tolist() != [-1.5, 7.0], m


def test_rrelu_training_slopes():
    x = -torch.ones(10000)
    y = nn.RReLU(0.1, 0.3)(x).numpy()
    slopes = -y
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.01


def test_prelu_parameters():
    m = nn.PReLU(3, init=0.1)
    close(m.weight.detach(), [0.1] * 3)
    x = f32(-np.ones((2, 3, 2)))
    close(m(x), -0.1 * np.ones((2, 3, 2)))
    assert repr(m) == "PReLU(num_parameters=3)"


def test_softmax_modules():
    x = _x(2, 3, 4)
    e = np.exp(x - x.max(1, keepdims=True))
    close(nn.Softmax(1)(f32(x)), e / e.sum(1, keepdims=True), atol=1e-6)
    close(nn.LogSoftmax(1)(f32(x)), np.log(e / e.sum(1, keepdims=True)), atol=1e-5)
    e = np.exp(-x - (-x).max(2, keepdims=True))
    close(nn.Softmin(2)(f32(x)), e / e.sum(2, keepdims=True), atol=1e-6)
    x4 = _x(2, 3, 2, 2)
    e = np.exp(x4)
    close(nn.Softmax2d()(f32(x4)), e / e.sum(1, keepdims=True), atol=1e-6)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(torch.zeros(2, 2))


def test_softmax_dim_none_legacy():
    # dim=None: dim 0 for 0-, 1- and 3-D inputs, else dim 1, with a deprecation warning.
    for shape, dim in (((4,), 0), ((2, 3), 1), ((2, 3, 4), 0), ((2, 3, 2, 2), 1)):
        x = _x(*shape)
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            y = nn.Softmax()(f32(x))
        e = np.exp(x)
        close(y, e / e.sum(dim, keepdims=True), atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.Softmax(dim=0)(torch.zeros(3))


def test_activation_reprs():
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.LeakyReLU(0.2, True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    assert repr(nn.Hardtanh(-2.0, 2.0)) == "Hardtanh(min_val=-2.0, max_val=2.0)"
    assert repr(nn.ReLU6(True)) == "ReLU6(inplace=True)"
    assert repr(nn.Hardswish(True)) == "Hardswish()"
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"
    assert repr(nn.Softshrink(0.3)) == "Softshrink(0.3)"
    assert repr(nn.Softmax()) == "Softmax(dim=None)"
    assert repr(nn.GLU()) == "GLU(dim=-1)"
    assert repr(nn.Threshold(0.1, 2.0)) == "Threshold(threshold=0.1, value=2.0)"
    assert repr(nn.RReLU()) == "RReLU(lower=0.125, upper=0.3333333333333333)"
    assert repr(nn.ELU(inplace=True)) == "ELU(alpha=1.0, inplace=True)"


def test_hardtanh_checks():
    with pytest.raises(
        AssertionError,
        match=r"max_val \(1.0\) must be greater than min_val "
        r"\(2.0\)",
    ):
        nn.Hardtanh(2.0, 1.0)
    with pytest.warns(FutureWarning, match="min_value"):
        m = nn.Hardtanh(min_value=-3.0)
    assert m.min_val == -3.0


def test_glu():
    x = _x(2, 6)
    a, b = x[:, :3], x[:, 3:]
    close(nn.GLU()(f32(x)), a / (1 + np.exp(-b)), atol=1e-6)


# ---------------------------------------------------------------------------
# Distances


def test_pairwise_distance_and_cosine_similarity():
    a, b = _x(4, 5), _x(4, 5)
    close(nn.PairwiseDistance()(f32(a), f32(b)), np.linalg.norm(a - b + 1e-6, axis=-1), atol=1e-5)
    close(
        nn.PairwiseDistance(p=1.0, keepdim=True)(f32(a), f32(b)),
        np.abs(a - b + 1e-6).sum(-1, keepdims=True),
        atol=1e-5,
    )
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    close(nn.CosineSimilarity()(f32(a), f32(b)), cos, atol=1e-6)
    close(
        nn.CosineSimilarity(dim=0)(f32(a), f32(b)),
        (a * b).sum(0) / (np.linalg.norm(a, axis=0) * np.linalg.norm(b, axis=0)),
        atol=1e-6,
    )
    assert repr(nn.PairwiseDistance()) == "PairwiseDistance()"
