"""Convolution, pooling, resampling, padding and shuffle layers (expected values from numpy)."""

import math

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn as nn

from .helpers import close, f32, same

_rng = np.random.default_rng(0)


def _x(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _conv2d_ref(x, w, b, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """Direct (N, C, H, W) cross-correlation in float64."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = x[
                    :,
                    g * cg : (g + 1) * cg,
                    i * stride[0] : i * stride[0] + dilation[0] * (kh - 1) + 1 : dilation[0],
                    j * stride[1] : j * stride[1] + dilation[1] * (kw - 1) + 1 : dilation[1],
                ]
                out[:, oc, i, j] = np.sum(patch * w[oc], axis=(1, 2, 3))
    if b is not None:
        out += b[None, :, None, None]
    return out


# ---------------------------------------------------------------------------
# Convolutions


def test_conv2d_matches_direct_convolution():
    m = nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    x = _x(2, 4, 7, 6)
    ref = _conv2d_ref(
        x, m.weight.detach().numpy(), m.bias.detach().numpy(), (2, 1), (1, 2), (1, 2), 2
    )
    close(m(f32(x)), ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls,nd", [(nn.Conv1d, 1), (nn.Conv2d, 2), (nn.Conv3d, 3)])
def test_conv_shapes_and_default_init_bounds(cls, nd):
    m = cls(4, 6, 3, groups=2)
    assert tuple(m.weight.shape) == (6, 2) + (3,) * nd
    assert tuple(m.bias.shape) == (6,)
    bound = 1 / math.sqrt(2 * 3**nd)  # fan_in = in_channels / groups * prod(kernel)
    for p in (m.weight, m.bias):
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound
        assert a.max() - a.min() > bound / 2  # spread over the range, not all zeros
    assert list(m.state_dict()) == ["weight", "bias"]
    assert m.kernel_size == (3,) * nd and m.stride == (1,) * nd and m.padding == (0,) * nd
    assert list(cls(4, 6, 3, bias=False).state_dict()) == ["weight"]
    x = torch.zeros((2, 4) + (5,) * nd)
    assert tuple(m(x).shape) == (2, 6) + (3,) * nd
    assert tuple(m(x[0]).shape) == (6,) + (3,) * nd  # unbatched


def test_conv_transpose_weight_layout_and_shape():
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    assert tuple(m.weight.shape) == (4, 3, 3, 3)
    assert tuple(m(torch.zeros(1, 4, 5, 5)).shape) == (1, 6, 10, 10)
    m3 = nn.ConvTranspose3d(2, 2, 2, stride=2, dilation=2)
    assert tuple(m3(torch.zeros(1, 2, 2, 3, 2)).shape) == (1, 2, 5, 7, 5)


def test_conv_transpose_is_adjoint_of_conv():
    # <conv(x), y> == <x, conv_transpose(y)> for the same weight.
    conv = nn.Conv2d(3, 2, 3, stride=2, padding=1, bias=False)
    tconv = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, bias=False)
    with torch.no_grad():
        tconv.weight.copy_(conv.weight)
    x, y = _x(1, 3, 7, 7), _x(1, 2, 4, 4)
    lhs = float((conv(f32(x)) * f32(y)).sum())
    rhs = float((f32(x) * tconv(f32(y), output_size=[7, 7])).sum())
    assert abs(lhs - rhs) < 1e-4 * max(1.0, abs(lhs))


def test_conv_transpose_output_size():
    m = nn.ConvTranspose1d(2, 2, 3, stride=3)
    x = torch.zeros(1, 2, 4)
    for size in (12, 13, 14):
        assert m(x, output_size=[size]).shape[-1] == size
        assert m(x, output_size=[1, 2, size]).shape[-1] == size
    with pytest.raises(
        ValueError,
        match=r"requested an output size of \[15\], but valid sizes "
        r"range from \[12\] to \[14\]",
    ):
        m(x, output_size=[15])
    with pytest.raises(ValueError, match="output_size must have 1 or 3 elements"):
        m(x, output_size=[1, 12])


@pytest.mark.parametrize(
    "mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")]
)
def test_conv_padding_modes(mode, np_mode):
    # A centred one-hot kernel copies the padded input: the padding itself is visible.
    m = nn.Conv2d(1, 1, (3, 5), padding=(1, 2), padding_mode=mode, bias=False)
    with torch.no_grad():
        m.weight.zero_()
        m.weight[0, 0, 0, 0] = 1.0
    x = _x(1, 1, 4, 5)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode=np_mode)
    same(m(f32(x)), padded[:, :, :4, :5])


def test_conv_same_and_valid_padding():
    m = nn.Conv1d(1, 1, 4, padding="same", dilation=1, bias=False)
    assert m._reversed_padding_repeated_twice == [1, 2]
    assert tuple(m(torch.zeros(2, 1, 7)).shape) == (2, 1, 7)
    m2 = nn.Conv2d(1, 1, 3, padding="same", dilation=(1, 3), padding_mode="circular")
    assert m2._reversed_padding_repeated_twice == [3, 3, 1, 1]
    assert tuple(m2(torch.zeros(1, 1, 5, 7)).shape) == (1, 1, 5, 7)
    assert tuple(nn.Conv1d(1, 1, 3, padding="valid")(torch.zeros(1, 1, 7)).shape) == (1, 1, 5)


def test_conv_reprs():
    assert repr(nn.Conv2d(3, 4, 3)) == "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1))"
    assert repr(
        nn.Conv1d(
            2, 4, 3, stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode="circular"
        )
    ) == (
        "Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), groups=2, "
        "bias=False, padding_mode=circular)"
    )
    assert repr(nn.Conv3d(1, 1, 3, padding="same")) == (
        "Conv3d(1, 1, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=same)"
    )
    assert repr(nn.ConvTranspose2d(2, 2, 3, stride=2, output_padding=1)) == (
        "ConvTranspose2d(2, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"
    )


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(groups=0), "groups must be a positive integer"),
        (dict(groups=4), "in_channels must be divisible by groups"),
        (dict(padding="full"), "Invalid padding string 'full', should be one of"),
        (dict(padding="same", stride=2), "padding='same' is not supported for strided"),
        (dict(padding_mode="wrap"), "padding_mode must be one of"),
    ],
)
def test_conv_constructor_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        nn.Conv2d(6, 4, 3, **kwargs)


def test_conv_constructor_errors_out_channels_and_transpose_mode():
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv1d(4, 3, 1, groups=2)
    with pytest.raises(
        ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'
    ):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")


@pytest.mark.parametrize(
    "lazy,full,shape,weight",
    [
        (nn.LazyConv1d, nn.Conv1d, (2, 3, 5), (4, 3, 2)),
        (nn.LazyConv2d, nn.Conv2d, (3, 4, 4), (4, 3, 2, 2)),
        (nn.LazyConv3d, nn.Conv3d, (1, 3, 3, 3, 3), (4, 3, 2, 2, 2)),
        (nn.LazyConvTranspose1d, nn.ConvTranspose1d, (1, 3, 4), (3, 4, 2)),
        (nn.LazyConvTranspose2d, nn.ConvTranspose2d, (1, 3, 2, 2), (3, 4, 2, 2)),
        (nn.LazyConvTranspose3d, nn.ConvTranspose3d, (3, 2, 2, 2), (3, 4, 2, 2, 2)),
    ],
)
def test_lazy_conv_materialises(lazy, full, shape, weight):
    m = lazy(4, 2)
    assert isinstance(m.weight, nn.UninitializedParameter)
    out = m(torch.zeros(shape))
    assert type(m) is full
    assert m.in_channels == 3 and tuple(m.weight.shape) == weight
    assert tuple(m.bias.shape) == (4,)
    # PyTorch's fan_in reads weight dim 1 (out_channels / groups for a transposed conv).
    bound = 1 / math.sqrt(weight[1] * math.prod(weight[2:]))
    assert float(m.bias.abs().max()) <= bound and float(m.weight.abs().max()) <= bound
    assert out.shape[-(len(weight) - 1)] == 4


def test_lazy_conv_dtype_groups_and_errors():
    m = nn.LazyConv2d(4, 3, groups=2, bias=False, dtype=torch.float64)
    m(torch.zeros(1, 6, 4, 4, dtype=torch.float64))
    assert m.weight.dtype == torch.float64 and tuple(m.weight.shape) == (4, 3, 3, 3)
    assert m.bias is None
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(4, 3, groups=2)(torch.zeros(1, 3, 5))
    with pytest.raises(
        RuntimeError,
        match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
        r"to LazyConv2d",
    ):
        nn.LazyConv2d(4, 3)(torch.zeros(3, 5))


def test_conv_gradients_flow_to_weight_and_bias():
    m = nn.Conv2d(2, 3, 2)
    x = f32(_x(1, 2, 3, 3)).requires_grad_()
    m(x).sum().backward()
    # d(sum)/d bias = number of output positions; d/d weight = sum of the input windows.
    same(m.bias.grad, np.full(3, 4.0, np.float32))
    xs = x.detach().numpy()
    ref = np.stack([xs[0, :, i : i + 2, j : j + 2] for i in range(2) for j in range(2)]).sum(0)
    close(m.weight.grad, np.broadcast_to(ref, (3, 2, 2, 2)), rtol=1e-5, atol=1e-5)
    assert tuple(x.grad.shape) == (1, 2, 3, 3)


# ---------------------------------------------------------------------------
# Pooling


def test_max_pool2d_values_and_indices():
    x = _x(2, 3, 4, 6)
    out, idx = nn.MaxPool2d(2, return_indices=True)(f32(x))
    blocks = x.reshape(2, 3, 2, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 3, 4)
    same(out, blocks.max(-1))
    arg = blocks.argmax(-1)
    rows = np.arange(2)[:, None] * 2 + arg // 2
    cols = np.arange(3)[None, :] * 2 + arg % 2
    same(idx, rows * 6 + cols, torch.int64)
    assert repr(nn.MaxPool2d(2)) == (
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )


def test_max_pool_ceil_mode_and_padding_shapes():
    assert nn.MaxPool1d(2, ceil_mode=True)(torch.zeros(1, 1, 5)).shape[-1] == 3
    assert nn.MaxPool1d(2)(torch.zeros(1, 1, 5)).shape[-1] == 2
    assert tuple(nn.MaxPool3d(3, 2, padding=1, dilation=1)(torch.zeros(1, 1, 5, 6, 7)).shape) == (
        1,
        1,
        3,
        3,
        4,
    )


def test_avg_pool_count_include_pad_and_divisor():
    x = np.ones((1, 1, 3, 3), np.float32)
    with_pad = nn.AvgPool2d(3, stride=1, padding=1)(f32(x))
    close(with_pad[0, 0, 0, 0], 4 / 9)
    without = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)(f32(x))
    same(without, np.ones((1, 1, 3, 3), np.float32))
    div = nn.AvgPool2d(3, stride=1, padding=1, divisor_override=2)(f32(x))
    same(div[0, 0], np.array([[2, 3, 2], [3, 4.5, 3], [2, 3, 2]], np.float32))
    same(
        nn.AvgPool1d(2)(f32(np.arange(6, dtype=np.float32)[None, None])),
        np.array([[[0.5, 2.5, 4.5]]], np.float32),
    )
    m = nn.AvgPool1d(3, padding=1)
    assert m.kernel_size == (3,) and m.stride == (3,) and m.padding == (1,)
    assert repr(m) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(1,))"
    assert repr(nn.AvgPool3d(2)) == "AvgPool3d(kernel_size=2, stride=2, padding=0)"


def test_adaptive_pools():
    x = _x(2, 3, 5, 7)
    close(nn.AdaptiveAvgPool2d(1)(f32(x)), x.mean(axis=(2, 3), keepdims=True))
    same(nn.AdaptiveMaxPool2d((1, None))(f32(x)), x.max(axis=2, keepdims=True))
    out, idx = nn.AdaptiveMaxPool1d(1, return_indices=True)(f32(x[0]))
    same(idx, x[0].argmax(-1)[..., None])
    # Windows [floor(i*n/o), ceil((i+1)*n/o)): 5 -> 3 covers [0,2), [1,4), [3,5).
    y = np.arange(5, dtype=np.float32)[None, None]
    close(nn.AdaptiveAvgPool1d(3)(f32(y)), [[[0.5, 2.0, 3.5]]])
    assert tuple(nn.AdaptiveAvgPool3d((2, None, 1))(torch.zeros(1, 4, 5, 6)).shape) == (1, 2, 5, 1)
    assert repr(nn.AdaptiveAvgPool2d((None, 3))) == "AdaptiveAvgPool2d(output_size=(None, 3))"


def test_lp_pool():
    x = _x(1, 2, 6)
    ref = np.sqrt((x.reshape(1, 2, 3, 2) ** 2).sum(-1))
    close(nn.LPPool1d(2, 2)(f32(x)), ref, rtol=1e-5, atol=1e-6)
    y = np.abs(_x(1, 1, 4, 4)) + 0.1
    ref2 = (y.reshape(1, 1, 2, 2, 2, 2) ** 3).sum((3, 5)) ** (1 / 3)
    close(nn.LPPool2d(3, 2)(f32(y)), ref2, rtol=1e-5, atol=1e-6)
    assert (
        repr(nn.LPPool2d(2, 3)) == "LPPool2d(norm_type=2, kernel_size=3, stride=None, "
        "ceil_mode=False)"
    )


def test_max_unpool_roundtrip():
    x = _x(1, 2, 4, 4)
    pool = nn.MaxPool2d(2, return_indices=True)
    unpool = nn.MaxUnpool2d(2)
    out, idx = pool(f32(x))
    back = unpool(out, idx).numpy()
    keep = back != 0
    same(f32(back[keep]), x[keep])
    assert keep.sum() == 8
    assert tuple(unpool(out, idx, output_size=[5, 5]).shape) == (1, 2, 5, 5)
    assert (
        repr(nn.MaxUnpool3d(2)) == "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), "
        "padding=(0, 0, 0))"
    )
    one, i1 = nn.MaxPool1d(2, return_indices=True)(f32(x[0, :, 0]))
    assert tuple(nn.MaxUnpool1d(2)(one, i1).shape) == (2, 4)


def test_fractional_max_pool():
    x = _x(2, 3, 9, 8)
    m = nn.FractionalMaxPool2d(2, output_size=(4, 5))
    assert list(m.state_dict()) == []  # a None buffer is not saved
    out = m(f32(x))
    assert tuple(out.shape) == (2, 3, 4, 5)
    # Every output is the maximum of some 2x2 window of its plane.
    windows = np.lib.stride_tricks.sliding_window_view(x, (2, 2), axis=(2, 3)).max((-1, -2))
    for v, plane in zip(out.numpy().reshape(6, -1), windows.reshape(6, -1)):
        assert np.isin(v, plane).all()
    samples = torch.full((1, 2, 3), 0.5)
    m3 = nn.FractionalMaxPool3d(2, output_ratio=0.5, return_indices=True, _random_samples=samples)
    assert list(m3.state_dict()) == ["_random_samples"]
    out, idx = m3(torch.zeros(1, 2, 6, 6, 8))
    assert tuple(out.shape) == (1, 2, 3, 3, 4) and idx.dtype == torch.int64
    with pytest.raises(ValueError, match="requires specifying either an output size"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)
    with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="kernel_size must be greater than 0, but got 0"):
        nn.FractionalMaxPool3d(0, output_size=2)


# ---------------------------------------------------------------------------
# Resampling, shuffles, fold


def test_upsample_nearest_and_bilinear():
    x = _x(1, 2, 3, 4)
    same(nn.Upsample(scale_factor=2)(f32(x)), x.repeat(2, axis=2).repeat(2, axis=3))
    same(nn.UpsamplingNearest2d(size=(6, 8))(f32(x)), x.repeat(2, axis=2).repeat(2, axis=3))
    up = nn.UpsamplingBilinear2d(size=(5, 7))(f32(x)).detach().numpy()
    # align_corners=True maps output i to input i * (in - 1) / (out - 1): here i / 2.
    close(f32(up[..., ::2, ::2]), x, rtol=1e-5, atol=1e-6)
    close(f32(up[..., 1, 1]), x[..., :2, :2].mean((-1, -2)), rtol=1e-5, atol=1e-6)
    lin = nn.Upsample(size=7, mode="linear", align_corners=True)(f32(x[0])).numpy()
    close(f32(lin[:, :, ::2]), x[0], rtol=1e-5, atol=1e-6)


def test_upsample_area_and_reprs():
    x = _x(1, 1, 4, 6)
    close(
        nn.Upsample(scale_factor=0.5, mode="area")(f32(x)), x.reshape(1, 1, 2, 2, 3, 2).mean((3, 5))
    )
    assert repr(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.Upsample(size=(3, 4), mode="bicubic")) == "Upsample(size=(3, 4), mode='bicubic')"
    assert (
        repr(nn.UpsamplingBilinear2d(scale_factor=(2, 3)))
        == "UpsamplingBilinear2d(scale_factor=(2.0, 3.0), mode='bilinear')"
    )
    assert nn.UpsamplingBilinear2d(4).align_corners is True


def test_interpolate_antialias_triangle_filter():
    # Downsampling by 2 with antialias: the triangle filter widens to 4 taps,
    # weights (1, 3, 3, 1) / 8 around each interior output.
    x = _x(1, 1, 1, 10)
    out = nn.functional.interpolate(f32(x), size=(1, 5), mode="bilinear", antialias=True)
    v = x[0, 0, 0]
    ref = [(v[2 * i - 1] + 3 * v[2 * i] + 3 * v[2 * i + 1] + v[2 * i + 2]) / 8 for i in range(1, 4)]
    close(out[0, 0, 0, 1:4], ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(
        ValueError, match="Anti-alias option is restricted to bilinear and bicubic modes"
    ):
        nn.functional.interpolate(torch.zeros(1, 1, 4), size=2, mode="linear", antialias=True)


def test_pixel_and_channel_shuffle():
    x = _x(2, 8, 3, 2)
    up = nn.PixelShuffle(2)(f32(x))
    ref = x.reshape(2, 2, 2, 2, 3, 2).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 4)
    same(up, ref)
    same(nn.PixelUnshuffle(2)(up), x)
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"
    y = np.arange(6, dtype=np.float32).reshape(1, 6, 1, 1)
    same(nn.ChannelShuffle(2)(f32(y)).flatten(), [0, 3, 1, 4, 2, 5])
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"


def test_fold_unfold():
    x = _x(2, 3, 4, 6)
    cols = nn.Unfold(2, stride=2)(f32(x))
    assert tuple(cols.shape) == (2, 12, 6)
    same(nn.Fold((4, 6), 2, stride=2)(cols), x)
    # Overlapping blocks are summed: folding unfolded ones counts the windows per pixel.
    ones = torch.ones(1, 1, 3, 3)
    counts = nn.Fold((3, 3), 2)(nn.Unfold(2)(ones))
    same(counts[0, 0], np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32))
    assert repr(nn.Unfold(2)) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)"
    assert repr(nn.Fold(3, 2)) == (
        "Fold(output_size=3, kernel_size=2, dilation=1, padding=0, stride=1)"
    )


# ---------------------------------------------------------------------------
# Padding


@pytest.mark.parametrize(
    "cls,np_mode",
    [
        ("ReflectionPad", "reflect"),
        ("ReplicationPad", "edge"),
        ("CircularPad", "wrap"),
        ("ZeroPad", "constant"),
    ],
)
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_padding_layers(cls, np_mode, nd):
    pads = (2, 1, 0, 1, 1, 2)[: 2 * nd]
    x = _x(*((2, 3) + (3,) * nd))
    m = getattr(nn, f"{cls}{nd}d")(pads)
    np_pads = [(0, 0), (0, 0)] + [(pads[2 * i], pads[2 * i + 1]) for i in reversed(range(nd))]
    same(m(f32(x)), np.pad(x, np_pads, mode=np_mode))
    same(m(f32(x[0])), np.pad(x[0], np_pads[1:], mode=np_mode))  # unbatched
    assert m.padding == pads
    assert repr(m) == f"{cls}{nd}d({pads})"
    assert getattr(nn, f"{cls}{nd}d")(1).padding == (1,) * (2 * nd)


def test_constant_pad_value_negative_and_repr():
    x = _x(1, 2, 3)
    m = nn.ConstantPad1d((1, -1), 3.5)
    same(m(f32(x)), np.concatenate([np.full((1, 2, 1), 3.5, np.float32), x[..., :-1]], -1))
    assert repr(m) == "ConstantPad1d(padding=(1, -1), value=3.5)"
    assert repr(nn.ConstantPad3d(1, 0)) == "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=0)"
    assert isinstance(nn.ZeroPad2d(1), nn.ConstantPad2d)
    assert nn.ZeroPad2d(1).value == 0.0


def test_circular_pad_rejects_wrong_rank():
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(torch.zeros(3, 3))
