"""Resampling: `interpolate` (+ deprecated `upsample*`), `grid_sample`, `affine_grid`, shuffles.

Source indices and weights are computed the way PyTorch's CPU kernels compute them (same
formulas, same float precision: nearest in float32, linear/cubic in the op-math type), as
static numpy arrays; the kernels then gather and blend along one dimension at a time.
"""

import jax
import jax.numpy as jnp
import numpy as np

from .._registry import NONE, T, composite, op
from .pooling import adaptive_avg

_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) bicubic constant


def _opmath(dtype):
    return np.float64 if dtype == jnp.float64 else np.float32


def _scale(in_size, out_size, align_corners, scale, dt):
    """area_pixel_compute_scale: the source step per output index."""
    if align_corners:
        return dt(in_size - 1) / dt(out_size - 1) if out_size > 1 else dt(0)
    if scale is not None and scale > 0:
        return dt(1.0 / scale)
    return dt(in_size) / dt(out_size)


def _nearest_index(in_size, out_size, scale, exact):
    if not exact and out_size == in_size:
        return np.arange(out_size)
    if not exact and out_size == 2 * in_size:
        return np.arange(out_size) >> 1
    s = (
        np.float32(1.0 / scale)
        if scale is not None and scale > 0
        else (np.float32(in_size) / np.float32(out_size))
    )
    dst = np.arange(out_size)
    if exact:
        # (dst + 0.5) * scale is computed in double, then floorf rounds it to float first.
        src = np.floor(((dst + 0.5) * np.float64(s)).astype(np.float32))
    else:
        src = np.floor(dst.astype(np.float32) * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def _source(in_size, out_size, align_corners, scale, dt, cubic):
    """(floor index, fraction) per output index, as guard_index_and_lambda computes them."""
    s = _scale(in_size, out_size, align_corners, scale, dt)
    dst = np.arange(out_size).astype(dt)
    if align_corners:
        real = s * dst
    else:
        real = s * (dst + dt(0.5)) - dt(0.5)
        if not cubic:
            real = np.maximum(real, dt(0))
    index = np.minimum(np.floor(real).astype(np.int64), in_size - 1)
    lam = np.clip(real - index.astype(dt), dt(0), dt(1)).astype(dt)
    return index, lam


def _cubic_weights(t):
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(mode, in_size, out_size, align_corners, scale, dt):
    """Per output index: a list of (static index array, static weight array or None)."""
    if mode in ("nearest", "nearest-exact"):
        return [(_nearest_index(in_size, out_size, scale, mode == "nearest-exact"), None)]
    if mode == "bicubic":
        index, lam = _source(in_size, out_size, align_corners, scale, dt, cubic=True)
        ws = _cubic_weights(lam)
        return [(np.clip(index - 1 + j, 0, in_size - 1), ws[j].astype(dt)) for j in range(4)]
    index, lam = _source(in_size, out_size, align_corners, scale, dt, cubic=False)
    nxt = np.where(index < in_size - 1, index + 1, index)
    return [(index, (dt(1) - lam).astype(dt)), (nxt, lam)]


def _aa_filter(x, cubic):
    """PyTorch's antialias filters: the triangle, or Keys' cubic with a = -0.5 (PIL's)."""
    x = np.abs(x)
    if not cubic:
        return np.where(x < 1, 1 - x, 0).astype(x.dtype)
    a = -0.5
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0)).astype(x.dtype)


