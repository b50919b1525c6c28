"""Random sampling: `rand`, `randn`, `randint`, `normal`, `bernoulli`, ... and the in-place
`Tensor.uniform_`-style samplers.

Every draw takes a fresh jax key from the generator (`_random.key_for`) and
passes it to a compiled kernel as a tensor argument, so a kernel is compiled
once per (distribution, shape, dtype) and never per draw. PyTorch's bit
streams are not reproduced; the same seed gives the same numbers.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _meta, _programs, _threefry
from .._dtype import c10_name
from .._random import key_for
from .._tensor import Tensor, wrap
from ._registry import NONE, TI, broadcast_error, composite, kernel, op
from .creation import COMPILE_AFTER, check_size, finish
from .views import shape_arg


def _not_implemented(kernel: str, dt: _dtype.dtype):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{c10_name(dt)}'")


# ---------------------------------------------------------------------------
# The kernel: one compiled draw per (distribution, shape, dtype).


def _real_draw(key, kind, a, b, shape, np_dtype, bits=None):
    """A draw of real numbers (or integers for "randint") from the distribution `kind`; from
    `bits` (jax's random bits for `key`, made on the host by `_threefry`) where given."""
    f = jnp.float64 if np_dtype == jnp.float64 else jnp.float32
    if kind == "randint":
        # Bounds arrive as int64; the draw is made in int64 and cast, as PyTorch does.
        return jax.random.randint(key, shape, a, b, jnp.int64).astype(np_dtype)
    if kind in ("normal", "log_normal"):
        normal = jax.random.normal(key, shape, f) if bits is None else _normal_of(bits, f)
        z = a + b * normal
        return (jnp.exp(z) if kind == "log_normal" else z).astype(np_dtype)
    u = jax.random.uniform(key, shape, f) if bits is None else _uniform_of(bits, f, 0.0, 1.0)
    if kind == "uniform":
        x = (a + (b - a) * u).astype(np_dtype)
        # Rounding to a narrow dtype may land on `to`; PyTorch's range is [from, to).
        return jnp.where(x >= jnp.asarray(b, np_dtype), jnp.asarray(a, np_dtype), x)
    if kind == "bernoulli":
        return (u < a).astype(np_dtype)
    if kind == "exponential":
        return (-jnp.log1p(-u) / a).astype(np_dtype)
    if kind == "geometric":
        # The number of Bernoulli(p) trials up to and including the first success (>= 1).
        return jnp.maximum(jnp.ceil(jnp.log1p(-u) / jnp.log1p(-a)), 1).astype(np_dtype)
    if kind == "cauchy":
        return (a + b * jnp.tan(math.pi * (u - 0.5))).astype(np_dtype)
    raise ValueError(kind)


def _uniform_of(bits, f, low, high):
    """`jax.random.uniform(key, bits.shape, f, low, high)` from its random bits: jax's steps,
    so the numbers are the same: the mantissa's bits under an exponent of 1, minus 1, scaled."""
    low = jax.lax.broadcast_to_rank(jax.lax.convert_element_type(low, f), bits.ndim)
    high = jax.lax.broadcast_to_rank(jax.lax.convert_element_type(high, f), bits.ndim)
    info = jnp.finfo(f)
    mantissa = jax.lax.shift_right_logical(bits, jnp.array(info.bits - info.nmant, bits.dtype))
    one = jnp.asarray(np.array(1.0, f).view(bits.dtype), dtype=bits.dtype)
    floats = jax.lax.bitcast_convert_type(jax.lax.bitwise_or(mantissa, one), f) - jnp.array(1.0, f)
    return jax.lax.max(low, floats * (high - low) + low)


def _normal_of(bits, f):
    """`jax.random.normal(key, bits.shape, f)` from its random bits (jax's steps)."""
    low = np.nextafter(np.array(-1.0, f), np.array(0.0, f), dtype=f)
    u = _uniform_of(bits, f, low, np.array(1.0, f))
    return jax.lax.mul(np.array(np.sqrt(2), f), jax.lax.erf_inv(u))


@op(promote=NONE, method=False, out=False, differentiable=False)
def _random_of_bits(bits: TI, a: TI, b: TI, kind, dtype):
    """`_random_draw` of a real `dtype` from the random bits of its key (`_threefry`): the
    same numbers, without the threefry hash in the program (~100 ms less to compile)."""
    return _real_draw(None, kind, a, b, bits.shape, dtype.np, bits=bits)


@op(promote=NONE, method=False, out=False, differentiable=False)
def _random_draw(key: TI, a: TI, b: TI, kind, shape, dtype):
    """Samples of `kind` with parameters `a`, `b` (broadcast to `shape`) in `dtype`."""
    np_dtype = dtype.np
    if dtype.is_complex:
        # Complex draws: independent real and imaginary parts; normal ones share the
        # variance between them as PyTorch does (each part has variance 1/2).
        real = dtype.to_real().np
        k1, k2 = jax.random.split(key)
        if kind == "normal":
            b = b / math.sqrt(2)
        re = _real_draw(k1, kind, a, b, shape, real)
        im = _real_draw(k2, kind, a, b, shape, real)
        return jax.lax.complex(re, im).astype(np_dtype)
    return _real_draw(key, kind, a, b, shape, np_dtype)


_draw_seen = _programs.Sightings()


def _draw(kind, shape, dtype, a=0.0, b=1.0, generator=None) -> Tensor:
    """A draw of `kind` with scalar parameters `a`, `b`.

    jax's counter-based keys give element i of a draw the same value whatever the draw's
    size (`jax_threefry_partitionable`), so a size seen for the first time is cut from a
    draw of the next power-of-two size (at least `_BUCKET_MIN`) on the host: a handful of
    programs serve every size (DESIGN 13), and a size that keeps coming back gets its own
    program, with the same numbers.
    """
    key = key_for(generator)
    shape = tuple(shape)
    n = math.prod(shape)
    if (
        _programs.tracing()
        or not 0 < n <= _BUCKET_MAX
        or not _PREFIX_STABLE
        or _draw_seen.note((kind, shape, dtype)) >= COMPILE_AFTER
    ):
        out = _random_draw(key, a, b, kind, shape, dtype)._array
    else:
        bucket = max(_BUCKET_MIN, 1 << (n - 1).bit_length())
        if _host_bits(key, kind, dtype, bucket):
            width = 64 if dtype.np == np.float64 else 32
            bits = np.zeros(bucket, f"uint{width}")  # (the bucket's other numbers are cut)
            bits[:n] = _threefry.bits(np.asarray(key), n, width)
            placed = _programs.to_device(bits, next(iter(key.devices())), committed=False)
            flat = _random_of_bits(placed, a, b, kind, dtype)._array
        else:
            flat = _random_draw(key, a, b, kind, (bucket,), dtype)._array
        cut = np.asarray(flat)[:n].reshape(shape)
        out = _programs.to_device(cut, next(iter(flat.devices())), flat.committed)
    # (committed either way, as factories make: see `_device.commit`)
    return wrap(_device.commit(out))


def _host_bits(key, kind, dtype, bucket: int) -> bool:
    """Whether a bucket's draw takes its random bits from the host (`_threefry`)."""
    return (
        bucket <= _HOST_BITS_MAX
        and kind != "randint"
        and not dtype.is_complex
        and _threefry.usable()
        and next(iter(key.devices())).platform == "cpu"
    )


# Up to this many, a draw's bits are hashed on the host (its own elements only: the rest of
# its bucket is cut): 0.3 ms for 4096, 3 ms for 65536 (1M: 0.1 s, where a compiled draw takes
# milliseconds once compiled).
_HOST_BITS_MAX = 1 << 16


# Every size up to this many elements is cut from one draw of this size: one program per
# (distribution, dtype) makes a model's initialisation (weights and biases of many sizes),
# where each program of its own cost ~0.25 s of XLA, and a draw this size costs no more than
# a tiny one (~0.15 ms, mostly the call).
_BUCKET_MIN = 1 << 12
# Past this many elements a draw's own program costs less than twice the work and a copy.
_BUCKET_MAX = 1 << 22
_PREFIX_STABLE = bool(getattr(jax.config, "jax_threefry_partitionable", False))


def _require_float(kernel: str, dt):
    if not (dt.is_floating_point or dt.is_complex):
        raise _not_implemented(kernel, dt)


def _num(v):
    return v.item() if isinstance(v, Tensor) else v


def _concrete(t: Tensor) -> bool:
    return not _meta.no_values(t._array)


# ---------------------------------------------------------------------------
# Factories


@composite(method=False)
def rand(
    *size,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """Matches `torch.rand`: uniform on [0, 1)."""
    dt = dtype or _dtype.get_default_dtype()
    _require_float("check_uniform_bounds", dt)
    shape = shape_arg(size)
    check_size(shape)
    return finish(
        _draw("uniform", shape, dt, generator=generator)._array, None, device, requires_grad, out
    )


@composite(method=False)
def randn(
    *size,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """Matches `torch.randn`: standard normal."""
    dt = dtype or _dtype.get_default_dtype()
    _require_float("normal_kernel_cpu", dt)
    shape = shape_arg(size)
    check_size(shape)
    return finish(
        _draw("normal", shape, dt, generator=generator)._array, None, device, requires_grad, out
    )


def _check_range(low, high):
    if not low < high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )


def _randint_draw(low, high, shape, dt, generator):
    low, high = int(_num(low)), int(_num(high))
    _check_range(low, high)
    check_size(shape)
    return _draw("randint", shape, dt, np.int64(low), np.int64(high), generator)


@composite(method=False)
def randint(
    *args,
    size=None,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    low=None,
    high=None,
):
    """Matches `torch.randint`: `randint(high, size)` or `randint(low, high, size)`."""
    args = list(args)
    if size is None and args:
        size = args.pop()
    if high is None and args:
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if high is None or size is None:
        raise TypeError("randint() missing required arguments 'high' and 'size'")
    t = _randint_draw(low, high, shape_arg((size,)), dtype or _dtype.int64, generator)
    return finish(t._array, None, device, requires_grad, out)


@op(promote=NONE, method=False, out=False, differentiable=False)
def _permutation(key: TI, n, dtype):
    return jax.random.permutation(key, n).astype(dtype.np)


@composite(method=False)
def randperm(
    n,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """Matches `torch.randperm`: a random permutation of 0..n-1 (int64 by default)."""
    n = int(_num(n))
    check_size((n,))
    t = _permutation(key_for(generator), n, dtype or _dtype.int64)
    return finish(t._array, None, device, requires_grad, out)


def _like(input, dtype, device):
    return dtype or input.dtype, device if device is not None else input.device


@composite(method=False)
def rand_like(
    input,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
):
    dt, dev = _like(input, dtype, device)
    _require_float("check_uniform_bounds", dt)
    return finish(
        _draw("uniform", tuple(input.shape), dt, generator=generator)._array,
        None,
        dev,
        requires_grad,
    )


@composite(method=False)
def randn_like(
    input,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
):
    dt, dev = _like(input, dtype, device)
    _require_float("normal_kernel_cpu", dt)
    return finish(
        _draw("normal", tuple(input.shape), dt, generator=generator)._array,
        None,
        dev,
        requires_grad,
    )


@composite(method=False)
def randint_like(
    input,
    low=0,
    high=None,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
):
    """Matches `torch.randint_like`: `randint_like(input, high)` or `(input, low, high)`."""
    if high is None:
        low, high = 0, low
    dt, dev = _like(input, dtype, device)
    t = _randint_draw(low, high, tuple(input.shape), dt, generator)
    return finish(t._array, None, dev, requires_grad)


# ---------------------------------------------------------------------------
# normal: four overloads


def _check_std(std):
    if isinstance(std, Tensor):
        if std.numel() and _concrete(std) and not bool(jnp.all(std._array >= 0)):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


@composite(method=False)
def normal(
    mean,
    std=1.0,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """Matches `torch.normal`: tensor or float `mean` and `std`, or floats and a `size`."""
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments - got "
                "(float, float), but expected a size"
            )
        _check_std(std)
        dt = dtype or _dtype.get_default_dtype()
        _require_float("normal_kernel_cpu", dt)
        shape = shape_arg((size,))
        check_size(shape)
        t = _draw("normal", shape, dt, float(mean), float(std), generator)
        return finish(t._array, None, device, requires_grad, out)
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = _dtype.promote_types(dt, t.dtype)
    _require_float("normal_kernel_cpu", dt)
    _check_std(std)
    shapes = [tuple(t.shape) for t in tensors]
    if len(shapes) == 2:
        err = broadcast_error(*shapes)
        if err is not None:
            raise err
    shape = tuple(np.broadcast_shapes(*shapes))
    a = mean._array.astype(dt.np) if isinstance(mean, Tensor) else float(mean)
    b = std._array.astype(dt.np) if isinstance(std, Tensor) else float(std)
    like = next(t._array for t in tensors)
    a, b = (_device.place_like(v, like) for v in (a, b))
    t = _random_draw(key_for(generator, like), wrap(a), wrap(b), "normal", shape, dt)
    return finish(t._array, None, None, False, out)


# ---------------------------------------------------------------------------
# bernoulli, multinomial, poisson


def _probabilities(p: Tensor, dt) -> Tensor:
    if _concrete(p) and p.numel() and not bool(jnp.all((p._array >= 0) & (p._array <= 1))):
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
            "this error message be improved?  If so, please report an "
            "enhancement request to PyTorch.)"
        )
    return p


@composite
def bernoulli(input, p=None, *, generator=None, out=None):
    """Matches `torch.bernoulli`: 1 with probability `input` (or `p`), in `input`'s dtype."""
    dt = input.dtype
    if p is None:
        _require_float("bernoulli_tensor_cpu_p_", dt)
        _probabilities(input, dt)
        t = _random_draw(key_for(generator, input), input, 0.0, "bernoulli", tuple(input.shape), dt)
    else:
        t = _bernoulli_scalar(input, p, generator)
    return t if out is None else out.copy_(t)


def _bernoulli_scalar(input, p, generator):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _draw("bernoulli", tuple(input.shape), input.dtype, float(p), 0.0, generator)


@composite(function=False)
def bernoulli_(self, p=0.5, *, generator=None):
    """Matches `torch.Tensor.bernoulli_`: `p` a float or a tensor of probabilities."""
    if isinstance(p, Tensor):
        _probabilities(p, p.dtype)
        probs = p._array.astype(jnp.float64 if p.dtype is _dtype.float64 else jnp.float32)
        t = _random_draw(
            key_for(generator, self),
            wrap(jnp.broadcast_to(probs, tuple(self.shape))),
            0.0,
            "bernoulli",
            tuple(self.shape),
            self.dtype,
        )
    else:
        t = _bernoulli_scalar(self, p, generator)
    return self.copy_(t)


@op(promote=NONE, method=False, out=False, differentiable=False)
def _multinomial_draw(key: TI, probs: TI, num_samples, replacement):
    logits = jnp.log(probs.astype(jnp.float64 if probs.dtype == jnp.float64 else jnp.float32))
    if replacement:
        draws = jax.random.categorical(
            key, logits, axis=-1, shape=(num_samples,) + probs.shape[:-1]
        )
        return jnp.moveaxis(draws, 0, -1).astype(jnp.int64)
    # Without replacement: the Gumbel top-k trick gives distinct, correctly weighted indices.
    g = logits + jax.random.gumbel(key, probs.shape, logits.dtype)
    return jax.lax.top_k(g, num_samples)[1].astype(jnp.int64)


@composite
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Matches `torch.multinomial`: indices drawn by the (unnormalised) row weights."""
    if not (input.dtype.is_floating_point):
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: "
            f"{c10_name(input.dtype)}"
        )
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = input.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if _concrete(input) and input.numel():
        arr = input._array
        if not bool(jnp.all(jnp.isfinite(arr) & (arr >= 0))):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if not bool(jnp.all(jnp.sum(arr, axis=-1) > 0)):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    t = _multinomial_draw(key_for(generator, input), input, int(num_samples), bool(replacement))
    return t if out is None else out.copy_(t)


@op(promote=NONE, method=False, out=False, differentiable=False)
def _poisson_draw(key: TI, rates: TI):
    return jax.random.poisson(key, rates, rates.shape).astype(rates.dtype)


@composite(method=False)
def poisson(input, generator=None):
    """Matches `torch.poisson`: counts drawn with the rates in `input`, in `input`'s dtype."""
    _require_float("poisson_cpu", input.dtype)
    return _poisson_draw(key_for(generator, input), input)


# ---------------------------------------------------------------------------
# In-place samplers


def _fill_with(self: Tensor, kind, a, b, generator) -> Tensor:
    return self.copy_(_draw(kind, tuple(self.shape), self.dtype, a, b, generator))


@composite(function=False)
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Matches `torch.Tensor.uniform_(from=0, to=1)`."""
    from_ = kwargs.pop("from", from_)
    _require_float("check_uniform_bounds", self.dtype)
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}"
        )
    return _fill_with(self, "uniform", float(from_), float(to), generator)


@composite(function=False)
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Matches `torch.Tensor.normal_`."""
    _require_float("normal_kernel_cpu", self.dtype)
    _check_std(std)
    return _fill_with(self, "normal", float(mean), float(std), generator)


@composite(function=False)
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Matches `torch.Tensor.log_normal_`."""
    _require_float("log_normal_cpu", self.dtype)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill_with(self, "log_normal", float(mean), float(std), generator)


@composite(function=False)
def exponential_(self, lambd=1.0, *, generator=None):
    """Matches `torch.Tensor.exponential_`."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. "
            f"dtype must be a floating point but you specified "
            f"{c10_name(self.dtype)}"
        )
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill_with(self, "exponential", float(lambd), 0.0, generator)


@composite(function=False)
def geometric_(self, p, *, generator=None):
    """Matches `torch.Tensor.geometric_`: trials up to the first success, so values >= 1."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _fill_with(self, "geometric", float(p), 0.0, generator)


@composite(function=False)
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Matches `torch.Tensor.cauchy_`."""
    _require_float("cauchy_cpu", self.dtype)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _fill_with(self, "cauchy", float(median), float(sigma), generator)


def _random_bounds(dt):
    """`random_()`'s default range: [0, 2**mantissa] for floats, [0, max] for integers."""
    if dt is _dtype.bool:
        return 0, 2
    if dt.is_floating_point:
        digits = {"float16": 11, "bfloat16": 8, "float32": 24}.get(dt._name, 53)
        return 0, 2**digits + 1
    return 0, int(np.iinfo(dt.np).max) + (0 if dt is _dtype.int64 else 1)


@composite(function=False)
def random_(self, from_=None, to=None, *, generator=None, **kwargs):
    """Matches `torch.Tensor.random_`: `random_()`, `random_(to)`, `random_(from, to)`."""
    from_ = kwargs.pop("from", from_)
    dt = self.dtype
    if from_ is None and to is None:
        low, high = _random_bounds(dt)
    elif to is None:
        low, high = 0, int(from_)
    else:
        low = int(from_)
        high = _random_bounds(dt)[1] if to is None else int(to)
    _check_range(low, high)
    if dt._kind in "iu" and dt is not _dtype.int64:
        info = np.iinfo(dt.np)
        if high - 1 > info.max:
            raise RuntimeError(f"to - 1 is out of bounds for {_np_c_name(dt)}")
        if low < info.min:
            raise RuntimeError(f"from is out of bounds for {_np_c_name(dt)}")
    if dt.is_complex:
        raise _not_implemented("random_from_to_range_cpu", dt)
    # The draw is in int64; the top of int64's range needs one less to stay representable.
    high = min(high, 2**63 - 1)
    return self.copy_(
        _draw("randint", tuple(self.shape), dt, np.int64(low), np.int64(high), generator)
    )


def _np_c_name(dt):
    return {"uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int"}.get(
        dt._name, dt._name
    )


# ---------------------------------------------------------------------------
# Samplers behind torch.distributions: gamma, Dirichlet, binomial


@kernel(name="_standard_gamma", promote=NONE)
def _standard_gamma_draw(key: TI, concentration: TI):
    # jax differentiates the draw implicitly w.r.t. the concentration (the reparameterized
    # gradient PyTorch gets from `_standard_gamma_grad`), so rsample of Gamma, Beta,
    # Dirichlet, Chi2 and StudentT passes gradients to their parameters.
    return jax.random.gamma(key, concentration, concentration.shape, concentration.dtype)


@composite(method=False, publish=True)
def _standard_gamma(input, generator=None):
    """Matches `torch._standard_gamma`: Gamma(input, 1) draws, differentiable in `input`."""
    _require_float("gamma_cpu", input.dtype)
    return _standard_gamma_draw(key_for(generator, input), input)


@kernel(name="_sample_dirichlet", promote=NONE)
def _dirichlet_draw(key: TI, concentration: TI):
    c = concentration
    return jax.random.dirichlet(key, c, c.shape[:-1], c.dtype)


@composite(method=False, publish=True)
def _sample_dirichlet(input, generator=None):
    """Matches `torch._sample_dirichlet`: one Dirichlet draw per row of `input`."""
    _require_float("dirichlet", input.dtype)
    return _dirichlet_draw(key_for(generator, input), input)


@op(promote=NONE, method=False, out=False, differentiable=False)
def _binomial_draw(key: TI, count: TI, prob: TI):
    shape = jnp.broadcast_shapes(count.shape, prob.shape)
    return jax.random.binomial(key, count, prob, shape, count.dtype).astype(count.dtype)


@composite(method=False)
def binomial(count, prob, generator=None):
    """Matches `torch.binomial`: successes in `count` trials of probability `prob`."""
    _require_float("binomial_cpu", count.dtype)
    if prob.dtype != count.dtype:
        raise RuntimeError(
            f"expected scalar type {c10_name(count.dtype)} but found {c10_name(prob.dtype)}"
        )
    return _binomial_draw(key_for(generator, count), count, prob)
