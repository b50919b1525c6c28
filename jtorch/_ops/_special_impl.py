"""jax kernels for the special functions `jax.scipy.special` lacks or gets wrong for PyTorch.

Every function takes and returns jax arrays. The Bessel and Airy kernels
compute in float64 whatever the input dtype, and cast back: their power series
cancel badly in float32.
"""

import functools
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

_EULER = 0.5772156649015329
_F64 = jnp.float64


def _f64(fn):
    """Runs `fn` on float64 and casts the result back to the input's dtype."""

    def wrapped(x):
        return fn(x.astype(_F64)).astype(x.dtype)

    wrapped.__name__ = fn.__name__
    return wrapped


# ---------------------------------------------------------------------------
# Gamma family and zeta


@jax.custom_jvp
def digamma(x):
    # PyTorch: digamma(+-0) is -+inf (jax gives nan).
    inf = jnp.asarray(jnp.inf, x.dtype)
    return jnp.where(x == 0, jnp.where(jnp.signbit(x), inf, -inf), jss.digamma(x))


@digamma.defjvp
def _digamma_jvp(primals, tangents):
    # PyTorch's derivative is its own trigamma (with the reflection for x < 1/2); jax's
    # polygamma(1, x) has no reflection and is wrong for negative x.
    (x,), (t,) = primals, tangents
    return digamma(x), _trigamma(x) * t


def zeta(s, q):
    """Hurwitz zeta with PyTorch's (Cephes') domain, including negative `q` for integer `s`."""
    s, q = jnp.broadcast_arrays(s, q)
    neg = q < 0
    # Shift negative q past zero: zeta(s, q) = sum_{k<m} (q+k)^-s + zeta(s, q+m).
    m = jnp.max(jnp.where(neg, jnp.ceil(-q), 0), initial=0).astype(jnp.int64)
    s_int = s == jnp.floor(s)
    odd = s_int & (jnp.remainder(s, 2) == 1)

    def body(k, acc):
        base = q + k.astype(q.dtype)
        term = jnp.abs(base) ** (-s)
        return acc + jnp.where(base < 0, jnp.where(odd, -term, term), term)

    head = jax.lax.fori_loop(0, m, body, jnp.zeros_like(q))
    shift = jnp.where(neg, m.astype(q.dtype), 0)
    res = jnp.where(neg, head, 0) + jss.zeta(s, q + shift)
    inf = jnp.asarray(jnp.inf, q.dtype)
    nan = jnp.asarray(jnp.nan, q.dtype)
    res = jnp.where(neg & ~s_int, nan, res)
    res = jnp.where((q <= 0) & (q == jnp.floor(q)), inf, res)
    res = jnp.where(s == 1, inf, jnp.where(s < 1, nan, res))
    return res


def _trigamma(x):
    # Reflection for x < 1/2, as PyTorch does, so negative non-integers are right.
    small = x < 0.5
    y = jnp.where(small, 1 - x, x)
    base = jss.zeta(jnp.asarray(2.0, x.dtype), y)
    refl = (math.pi**2) / jnp.sin(math.pi * x) ** 2
    return jnp.where(small, refl - base, base)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def polygamma(n, x):
    if n == 0:
        return digamma(x)
    if n == 1:
        return _trigamma(x)
    sign = -1.0 if n % 2 == 0 else 1.0
    return (sign * math.factorial(n)) * zeta(jnp.asarray(n + 1, x.dtype), x)


@polygamma.defjvp
def _polygamma_jvp(n, primals, tangents):
    # d/dx polygamma(n, x) = polygamma(n + 1, x), PyTorch's formula; differentiating the zeta
    # series instead would go through a loop jax cannot reverse.
    (x,), (t,) = primals, tangents
    return polygamma(n, x), polygamma(n + 1, x) * t


@jax.custom_jvp
def i0(x):
    return jss.i0(x)


@i0.defjvp
def _i0_jvp(primals, tangents):
    # i0' = i1 (PyTorch's formula); jax's rule is off at x = 0, where it gives 1.
    (x,), (t,) = primals, tangents
    return jss.i0(x), jss.i1(x) * t


def mvlgamma(x, p):
    res = sum(jss.gammaln(x - j / 2) for j in range(p))
    return res + p * (p - 1) / 4 * math.log(math.pi)