def _aa_taps(mode, in_size, out_size, align_corners, scale, dt):
    """Antialiased taps (PyTorch's CPU kernel, after PIL): when downsampling, the filter's
    support widens by the scale; the weights are normalised to sum to one.

    The float/double mix follows the C++ expressions (double literals promote).
    """
    s = _scale(in_size, out_size, align_corners, scale, dt)
    half = (4 if mode == "bicubic" else 2) * 0.5
    support = dt(half * np.float64(s)) if s >= 1 else dt(half)
    invscale = dt(1.0 / np.float64(s)) if s >= 1 else dt(1)
    width = int(np.ceil(support)) * 2 + 1
    center = (np.float64(s) * (np.arange(out_size) + 0.5)).astype(dt)
    c64, sup64 = center.astype(np.float64), np.float64(support)
    xmin = np.maximum((c64 - sup64 + 0.5).astype(np.int64), 0)
    xsize = np.minimum((c64 + sup64 + 0.5).astype(np.int64), in_size) - xmin
    xsize = np.clip(xsize, 0, width)
    pos = xmin[:, None] + np.arange(width)[None, :]
    arg = ((pos.astype(dt) - center[:, None]).astype(np.float64) + 0.5) * np.float64(invscale)
    w = _aa_filter(arg.astype(dt), mode == "bicubic")
    w = np.where(np.arange(width)[None, :] < xsize[:, None], w, dt(0)).astype(dt)
    total = w.sum(axis=1, keepdims=True, dtype=dt)
    w = np.where(total != 0, w / np.where(total != 0, total, dt(1)), w).astype(dt)
    index = np.minimum(pos, in_size - 1)
    return [(index[:, k], w[:, k]) for k in range(width)]


def _resample(x, axis, taps):
    out = None
    for index, weight in taps:
        v = jnp.take(x, jnp.asarray(index), axis=axis)
        if weight is not None:
            shape = [1] * x.ndim
            shape[axis] = weight.shape[0]
            v = v * jnp.asarray(weight.reshape(shape), x.dtype)
        out = v if out is None else out + v
    return out


_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _interpolate_node(input, mode, antialias) -> str:
    """PyTorch's node of `interpolate`: the upsample kernel of the mode and rank."""
    n = input.ndim - 2
    if mode == "area":  # adaptive average pooling (1-d: the 2-d kernel, then a squeeze)
        return "SqueezeBackward1" if n == 1 else f"AdaptiveAvgPool{n}DBackward0"
    kind = {
        "nearest": "Nearest",
        "nearest-exact": "NearestExact",
        "linear": "Linear",
        "bilinear": "Bilinear",
        "bicubic": "Bicubic",
        "trilinear": "Trilinear",
    }[mode]
    return f"Upsample{kind}{n}D{'Aa' if antialias else ''}Backward0"


@op(name="nn.functional.interpolate", promote=NONE, method=False, out=False, node=_interpolate_node)
def interpolate(
    input: T,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Matches `torch.nn.functional.interpolate`."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating "
                "modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales = None
    if size is not None:
        if isinstance(size, (tuple, list)):
            if len(size) != dim:
                raise ValueError(
                    f"Input and output must have the same number of spatial "
                    f"dimensions, but got input with spatial dimensions of "
                    f"{list(input.shape[2:])} and output size of {list(size)}. "
                    f"Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    f"and output size in (o1, o2, ...,oK) format."
                )
            out = tuple(size)
        else:
            out = (size,) * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (tuple, list)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial "
                    f"dimensions, but got input with spatial dimensions of "
                    f"{list(input.shape[2:])} and scale_factor of shape "
                    f"{list(scale_factor)}. Please provide input tensor in (N, C, "
                    f"d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                    f"format."
                )
            scales = tuple(scale_factor)
        else:
            scales = (scale_factor,) * dim
        out = tuple(int(n * s) for n, s in zip(input.shape[2:], scales))
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        # The kernel then derives the scale from the integer sizes.
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear and bicubic modes and "
            "requires a 4-D tensor as input"
        )
    if mode == "area":
        if not 1 <= dim <= 3:
            raise NotImplementedError(
                f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                f"(got {input.ndim}D) for the modes: nearest | linear | "
                f"bilinear | bicubic | trilinear | area | nearest-exact "
                f"(got {mode})"
            )
        return adaptive_avg(input, dim, out)
    if mode not in ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear"):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.ndim}D) for the modes: nearest | linear | bilinear | "
            f"bicubic | trilinear | area | nearest-exact (got {mode})"
        )
    need = _MODE_DIMS.get(mode)
    if need is not None and need != dim:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {need + 2}D input"
        )
    if not 1 <= dim <= 3:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.ndim}D) for the modes: nearest | linear | bilinear | "
            f"bicubic | trilinear | area | nearest-exact (got {mode})"
        )
    if any(o <= 0 for o in out):
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input "
            f"({', '.join(map(str, input.shape[2:]))}) and output "
            f"({', '.join(map(str, out))})"
        )
    dt = _opmath(input.dtype)
    x = input
    if antialias:
        # Separable passes, the last (contiguous) dim first; unchanged dims are skipped.
        for i in reversed(range(dim)):
            if out[i] != input.shape[2 + i]:
                scale = None if scales is None else scales[i]
                x = _resample(
                    x, 2 + i, _aa_taps(mode, input.shape[2 + i], out[i], align_corners, scale, dt)
                )
        return x.astype(input.dtype)
    for i in range(dim):
        scale = None if scales is None else scales[i]
        x = _resample(x, 2 + i, _taps(mode, input.shape[2 + i], out[i], align_corners, scale, dt))
    return x.astype(input.dtype)


