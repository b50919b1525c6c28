"""Module parity for convolution, pooling, resampling, padding and shuffle layers."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.module_parity import Case, check  # noqa: E402

_rng = np.random.default_rng(0)


def _x(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _pos(*shape):
    """Positive inputs (LPPool with a fractional power is NaN on negatives, in both libraries)."""
    return (np.abs(_x(*shape)) + 0.1).astype(np.float32)


def _lib(nn):
    return torch if nn is torch.nn else jtorch


def _lazy(cls_name, *args, shape, **kwargs):
    """A Lazy* module, materialised by one call on zeros (its weights are then loaded)."""

    def make(nn):
        m = getattr(nn, cls_name)(*args, **kwargs)
        m(_lib(nn).zeros(shape))
        return m

    return make


def _samples(*shape):
    return _rng.uniform(size=shape).astype(np.float32)


def _fractional(cls_name, samples, *args, **kwargs):
    def make(nn):
        return getattr(nn, cls_name)(*args, _random_samples=_lib(nn).tensor(samples), **kwargs)

    return make


def _pool_unpool(pool, unpool, *args, **kwargs):
    return lambda nn: nn.ModuleList(
        [
            getattr(nn, pool)(*args, return_indices=True, **kwargs),
            getattr(nn, unpool)(*args, **kwargs),
        ]
    )


def _unpool_forward(m, x):
    return m[1](*m[0](x))


def _unpool_forward_size(m, x):
    out, idx = m[0](x)
    return m[1](out, idx, output_size=list(x.shape[-2:]))


CONV = [
    Case("Conv1d", lambda nn: nn.Conv1d(3, 4, 3), (_x(2, 3, 7),)),
    Case(
        "Conv1d.args",
        lambda nn: nn.Conv1d(2, 4, 3, stride=2, padding=2, dilation=2),
        (_x(2, 2, 9),),
    ),
    Case(
        "Conv1d.groups.nobias", lambda nn: nn.Conv1d(4, 6, 2, groups=2, bias=False), (_x(2, 4, 6),)
    ),
    Case("Conv1d.same", lambda nn: nn.Conv1d(2, 3, 4, padding="same", dilation=2), (_x(1, 2, 9),)),
    Case("Conv1d.valid", lambda nn: nn.Conv1d(2, 3, 3, padding="valid"), (_x(2, 2, 5),)),
    Case(
        "Conv1d.reflect",
        lambda nn: nn.Conv1d(2, 3, 3, padding=2, padding_mode="reflect"),
        (_x(2, 2, 6),),
    ),
    Case("Conv1d.unbatched", lambda nn: nn.Conv1d(2, 3, 3, padding=1), (_x(2, 5),)),
    Case("Conv2d", lambda nn: nn.Conv2d(3, 4, 3, padding=1), (_x(2, 3, 6, 5),)),
    Case(
        "Conv2d.tuples",
        lambda nn: nn.Conv2d(2, 4, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(2, 1)),
        (_x(2, 2, 8, 6),),
    ),
    Case(
        "Conv2d.depthwise", lambda nn: nn.Conv2d(4, 8, 3, groups=4, bias=False), (_x(1, 4, 5, 5),)
    ),
    Case(
        "Conv2d.same",
        lambda nn: nn.Conv2d(2, 3, (4, 3), padding="same", dilation=(1, 2)),
        (_x(2, 2, 6, 7),),
    ),
    Case(
        "Conv2d.reflect",
        lambda nn: nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="reflect"),
        (_x(2, 2, 5, 6),),
    ),
    Case(
        "Conv2d.replicate",
        lambda nn: nn.Conv2d(2, 3, 3, stride=2, padding=2, padding_mode="replicate"),
        (_x(2, 2, 6, 6),),
    ),
    Case(
        "Conv2d.circular",
        lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular"),
        (_x(2, 2, 5, 4),),
    ),
    Case(
        "Conv2d.same.circular",
        lambda nn: nn.Conv2d(2, 2, 4, padding="same", padding_mode="circular"),
        (_x(1, 2, 6, 6),),
    ),
    Case(
        "Conv2d.float64",
        lambda nn: nn.Conv2d(2, 3, 3, dtype=_lib(nn).float64),
        (_x(2, 2, 5, 5).astype(np.float64),),
    ),
    Case("Conv3d", lambda nn: nn.Conv3d(2, 3, 2), (_x(2, 2, 4, 4, 4),)),
    Case(
        "Conv3d.args",
        lambda nn: nn.Conv3d(
            2, 4, (2, 3, 2), stride=(1, 2, 2), padding=(1, 0, 1), dilation=(2, 1, 1), groups=2
        ),
        (_x(1, 2, 5, 6, 5),),
    ),
    Case(
        "Conv3d.circular",
        lambda nn: nn.Conv3d(2, 2, 3, padding=1, padding_mode="circular"),
        (_x(1, 2, 4, 4, 3),),
    ),
    Case(
        "Conv3d.same.replicate",
        lambda nn: nn.Conv3d(1, 2, 2, padding="same", padding_mode="replicate"),
        (_x(1, 1, 3, 4, 3),),
    ),
    Case("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(3, 2, 3), (_x(2, 3, 5),)),
    Case(
        "ConvTranspose1d.args",
        lambda nn: nn.ConvTranspose1d(
            4, 6, 3, stride=3, padding=1, output_padding=2, groups=2, dilation=2
        ),
        (_x(2, 4, 4),),
    ),
    Case(
        "ConvTranspose1d.output_size",
        lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2),
        (_x(1, 2, 4),),
        forward=lambda m, x: m(x, output_size=[10]),
    ),
    Case(
        "ConvTranspose1d.unbatched", lambda nn: nn.ConvTranspose1d(2, 3, 3, bias=False), (_x(2, 4),)
    ),
    Case("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(3, 2, 3, padding=1), (_x(2, 3, 4, 5),)),
    Case(
        "ConvTranspose2d.args",
        lambda nn: nn.ConvTranspose2d(
            2,
            4,
            (3, 2),
            stride=(2, 3),
            padding=(1, 0),
            output_padding=(1, 2),
            dilation=(1, 2),
            groups=2,
        ),
        (_x(2, 2, 3, 4),),
    ),
    Case(
        "ConvTranspose2d.output_size",
        lambda nn: nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1),
        (_x(1, 2, 3, 4),),
        forward=lambda m, x: m(x, output_size=(1, 2, 6, 8)),
    ),
    Case(
        "ConvTranspose2d.nobias",
        lambda nn: nn.ConvTranspose2d(2, 3, 2, stride=2, bias=False),
        (_x(2, 2, 3, 3),),
    ),
    Case("ConvTranspose3d", lambda nn: nn.ConvTranspose3d(2, 2, 2), (_x(1, 2, 3, 3, 2),)),
    Case(
        "ConvTranspose3d.args",
        lambda nn: nn.ConvTranspose3d(2, 2, 3, stride=2, padding=1, output_padding=1, dilation=1),
        (_x(1, 2, 2, 3, 2),),
    ),
    Case(
        "ConvTranspose3d.output_size",
        lambda nn: nn.ConvTranspose3d(2, 1, 2, stride=2),
        (_x(1, 2, 2, 2, 2),),
        forward=lambda m, x: m(x, output_size=[5, 4, 5]),
    ),
    Case("LazyConv1d", _lazy("LazyConv1d", 3, 2, shape=(1, 2, 5)), (_x(2, 2, 5),)),
    Case(
        "LazyConv2d",
        _lazy("LazyConv2d", 4, 3, padding=1, groups=2, shape=(1, 2, 4, 4)),
        (_x(2, 2, 4, 5),),
    ),
    Case(
        "LazyConv3d",
        _lazy("LazyConv3d", 2, 2, bias=False, shape=(1, 3, 3, 3, 3)),
        (_x(1, 3, 3, 3, 3),),
    ),
    Case(
        "LazyConvTranspose1d",
        _lazy("LazyConvTranspose1d", 2, 3, stride=2, shape=(3, 4)),
        (_x(2, 3, 4),),
    ),
    Case(
        "LazyConvTranspose2d",
        _lazy("LazyConvTranspose2d", 2, 2, output_padding=1, stride=2, shape=(1, 3, 2, 2)),
        (_x(2, 3, 3, 2),),
    ),
    Case(
        "LazyConvTranspose3d",
        _lazy("LazyConvTranspose3d", 1, 2, shape=(1, 2, 2, 2, 2)),
        (_x(1, 2, 2, 3, 2),),
    ),
]

POOL = [
    Case("MaxPool1d", lambda nn: nn.MaxPool1d(2), (_x(2, 3, 7),)),
    Case(
        "MaxPool1d.args",
        lambda nn: nn.MaxPool1d(3, stride=2, padding=1, dilation=2, ceil_mode=True),
        (_x(2, 2, 10),),
    ),
    Case("MaxPool1d.indices", lambda nn: nn.MaxPool1d(3, 2, return_indices=True), (_x(2, 7),)),
    Case("MaxPool2d", lambda nn: nn.MaxPool2d(2), (_x(2, 3, 6, 5),)),
    Case(
        "MaxPool2d.args",
        lambda nn: nn.MaxPool2d(
            (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), ceil_mode=True
        ),
        (_x(2, 2, 7, 6),),
    ),
    Case(
        "MaxPool2d.indices",
        lambda nn: nn.MaxPool2d(3, 2, padding=1, return_indices=True, ceil_mode=True),
        (_x(1, 2, 6, 6),),
    ),
    Case("MaxPool3d", lambda nn: nn.MaxPool3d(2), (_x(1, 2, 4, 4, 5),)),
    Case(
        "MaxPool3d.args",
        lambda nn: nn.MaxPool3d(2, stride=1, padding=1, dilation=2, return_indices=True),
        (_x(1, 2, 4, 4, 4),),
    ),
    Case("AvgPool1d", lambda nn: nn.AvgPool1d(3), (_x(2, 3, 8),)),
    Case(
        "AvgPool1d.args",
        lambda nn: nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        (_x(2, 2, 8),),
    ),
    Case("AvgPool2d", lambda nn: nn.AvgPool2d(2), (_x(2, 3, 6, 5),)),
    Case(
        "AvgPool2d.args",
        lambda nn: nn.AvgPool2d(
            (3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True, count_include_pad=False
        ),
        (_x(2, 2, 6, 5),),
    ),
    Case(
        "AvgPool2d.divisor",
        lambda nn: nn.AvgPool2d(3, stride=2, padding=1, divisor_override=4),
        (_x(1, 2, 5, 5),),
    ),
    Case("AvgPool3d", lambda nn: nn.AvgPool3d(2, stride=1), (_x(1, 2, 3, 4, 3),)),
    Case(
        "AvgPool3d.args",
        lambda nn: nn.AvgPool3d(
            3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, divisor_override=None
        ),
        (_x(1, 2, 5, 4, 4),),
    ),
    Case("AvgPool3d.divisor", lambda nn: nn.AvgPool3d(2, divisor_override=3), (_x(1, 1, 4, 4, 4),)),
    Case("AdaptiveMaxPool1d", lambda nn: nn.AdaptiveMaxPool1d(3), (_x(2, 3, 7),)),
    Case(
        "AdaptiveMaxPool1d.indices",
        lambda nn: nn.AdaptiveMaxPool1d(4, return_indices=True),
        (_x(2, 9),),
    ),
    Case("AdaptiveMaxPool2d", lambda nn: nn.AdaptiveMaxPool2d((3, None)), (_x(2, 2, 7, 5),)),
    Case(
        "AdaptiveMaxPool2d.indices",
        lambda nn: nn.AdaptiveMaxPool2d(3, return_indices=True),
        (_x(1, 2, 5, 7),),
    ),
    Case(
        "AdaptiveMaxPool3d",
        lambda nn: nn.AdaptiveMaxPool3d((2, 3, 2), return_indices=True),
        (_x(1, 2, 5, 4, 3),),
    ),
    Case("AdaptiveAvgPool1d", lambda nn: nn.AdaptiveAvgPool1d(4), (_x(2, 3, 9),)),
    Case("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((None, 3)), (_x(2, 2, 5, 7),)),
    Case("AdaptiveAvgPool2d.global", lambda nn: nn.AdaptiveAvgPool2d(1), (_x(2, 3, 4, 4),)),
    Case("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d(2), (_x(1, 2, 5, 3, 4),)),
    Case("LPPool1d", lambda nn: nn.LPPool1d(2, 3, stride=2), (_x(2, 3, 8),)),
    Case("LPPool1d.frac", lambda nn: nn.LPPool1d(1.5, 2, ceil_mode=True), (_pos(2, 2, 7),)),
    Case("LPPool2d", lambda nn: nn.LPPool2d(2, (2, 3)), (_x(2, 2, 6, 6),)),
    Case("LPPool2d.args", lambda nn: nn.LPPool2d(3, 2, stride=1), (_pos(1, 2, 4, 5),)),
    Case("LPPool3d", lambda nn: nn.LPPool3d(2, 2), (_x(1, 2, 4, 4, 4),)),
    Case(
        "MaxUnpool1d",
        _pool_unpool("MaxPool1d", "MaxUnpool1d", 2),
        (_x(2, 3, 8),),
        forward=_unpool_forward,
    ),
    Case(
        "MaxUnpool2d",
        _pool_unpool("MaxPool2d", "MaxUnpool2d", 3, stride=2, padding=1),
        (_x(1, 2, 6, 6),),
        forward=_unpool_forward_size,
    ),
    Case(
        "MaxUnpool2d.output_size",
        _pool_unpool("MaxPool2d", "MaxUnpool2d", 2),
        (_x(1, 2, 5, 7),),
        forward=_unpool_forward_size,
    ),
    Case(
        "MaxUnpool3d",
        _pool_unpool("MaxPool3d", "MaxUnpool3d", 2),
        (_x(1, 2, 4, 4, 4),),
        forward=_unpool_forward,
    ),
    Case(
        "FractionalMaxPool2d",
        _fractional("FractionalMaxPool2d", _samples(2, 3, 2), 2, output_size=3),
        (_x(2, 3, 7, 6),),
    ),
    Case(
        "FractionalMaxPool2d.ratio",
        _fractional(
            "FractionalMaxPool2d", _samples(1, 2, 2), (2, 3), output_ratio=0.5, return_indices=True
        ),
        (_x(1, 2, 8, 9),),
    ),
    Case(
        "FractionalMaxPool3d",
        _fractional(
            "FractionalMaxPool3d", _samples(1, 2, 3), 2, output_size=(2, 3, 2), return_indices=True
        ),
        (_x(1, 2, 5, 6, 4),),
    ),
]

RESAMPLE = [
    Case("Upsample.nearest1d", lambda nn: nn.Upsample(scale_factor=2), (_x(2, 3, 4),)),
    Case("Upsample.nearest2d.size", lambda nn: nn.Upsample(size=(5, 7)), (_x(2, 2, 3, 4),)),
    Case(
        "Upsample.nearest3d",
        lambda nn: nn.Upsample(scale_factor=(1.5, 2, 0.5)),
        (_x(1, 2, 4, 3, 4),),
    ),
    Case(
        "Upsample.nearest-exact",
        lambda nn: nn.Upsample(scale_factor=1.7, mode="nearest-exact"),
        (_x(1, 2, 5, 3),),
    ),
    Case(
        "Upsample.linear", lambda nn: nn.Upsample(scale_factor=2.5, mode="linear"), (_x(2, 2, 4),)
    ),
    Case(
        "Upsample.linear.align",
        lambda nn: nn.Upsample(size=7, mode="linear", align_corners=True),
        (_x(2, 2, 4),),
    ),
    Case(
        "Upsample.bilinear",
        lambda nn: nn.Upsample(scale_factor=1.7, mode="bilinear"),
        (_x(1, 2, 4, 5),),
    ),
    Case(
        "Upsample.bilinear.recompute",
        lambda nn: nn.Upsample(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
        (_x(1, 2, 4, 5),),
    ),
    Case(
        "Upsample.bilinear.align.down",
        lambda nn: nn.Upsample(size=(3, 2), mode="bilinear", align_corners=True),
        (_x(1, 2, 5, 5),),
    ),
    Case(
        "Upsample.bicubic",
        lambda nn: nn.Upsample(scale_factor=(2, 1.5), mode="bicubic"),
        (_x(1, 2, 3, 4),),
    ),
    Case(
        "Upsample.bicubic.align",
        lambda nn: nn.Upsample(size=(6, 5), mode="bicubic", align_corners=True),
        (_x(1, 2, 4, 3),),
    ),
    Case(
        "Upsample.trilinear",
        lambda nn: nn.Upsample(scale_factor=2, mode="trilinear"),
        (_x(1, 2, 2, 3, 2),),
    ),
    Case(
        "Upsample.trilinear.align.recompute",
        lambda nn: nn.Upsample(
            scale_factor=1.5, mode="trilinear", align_corners=True, recompute_scale_factor=True
        ),
        (_x(1, 1, 3, 3, 2),),
    ),
    Case("Upsample.area", lambda nn: nn.Upsample(size=(3, 2), mode="area"), (_x(2, 2, 7, 5),)),
    Case(
        "Upsample.area.scale",
        lambda nn: nn.Upsample(scale_factor=0.6, mode="area"),
        (_x(1, 2, 5, 6),),
    ),
    Case(
        "UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(scale_factor=2), (_x(1, 2, 3, 3),)
    ),
    Case(
        "UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(size=(5, 4)), (_x(1, 2, 3, 3),)
    ),
    Case("PixelShuffle", lambda nn: nn.PixelShuffle(2), (_x(2, 8, 3, 2),)),
    Case("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(2), (_x(2, 2, 4, 6),)),
    Case("PixelShuffle.unbatched", lambda nn: nn.PixelShuffle(3), (_x(9, 2, 2),)),
    Case("ChannelShuffle", lambda nn: nn.ChannelShuffle(3), (_x(2, 6, 2, 2),)),
    Case("Unfold", lambda nn: nn.Unfold(2), (_x(2, 3, 4, 4),)),
    Case(
        "Unfold.args",
        lambda nn: nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=2),
        (_x(1, 2, 5, 6),),
    ),
    Case("Fold", lambda nn: nn.Fold((4, 5), 2), (_x(2, 12, 12),)),
    Case(
        "Fold.args",
        lambda nn: nn.Fold(
            output_size=(5, 6), kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=2
        ),
        (_x(1, 12, 6),),
    ),
]

PAD = [
    Case("ConstantPad1d", lambda nn: nn.ConstantPad1d(2, 3.5), (_x(2, 3, 4),)),
    Case("ConstantPad1d.tuple", lambda nn: nn.ConstantPad1d((1, -1), -1.0), (_x(3, 4),)),
    Case("ConstantPad2d", lambda nn: nn.ConstantPad2d((1, 0, 2, 3), 0.5), (_x(2, 2, 3, 3),)),
    Case("ConstantPad3d", lambda nn: nn.ConstantPad3d(1, 2.0), (_x(1, 2, 2, 3, 2),)),
    Case("ZeroPad1d", lambda nn: nn.ZeroPad1d((2, 1)), (_x(2, 3, 4),)),
    Case("ZeroPad2d", lambda nn: nn.ZeroPad2d(1), (_x(2, 2, 3, 3),)),
    Case("ZeroPad2d.negative", lambda nn: nn.ZeroPad2d((-1, 1, 0, -1)), (_x(1, 2, 3, 4),)),
    Case("ZeroPad3d", lambda nn: nn.ZeroPad3d((1, 0, 0, 1, 1, 1)), (_x(1, 2, 2, 2, 3),)),
    Case("ReflectionPad1d", lambda nn: nn.ReflectionPad1d((3, 1)), (_x(2, 3, 5),)),
    Case("ReflectionPad2d", lambda nn: nn.ReflectionPad2d(2), (_x(2, 2, 4, 3),)),
    Case("ReflectionPad2d.unbatched", lambda nn: nn.ReflectionPad2d((1, 0, 2, 1)), (_x(2, 4, 3),)),
    Case(
        "ReflectionPad3d", lambda nn: nn.ReflectionPad3d((1, 1, 2, 0, 1, 2)), (_x(1, 2, 3, 3, 3),)
    ),
    Case("ReplicationPad1d", lambda nn: nn.ReplicationPad1d((3, 1)), (_x(2, 3, 4),)),
    Case("ReplicationPad2d", lambda nn: nn.ReplicationPad2d((1, 2, 0, 3)), (_x(2, 2, 3, 3),)),
    Case("ReplicationPad3d", lambda nn: nn.ReplicationPad3d(1), (_x(1, 2, 2, 3, 2),)),
    Case("CircularPad1d", lambda nn: nn.CircularPad1d((2, 1)), (_x(2, 3, 4),)),
    Case("CircularPad2d", lambda nn: nn.CircularPad2d(1), (_x(2, 2, 3, 3),)),
    Case("CircularPad3d", lambda nn: nn.CircularPad3d((1, 0, 2, 1, 0, 1)), (_x(1, 2, 3, 3, 2),)),
]

CASES = CONV + POOL + RESAMPLE + PAD


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_module_parity(case):
    err = check(case)
    assert err is None, err


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize(
    "kwargs",
    [dict(size=(3, 7)), dict(scale_factor=(0.45, 1.6)), dict(size=(4, 5), align_corners=True)],
    ids=["size", "scale", "align"],
)
def test_interpolate_antialias(mode, kwargs):
    """F.interpolate(antialias=True) values and input gradients (no module exposes it)."""
    x = _x(2, 2, 9, 6)
    w = _x(*torch.nn.functional.interpolate(torch.tensor(x), mode=mode, **kwargs).shape)
    results = []
    for lib in (torch, jtorch):
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.interpolate(t, mode=mode, antialias=True, **kwargs)
        (out * lib.tensor(w)).sum().backward()
        results.append((out.detach().numpy(), t.grad.numpy()))
    (to, tg), (jo, jg) = results
    np.testing.assert_allclose(jo, to, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jg, tg, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize(
    "k, s, p, d, ceil", [(2, 2, 0, 1, False), (3, 2, 1, 1, True), (3, 1, 1, 2, False)]
)
def test_max_pool_gradient_ties_and_nan(nd, k, s, p, d, ceil):
    # Ties (after rounding) and NaNs: the gradient goes where PyTorch's kernel sends it.
    shape = (2, 2) + (7, 6, 5)[:nd]
    x = np.round(_rng.standard_normal(shape)).clip(-1, 1).astype(np.float32)
    x[0, 0][_rng.random(shape[2:]) < 0.3] = np.nan
    grads = []
    for lib in (torch, jtorch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, f"max_pool{nd}d")(t, k, s, p, d, ceil)
        w = lib.tensor(np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape)))
        (y * w).sum().backward()  # (NaN, but each window still passes its weight on)
        grads.append((y.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


@pytest.mark.parametrize(
    "fn, args",
    [
        ("max_pool1d", (3, 1, 1)),
        ("max_pool2d", (3, 2, 1, 1, True)),
        ("max_pool3d", (2, 1, 0, 2)),
        ("adaptive_max_pool2d", (3,)),
    ],
)
def test_max_pool_indices_with_ties_and_nan(fn, args):
    # A window with NaNs returns the index of its last NaN, as PyTorch's loop keeps it.
    nd = int(fn[-2])
    shape = (2, 2) + (7, 6, 5)[:nd]
    x = np.round(_rng.standard_normal(shape)).clip(-1, 1).astype(np.float32)
    x[0][_rng.random(shape[1:]) < 0.4] = np.nan
    results = []
    for lib in (torch, jtorch):
        y, i = getattr(lib.nn.functional, fn)(lib.tensor(x), *args, return_indices=True)
        results.append((y.numpy(), i.numpy(), str(i.dtype)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]