@jax.custom_jvp
def entr(x):
    zero = jnp.zeros((), x.dtype)
    res = jnp.where(x > 0, -x * jnp.log(jnp.where(x > 0, x, 1)), jnp.where(x == 0, zero, -jnp.inf))
    return jnp.where(jnp.isnan(x), x, res)


@entr.defjvp
def _entr_jvp(primals, tangents):
    # PyTorch's formula everywhere: -(1 + log x), +inf at 0 and nan below (jax's where-guarded
    # forward gives 0 there).
    (x,), (t,) = primals, tangents
    return entr(x), -(1 + jnp.log(x)) * t


@jax.custom_jvp
def lgamma(x):
    return jss.gammaln(x)


@lgamma.defjvp
def _lgamma_jvp(primals, tangents):
    # PyTorch's derivative is its digamma: -inf at 0, where jax's is nan.
    (x,), (t,) = primals, tangents
    return lgamma(x), digamma(x) * t


# ---------------------------------------------------------------------------
# Bessel functions of the first and second kind


def _j_series(x, nu, terms=40):
    """J_nu(x), nu in {0, 1}, by its power series (good for |x| <= 12 in float64)."""
    q = -(x * x) / 4
    term = (x / 2) ** nu
    total = term
    for k in range(1, terms):
        term = term * q / (k * (k + nu))
        total = total + term
    return total