@op(
    name="_upsample_bilinear2d_aa",
    publish=True,
    promote=NONE,
    method=False,
    out=False,
    node="UpsampleBilinear2DAaBackward0",
)
def _upsample_bilinear2d_aa(
    input: T, output_size, align_corners, scales_h=None, scales_w=None, *, scale_factors=None
):
    """Matches `torch.ops.aten._upsample_bilinear2d_aa` (`interpolate(..., antialias=True)`).

    Both aten overloads: (output_size, align_corners, scales_h, scales_w) and `.vec`'s
    (output_size or None, align_corners, scale_factors).
    """
    if input.ndim != 4:
        raise RuntimeError(
            f"It is expected input to be 4D tensor, but got input of size {list(input.shape)}"
        )
    if scale_factors is not None:
        scales = tuple(scale_factors)
    else:
        scales = (scales_h, scales_w)
    if output_size is None:
        if scale_factors is None:
            raise RuntimeError("Must specify exactly one of output_size and scale_factors")
        output_size = tuple(int(n * s) for n, s in zip(input.shape[2:], scales))
    out = tuple(output_size)
    if len(out) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(out)}")
    dt = _opmath(input.dtype)
    x = input
    for i in (1, 0):  # the last (contiguous) dim first, as interpolate's antialias path
        if out[i] != input.shape[2 + i]:
            x = _resample(
                x,
                2 + i,
                _aa_taps(
                    "bilinear", input.shape[2 + i], out[i], bool(align_corners), scales[i], dt
                ),
            )
    return x.astype(input.dtype)


@composite(name="nn.functional.upsample", method=False)
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Matches the deprecated `torch.nn.functional.upsample`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


@composite(name="nn.functional.upsample_nearest", method=False)
def upsample_nearest(input, size=None, scale_factor=None):
    """Matches the deprecated `torch.nn.functional.upsample_nearest`."""
    return interpolate(input, size, scale_factor, mode="nearest")


