"""interpolate, grid_sample, affine_grid and the shuffles, against hand-computed values."""

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F


def t(a):
    return jtorch.from_numpy(np.asarray(a, np.float32))


ROW = t([[[0.0, 1.0, 2.0, 3.0]]])


def test_interpolate_nearest_and_linear():
    np.testing.assert_array_equal(
        F.interpolate(ROW, scale_factor=2).numpy()[0, 0], [0, 0, 1, 1, 2, 2, 3, 3]
    )
    np.testing.assert_array_equal(F.interpolate(ROW, size=3).numpy()[0, 0], [0, 1, 2])
    np.testing.assert_array_equal(
        F.interpolate(ROW, size=3, mode="nearest-exact").numpy()[0, 0], [0, 2, 3]
    )  # floor((dst + 0.5) * 4 / 3)
    lin = F.interpolate(ROW, size=8, mode="linear").numpy()[0, 0]
    # align_corners=False: src = (dst + 0.5) / 2 - 0.5, clamped at 0.
    np.testing.assert_allclose(lin, [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3])
    ac = F.interpolate(ROW, size=7, mode="linear", align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(ac, np.linspace(0, 3, 7), rtol=1e-6)


def test_interpolate_bilinear_bicubic_area():
    img = t(np.arange(16).reshape(1, 1, 4, 4))
    bl = F.interpolate(img, size=(7, 7), mode="bilinear", align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(
        bl, np.add.outer(np.linspace(0, 12, 7), np.linspace(0, 3, 7)), rtol=1e-5, atol=1e-5
    )
    # Bicubic interpolation reproduces a linear ramp exactly away from the borders.
    bc = F.interpolate(img, size=(7, 7), mode="bicubic", align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(bc[2:5, 2:5], bl[2:5, 2:5], atol=1e-4)
    area = F.interpolate(img, size=(2, 2), mode="area").numpy()[0, 0]
    np.testing.assert_allclose(area, [[2.5, 4.5], [10.5, 12.5]])
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(img, size=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D"):
        F.interpolate(img, size=2, mode="linear")


def test_grid_sample_identity_and_padding():
    img = t(np.arange(12).reshape(1, 1, 3, 4))
    theta = t([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = F.affine_grid(theta, (1, 1, 3, 4), align_corners=False)
    assert tuple(grid.shape) == (1, 3, 4, 2)
    np.testing.assert_allclose(grid.numpy()[0, 0, :, 0], [-0.75, -0.25, 0.25, 0.75], rtol=1e-6)
    for mode in ("bilinear", "nearest", "bicubic"):
        out = F.grid_sample(img, grid, mode=mode, align_corners=False).numpy()
        np.testing.assert_allclose(out, img.numpy(), atol=1e-5)
    far = t(np.full((1, 1, 1, 2), 5.0))
    assert F.grid_sample(img, far, align_corners=True).numpy().item() == 0.0
    assert F.grid_sample(img, far, padding_mode="border", align_corners=True).numpy().item() == 11


def test_shuffles():
    x = jtorch.arange(16.0).reshape(1, 4, 2, 2)
    ps = F.pixel_shuffle(x, 2)
    assert tuple(ps.shape) == (1, 1, 4, 4)
    np.testing.assert_array_equal(ps.numpy()[0, 0, 0], [0, 4, 1, 5])
    np.testing.assert_array_equal(F.pixel_unshuffle(ps, 2).numpy(), x.numpy())
    cs = F.channel_shuffle(x, 2).numpy()
    np.testing.assert_array_equal(cs[0, :, 0, 0], [0, 8, 4, 12])
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(x, 3)


def test_grid_sampler_identity_and_upsample():
    x = jtorch.arange(12.0).reshape(1, 1, 3, 4)
    ys, xs = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(-1, 1, 4), indexing="ij")
    grid = jtorch.from_numpy(np.stack([xs, ys], -1)[None].astype(np.float32))
    # bilinear (mode 0), zeros padding (0), align_corners: the identity grid samples x itself
    out = jtorch.grid_sampler(x, grid, 0, 0, True)
    np.testing.assert_allclose(np.asarray(out), np.asarray(x), atol=1e-5)
    up = F.upsample(jtorch.tensor([[[1.0, 2.0]]]), scale_factor=2, mode="nearest")
    assert up.tolist() == [[[1.0, 1.0, 2.0, 2.0]]]