def _hankel(x, nu, terms=24):
    """The asymptotic P, Q of J_nu and Y_nu for large x (error about exp(-2x))."""
    mu = 4.0 * nu * nu
    p = jnp.ones_like(x)
    qsum = jnp.zeros_like(x)
    term = jnp.ones_like(x)
    for k in range(1, terms):
        term = term * (mu - (2 * k - 1) ** 2) / (8.0 * k * x)
        if k % 2:
            qsum = qsum + (term if (k // 2) % 2 == 0 else -term)
        else:
            p = p + (term if (k // 2) % 2 == 0 else -term)
    chi = x - (nu / 2 + 0.25) * math.pi
    amp = jnp.sqrt(2 / (math.pi * x))
    return amp, p, qsum, chi


_SWITCH = 12.0


def _j(x, nu):
    ax = jnp.abs(x)
    small = _j_series(jnp.where(ax <= _SWITCH, ax, 0.0), nu)
    big_x = jnp.where(ax > _SWITCH, ax, _SWITCH + 1)
    amp, p, q, chi = _hankel(big_x, nu)
    big = amp * (p * jnp.cos(chi) - q * jnp.sin(chi))
    res = jnp.where(ax <= _SWITCH, small, big)
    res = jnp.where(jnp.isinf(ax), 0.0, res)
    return jnp.where(x < 0, -res, res) if nu == 1 else res


def _y_series(x, nu, terms=40):
    """Y_nu(x), nu in {0, 1}, by its power series (x > 0, x <= 12)."""
    q = -(x * x) / 4
    log_term = (2 / math.pi) * jnp.log(x / 2)
    if nu == 0:
        term, harmonic, acc = jnp.ones_like(x), 0.0, jnp.zeros_like(x)
        for k in range(1, terms):
            term = term * q / (k * k)
            harmonic += 1.0 / k
            acc = acc - harmonic * term
        return (log_term + 2 * _EULER / math.pi) * _j_series(x, 0) + (2 / math.pi) * acc
    # Y1 = -2/(pi x) + (2/pi) log(x/2) J1 - (1/pi) sum (psi(k+1) + psi(k+2)) (-1)^k
    #      (x/2)^(2k+1) / (k! (k+1)!)
    term = x / 2
    psi_sum = -2 * _EULER + 1.0
    acc = psi_sum * term
    for k in range(1, terms):
        term = term * q / (k * (k + 1))
        psi_sum += 1.0 / k + 1.0 / (k + 1)
        acc = acc + psi_sum * term
    return -2 / (math.pi * x) + log_term * _j_series(x, 1) - acc / math.pi


def _y(x, nu):
    pos = x > 0
    xs = jnp.where(pos & (x <= _SWITCH), x, 1.0)
    small = _y_series(xs, nu)
    big_x = jnp.where(x > _SWITCH, x, _SWITCH + 1)
    amp, p, q, chi = _hankel(big_x, nu)
    big = amp * (p * jnp.sin(chi) + q * jnp.cos(chi))
    res = jnp.where(x <= _SWITCH, small, big)
    res = jnp.where(jnp.isinf(x), 0.0, res)
    res = jnp.where(x == 0, -jnp.inf, res)
    return jnp.where(x < 0, jnp.nan, res)


bessel_j0 = _f64(lambda x: _j(x, 0))
bessel_j1 = _f64(lambda x: _j(x, 1))
bessel_y0 = _f64(lambda x: _y(x, 0))
bessel_y1 = _f64(lambda x: _y(x, 1))


# ---------------------------------------------------------------------------
# Modified Bessel functions of the second kind


def _scaled_k_integral(x, nu, points=64):
    """exp(x) K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt, by the trapezoid rule.

    The integrand is analytic and decays double-exponentially, so the trapezoid
    rule converges geometrically. The grid ends where the integrand is below
    exp(-45) (for x >= 1.8 and nu <= 1), and so scales with x.
    """
    t_max = jnp.arccosh(1 + 45 / x)
    h = t_max / (points - 1)
    t = h[..., None] * jnp.arange(points, dtype=_F64)
    w = jnp.where(jnp.arange(points) == 0, 0.5, 1.0)
    f = jnp.exp(-x[..., None] * (jnp.cosh(t) - 1)) * jnp.cosh(nu * t)
    return h * jnp.sum(f * w, axis=-1)


def _k_series(x, nu, terms=30):
    """K_nu(x), nu in {0, 1}, by its power series (0 < x <= 2)."""
    q = (x * x) / 4
    log_half = jnp.log(x / 2)
    if nu == 0:
        i0 = jnp.ones_like(x)
        term, harmonic, acc = jnp.ones_like(x), 0.0, jnp.zeros_like(x)
        for k in range(1, terms):
            term = term * q / (k * k)
            harmonic += 1.0 / k
            i0 = i0 + term
            acc = acc + harmonic * term
        return -(log_half + _EULER) * i0 + acc
    term = x / 2
    i1 = term
    psi_sum = -2 * _EULER + 1.0
    acc = psi_sum * term
    for k in range(1, terms):
        term = term * q / (k * (k + 1))
        psi_sum += 1.0 / k + 1.0 / (k + 1)
        i1 = i1 + term
        acc = acc + psi_sum * term
    return 1 / x + log_half * i1 - acc / 2


def _k(x, nu, scaled):
    small = x <= 2
    xs = jnp.where(small & (x > 0), x, 1.0)
    ks = _k_series(xs, nu)
    if scaled:
        ks = ks * jnp.exp(xs)
    xb = jnp.where(small | jnp.isinf(x), 3.0, x)
    kb = _scaled_k_integral(xb, nu)
    if not scaled:
        kb = kb * jnp.exp(-xb)
    res = jnp.where(small, ks, kb)
    res = jnp.where(x == jnp.inf, 0.0, res)
    res = jnp.where(x == 0, jnp.inf, res)
    return jnp.where((x < 0) | jnp.isnan(x), jnp.nan, res)


modified_bessel_k0 = _f64(lambda x: _k(x, 0, False))
modified_bessel_k1 = _f64(lambda x: _k(x, 1, False))
scaled_modified_bessel_k0 = _f64(lambda x: _k(x, 0, True))
scaled_modified_bessel_k1 = _f64(lambda x: _k(x, 1, True))


# ---------------------------------------------------------------------------
# Airy Ai and the spherical Bessel j0

_AI0 = 0.355028053887817239  # Ai(0)
_AIP0 = 0.258819403792806798  # -Ai'(0)
_AIRY_NEG = -6.5
_AIRY_POS = 2.0


def _airy_series(x, terms=40):
    x3 = x * x * x
    f, tf = jnp.ones_like(x), jnp.ones_like(x)
    g, tg = x, x
    for k in range(1, terms):
        tf = tf * x3 / ((3 * k - 1) * (3 * k))
        tg = tg * x3 / ((3 * k) * (3 * k + 1))
        f = f + tf
        g = g + tg
    return _AI0 * f - _AIP0 * g


def _airy_negative(x, terms=20):
    """Ai(x) for x << 0 by its oscillatory asymptotic expansion."""
    z = -x
    zeta = 2.0 / 3.0 * z**1.5
    u = 1.0
    even, odd = jnp.ones_like(z), jnp.zeros_like(z)
    power = jnp.ones_like(z)
    for k in range(1, terms):
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)
        power = power / zeta
        sign = 1.0 if (k // 2) % 2 == 0 else -1.0
        if k % 2:
            odd = odd + sign * u * power
        else:
            even = even + sign * u * power
    phase = zeta + math.pi / 4
    return (jnp.sin(phase) * even - jnp.cos(phase) * odd) / (math.sqrt(math.pi) * z**0.25)


def _airy(x):
    mid = (x >= _AIRY_NEG) & (x <= _AIRY_POS)
    series = _airy_series(jnp.where(mid, x, 0.0))
    xn = jnp.where(x < _AIRY_NEG, x, _AIRY_NEG - 1)
    neg = _airy_negative(xn)
    xp = jnp.where((x > _AIRY_POS) & ~jnp.isinf(x), x, _AIRY_POS + 1)
    zeta = 2.0 / 3.0 * xp**1.5
    pos = jnp.sqrt(xp / 3) / math.pi * jnp.exp(-zeta) * _scaled_k_integral(zeta, 1.0 / 3.0)
    res = jnp.where(mid, series, jnp.where(x < _AIRY_NEG, neg, pos))
    res = jnp.where(x == jnp.inf, 0.0, res)
    return jnp.where(x == -jnp.inf, jnp.nan, res)


airy_ai = _f64(_airy)


def _sph_j0(x):
    small = jnp.abs(x) < 0.5
    xs = jnp.where(small, x, 0.0)
    x2 = xs * xs
    series = 1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 * (1 - x2 / 110))))
    xb = jnp.where(small, 1.0, x)
    res = jnp.where(small, series, jnp.sin(xb) / xb)
    return jnp.where(jnp.isinf(x), 0.0, res)


spherical_bessel_j0 = _f64(_sph_j0)


# ---------------------------------------------------------------------------
# Orthogonal polynomials, by their three-term recurrences up to max(n).


def _first_two(kind, x):
    one = jnp.ones_like(x)
    return one, {
        "chebyshev_polynomial_t": x,
        "chebyshev_polynomial_u": 2 * x,
        "chebyshev_polynomial_v": 2 * x - 1,
        "chebyshev_polynomial_w": 2 * x + 1,
        "hermite_polynomial_h": 2 * x,
        "hermite_polynomial_he": x,
        "laguerre_polynomial_l": 1 - x,
        "legendre_polynomial_p": x,
    }[kind]


def _next(kind, k, x, p, p_prev):
    """p_{k+1} from p_k and p_{k-1}."""
    if kind.startswith("chebyshev"):
        return 2 * x * p - p_prev
    if kind == "hermite_polynomial_h":
        return 2 * x * p - 2 * k * p_prev
    if kind == "hermite_polynomial_he":
        return x * p - k * p_prev
    if kind == "laguerre_polynomial_l":
        return ((2 * k + 1 - x) * p - k * p_prev) / (k + 1)
    return ((2 * k + 1) * x * p - k * p_prev) / (k + 1)  # legendre


def polynomial(kind, x, n):
    x, n = jnp.broadcast_arrays(x, n)
    if kind.startswith("shifted_"):
        kind = kind[len("shifted_") :]
        x = 2 * x - 1
    # PyTorch truncates a floating n to an integer degree.
    deg = jnp.trunc(n).astype(jnp.int64)
    p0, p1 = _first_two(kind, x)
    res = jnp.where(deg == 0, p0, jnp.where(deg == 1, p1, jnp.zeros_like(x)))
    top = jnp.max(deg, initial=0)

    def body(k, carry):
        prev, cur, out = carry
        nxt = _next(kind, k.astype(x.dtype), x, cur, prev)
        return cur, nxt, jnp.where(deg == k + 1, nxt, out)

    _, _, res = jax.lax.fori_loop(jnp.asarray(1, jnp.int64), top, body, (p0, p1, res))
    return jnp.where(deg < 0, jnp.zeros_like(x), res)