@composite(name="nn.functional.upsample_bilinear", method=False)
def upsample_bilinear(input, size=None, scale_factor=None):
    """Matches the deprecated `torch.nn.functional.upsample_bilinear` (align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------------------
# grid_sample


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return jnp.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    coord = jnp.abs(coord - low)
    extra = jnp.fmod(coord, span)
    flips = jnp.floor(coord / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + low, span - extra + low)


def _apply_padding(coord, size, padding_mode, align_corners):
    """compute_coordinates: border clips, reflection reflects then clips."""
    if padding_mode == "border":
        return jnp.clip(coord, 0, size - 1)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return jnp.clip(coord, 0, size - 1)
    return coord


def _fetch(input, coords):
    """input (N, C, *S) at integer coords (each (N, *O)); zero where out of bounds."""
    spatial = input.shape[2:]
    valid = jnp.ones(coords[0].shape, bool)
    clipped = []
    for c, n in zip(coords, spatial):
        valid = valid & (c >= 0) & (c < n)
        clipped.append(jnp.clip(c, 0, n - 1))
    batch = jnp.arange(input.shape[0]).reshape((-1,) + (1,) * (coords[0].ndim - 1))
    # Advanced indices separated by a slice go first: (N, *O, C).
    v = input[(batch, slice(None)) + tuple(clipped)]
    v = jnp.where(valid[..., None], v, jnp.zeros((), input.dtype))
    return jnp.moveaxis(v, -1, 1)


def _grid_sample(input, grid, mode, padding_mode, align_corners):
    nd = input.ndim - 2
    spatial = input.shape[2:]
    # grid's last dim is (x, y[, z]): reversed relative to the input's spatial dims.
    raw = [grid[..., nd - 1 - i] for i in range(nd)]
    coords = [_unnormalize(c, n, align_corners) for c, n in zip(raw, spatial)]
    if mode == "bicubic":
        base = [jnp.floor(c) for c in coords]
        frac = [c - b for c, b in zip(coords, base)]
        wy, wx = _cubic_weights(frac[0]), _cubic_weights(frac[1])
        out = None
        for i in range(4):
            for j in range(4):
                y = _apply_padding(base[0] - 1 + i, spatial[0], padding_mode, align_corners)
                x = _apply_padding(base[1] - 1 + j, spatial[1], padding_mode, align_corners)
                v = _fetch(input, [y.astype(jnp.int64), x.astype(jnp.int64)])
                term = v * (wy[i] * wx[j])[:, None]
                out = term if out is None else out + term
        return out
    coords = [_apply_padding(c, n, padding_mode, align_corners) for c, n in zip(coords, spatial)]
    if mode == "nearest":
        # nearbyint: round half to even.
        return _fetch(input, [jnp.round(c).astype(jnp.int64) for c in coords])
    lo = [jnp.floor(c) for c in coords]
    out = None
    for corner in range(2**nd):
        idx, w = [], None
        for i in range(nd):
            hi = (corner >> (nd - 1 - i)) & 1
            pos = lo[i] + hi
            wi = (coords[i] - lo[i]) if hi else (lo[i] + 1 - coords[i])
            w = wi if w is None else w * wi
            idx.append(pos.astype(jnp.int64))
        term = _fetch(input, idx) * w[:, None]
        out = term if out is None else out + term
    return out


_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _check_grid(input, grid, mode, name):
    if input.ndim not in (4, 5):
        raise RuntimeError(
            f"{name}(): expected 4D or 5D input and grid with same number of "
            f"dimensions, but got input with sizes {list(input.shape)} and grid "
            f"with sizes {list(grid.shape)}"
        )
    if grid.ndim != input.ndim or grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(
            f"{name}(): expected grid to have size {input.ndim - 2} in last "
            f"dimension, but got grid with sizes {list(grid.shape)}"
        )
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(
            f"{name}(): expected grid and input to have same batch size, but got "
            f"input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}"
        )
    if input.dtype != grid.dtype:
        raise RuntimeError(
            f"{name}(): expected input and grid to have same dtype, but input has "
            f"{input.dtype} and grid has {grid.dtype}"
        )
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError(f"{name}(): bicubic interpolation only supports 4D input")


@op(
    name="nn.functional.grid_sample",
    promote=NONE,
    method=False,
    out=False,
    node=lambda input: f"GridSampler{input.ndim - 2}DBackward0",
)
def grid_sample(input: T, grid: T, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Matches `torch.nn.functional.grid_sample`."""
    if mode not in _MODES:
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
            f"'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _PADDINGS:
        raise ValueError(
            f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
            f"'border', or 'reflection', but got: '{padding_mode}'"
        )
    _check_grid(input, grid, mode, "grid_sampler")
    return _grid_sample(input, grid, mode, padding_mode, bool(align_corners))


@op(name="grid_sampler", promote=NONE, method=False, out=False)
def grid_sampler(input: T, grid: T, interpolation_mode, padding_mode, align_corners):
    """Matches `torch.grid_sampler` (modes as integers: 0 bilinear, 1 nearest, 2 bicubic)."""
    _check_grid(input, grid, _MODES[interpolation_mode], "grid_sampler")
    return _grid_sample(
        input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode], align_corners
    )


@op(name="grid_sampler_2d", promote=NONE, method=False, out=False, node="GridSampler2DBackward0")
def grid_sampler_2d(input: T, grid: T, interpolation_mode, padding_mode, align_corners):
    """Matches `torch.grid_sampler_2d`."""
    _check_grid(input, grid, _MODES[interpolation_mode], "grid_sampler_2d")
    return _grid_sample(
        input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode], align_corners
    )


@op(name="grid_sampler_3d", promote=NONE, method=False, out=False, node="GridSampler3DBackward0")
def grid_sampler_3d(input: T, grid: T, interpolation_mode, padding_mode, align_corners):
    """Matches `torch.grid_sampler_3d`."""
    _check_grid(input, grid, _MODES[interpolation_mode], "grid_sampler_3d")
    return _grid_sample(
        input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode], align_corners
    )


def _base_steps(n, align_corners, dtype):
    if n <= 1:
        return jnp.zeros((n,), dtype)
    r = jnp.linspace(-1.0, 1.0, n, dtype=dtype)
    return r if align_corners else r * ((n - 1) / n)


@op(name="nn.functional.affine_grid", promote=NONE, method=False, out=False)
def affine_grid(theta: T, size, align_corners=None):
    """Matches `torch.nn.functional.affine_grid`."""
    if not jnp.issubdtype(theta.dtype, jnp.floating):
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[1:] != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{list(size)}. Got {list(theta.shape)}."
            )
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[1:] != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{list(size)}. Got {list(theta.shape)}."
            )
    else:
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
            f"affine transforms, respectively. Got size {list(size)}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")
    spatial = size[2:]
    steps = [_base_steps(n, bool(align_corners), theta.dtype) for n in spatial]
    # Base grid columns are (x, y[, z], 1): the last spatial dim first.
    mesh = jnp.meshgrid(*steps, indexing="ij")
    cols = [mesh[i] for i in reversed(range(len(spatial)))]
    base = jnp.stack(cols + [jnp.ones(spatial, theta.dtype)], axis=-1)
    flat = base.reshape(-1, base.shape[-1])
    grid = jnp.einsum("pk,njk->npj", flat, theta, precision=jax.lax.Precision.HIGHEST)
    return grid.reshape((size[0],) + spatial + (len(spatial),))


# ---------------------------------------------------------------------------
# Shuffles


@op(
    name="nn.functional.pixel_shuffle",
    aliases=("pixel_shuffle",),
    promote=NONE,
    method=False,
    out=False,
)
def pixel_shuffle(input: T, upscale_factor):
    """Matches `torch.nn.functional.pixel_shuffle`."""
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got "
            f"input with {input.ndim} dimension(s)"
        )
    if upscale_factor <= 0:
        raise RuntimeError(
            f"pixel_shuffle expects a positive upscale_factor, but got {upscale_factor}"
        )
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be "
            f"divisible by the square of upscale_factor, but input.size(-3)={c} "
            f"is not divisible by {r * r}"
        )
    n = len(lead)
    x = input.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


@op(
    name="nn.functional.pixel_unshuffle",
    aliases=("pixel_unshuffle",),
    promote=NONE,
    method=False,
    out=False,
)
def pixel_unshuffle(input: T, downscale_factor):
    """Matches `torch.nn.functional.pixel_unshuffle`."""
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but "
            f"got input with {input.ndim} dimension(s)"
        )
    if downscale_factor <= 0:
        raise RuntimeError(
            f"pixel_unshuffle expects a positive downscale_factor, but got {downscale_factor}"
        )
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height to be divisible by "
            f"downscale_factor, but input.size(-2)={h} is not divisible by {r}"
        )
    if w % r:
        raise RuntimeError(
            f"pixel_unshuffle expects width to be divisible by "
            f"downscale_factor, but input.size(-1)={w} is not divisible by {r}"
        )
    n = len(lead)
    x = input.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


@op(
    name="nn.functional.channel_shuffle",
    aliases=("channel_shuffle", "native_channel_shuffle", "nn.functional.native_channel_shuffle"),
    promote=NONE,
    method=False,
    out=False,
)
def channel_shuffle(input: T, groups):
    """Matches `torch.nn.functional.channel_shuffle`."""
    if input.ndim < 3:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but "
            f"got input with {input.ndim} dimension(s)"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c = input.shape[:2]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = input.shape[2:]
    x = input.reshape((n, groups, c // groups) + rest)
    return jnp.swapaxes(x, 1, 2).reshape(input.shape)
