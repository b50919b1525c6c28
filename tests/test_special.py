"""Special functions (`jtorch/_ops/special.py`): values from mathematics and tables."""

import functools
import math

import numpy as np
import pytest

import jtorch as torch

from . import helpers

# float64 values against mathematics' (nan where the function has a pole)
close = functools.partial(helpers.close, rtol=1e-12, atol=1e-12)

EULER = 0.5772156649015329
PI2_6 = math.pi**2 / 6


def f64(*values):
    return torch.tensor(values, dtype=torch.float64)


# ---------------------------------------------------------------------------
# Gamma family


def test_digamma_values_and_poles():
    close(
        torch.digamma(f64(1.0, 0.5, 0.0, -0.0, -1.0)),
        [-EULER, -EULER - 2 * math.log(2), -math.inf, math.inf, math.nan],
    )
    assert torch.special.psi is torch.special.digamma
    x = torch.tensor([1, 2])
    assert torch.digamma(x).dtype == torch.float32  # integers promote to the default float


def test_digamma_method_inplace_out():
    x = f64(1.0, 2.0)
    x.digamma_()
    close(x, [-EULER, 1 - EULER])
    out = torch.empty(2, dtype=torch.float64)
    torch.digamma(f64(1.0, 2.0), out=out)
    close(out, [-EULER, 1 - EULER])


def test_polygamma():
    close(torch.polygamma(1, f64(1.0, 0.5)), [PI2_6, math.pi**2 / 2])
    close(torch.polygamma(2, f64(1.0)), [-2 * 1.2020569031595942])
    close(torch.polygamma(0, f64(1.0)), [-EULER])
    # Negative arguments by reflection: psi1(-1.5) = pi^2 - psi1(2.5).
    psi1_25 = math.pi**2 / 2 - 4 - 1 / 2.25
    close(torch.polygamma(1, f64(-1.5)), [math.pi**2 - psi1_25], rtol=1e-10)
    close(torch.special.polygamma(1, f64(1.0)), [PI2_6])
    x = f64(1.0)
    close(x.polygamma(1), [PI2_6])
    x.polygamma_(1)
    close(x, [PI2_6])
    with pytest.raises(RuntimeError, match="negative n"):
        torch.polygamma(-1, f64(1.0))


def test_lgamma_and_mvlgamma():
    close(torch.lgamma(f64(0.5, 5.0)), [0.5 * math.log(math.pi), math.log(24)])
    assert torch.special.gammaln is torch.lgamma
    x = f64(2.5, 4.0)
    expected = [math.lgamma(v) + math.lgamma(v - 0.5) + 0.5 * math.log(math.pi) for v in (2.5, 4)]
    close(torch.mvlgamma(x, 2), expected)
    close(x.mvlgamma(1), [math.lgamma(2.5), math.lgamma(4.0)])
    close(torch.special.multigammaln(x, 2), expected)


def test_mvlgamma_errors_leave_tensor_unchanged():
    x = f64(0.4, 3.0)
    with pytest.raises(RuntimeError, match=r"All elements must be greater than \(p-1\)/2"):
        x.mvlgamma_(2)
    close(x, [0.4, 3.0])
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        torch.mvlgamma(x, 0)


def test_igamma_igammac():
    x = f64(0.5, 1.0, 3.0)
    a = torch.ones(3, dtype=torch.float64)
    close(torch.igamma(a, x), 1 - np.exp(-np.array([0.5, 1, 3])))
    close(torch.special.gammaincc(a, x), np.exp(-np.array([0.5, 1, 3])))
    close(a.igammac(x), np.exp(-np.array([0.5, 1, 3])))
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        torch.igamma(torch.tensor([1, 2]), torch.tensor([1, 2]))


def test_zeta():
    s = f64(2.0, 2.0, 4.0, 0.5, 1.0, 3.0)
    q = f64(1.0, 2.0, -0.5, 1.0, 1.0, 0.0)
    zeta4_half = 15 * math.pi**4 / 90
    close(
        torch.special.zeta(s, q),
        [PI2_6, PI2_6 - 1, 16 + zeta4_half, math.nan, math.inf, math.inf],
        rtol=1e-10,
    )
    close(torch.special.zeta(2.0, f64(1.0)), [PI2_6])
    assert torch.special.zeta(torch.tensor([2, 3]), 1).dtype == torch.float32


# ---------------------------------------------------------------------------
# Unary special functions


def test_elementary_special():
    close(torch.special.entr(f64(0.5, 0.0, -1.0)), [0.5 * math.log(2), 0.0, -math.inf])
    close(torch.special.erfcx(f64(0.0)), [1.0])
    close(torch.special.ndtr(f64(0.0)), [0.5])
    close(torch.special.ndtri(f64(0.975, 0.5)), [1.959963984540054, 0.0], rtol=1e-10)
    close(torch.special.log_ndtr(f64(0.0)), [math.log(0.5)])
    close(
        torch.special.xlog1py(f64(0.0, 2.0, 1.0), f64(-1.0, math.e - 1, math.nan)),
        [0.0, 2.0, math.nan],
    )
    close(torch.special.xlog1py(0, f64(3.0)), [0.0])


def test_modified_bessel_i():
    x = f64(-2.0, 0.0, 1.0)
    close(torch.i0(x), np.i0([-2.0, 0.0, 1.0]))
    close(torch.special.i0(x), np.i0([-2.0, 0.0, 1.0]))
    close(torch.special.modified_bessel_i0(x), np.i0([-2.0, 0.0, 1.0]))
    close(torch.special.i0e(x), np.i0([-2.0, 0.0, 1.0]) * np.exp(-np.abs([-2.0, 0.0, 1.0])))
    close(torch.special.i1e(f64(-2.0, 1.0)), [-0.21526928924893766, 0.20791041534970845])
    y = torch.tensor([1.0])
    y.i0_()
    close(y, [1.2660658777520082], rtol=1e-6)


@pytest.mark.parametrize(
    "name, xs, expected",
    [
        ("bessel_j0", (1, 5, 20), (0.76519768655796655, -0.1775967713143383, 0.16702466434058315)),
        (
            "bessel_j1",
            (1, -5, 20),
            (0.44005058574493352, 0.32757913759146522, 0.066833124175850046),
        ),
        (
            "bessel_y0",
            (1, 5, 20),
            (0.088256964215676958, -0.30851762524903378, 0.062640596809383831),
        ),
        ("bessel_y1", (1, 5, 20), (-0.78121282130028872, 0.14786314339122684, -0.1655116143625213)),
        (
            "modified_bessel_k0",
            (0.5, 1, 5, 30),
            (
                0.92441907122766586,
                0.42102443824070833,
                0.0036910983340425943,
                2.1324774964630564e-14,
            ),
        ),
        (
            "modified_bessel_k1",
            (0.5, 1, 5, 30),
            (
                1.6564411200033009,
                0.60190723019723457,
                0.0040446134454521642,
                2.1677320018915494e-14,
            ),
        ),
        (
            "scaled_modified_bessel_k0",
            (0.5, 1, 5, 30),
            (1.5241093857739095, 1.144463079806895, 0.54780756431351899, 0.22788666561625373),
        ),
        (
            "scaled_modified_bessel_k1",
            (0.5, 1, 5, 30),
            (2.7310097082117857, 1.6361534862632582, 0.60027385878831258, 0.2316541293777118),
        ),
        (
            "airy_ai",
            (-10, -2, 0, 1, 5),
            (
                0.040241238486443191,
                0.22740742820168558,
                0.35502805388781724,
                0.13529241631288142,
                0.00010834442813607442,
            ),
        ),
        ("spherical_bessel_j0", (0.0, 0.1, 2.0), (1.0, math.sin(0.1) / 0.1, math.sin(2.0) / 2)),
    ],
)
def test_bessel_airy_values(name, xs, expected):
    fn = getattr(torch.special, name)
    close(fn(f64(*xs)), expected, rtol=1e-10, atol=1e-14)
    if name not in ("bessel_j0", "modified_bessel_k1", "airy_ai"):
        return  # one float32 check per algorithm keeps the compile count down
    # float32 is computed in float64 and rounded, so it keeps float32 accuracy.
    out = fn(torch.tensor(xs, dtype=torch.float32))
    assert out.dtype == torch.float32
    close(out, expected, rtol=2e-6, atol=1e-7)


def test_bessel_domains():
    close(torch.special.bessel_y0(f64(0.0, -1.0)), [-math.inf, math.nan])
    close(torch.special.modified_bessel_k1(f64(0.0, -1.0)), [math.inf, math.nan])
    close(torch.special.bessel_j0(f64(math.inf)), [0.0])


# ---------------------------------------------------------------------------
# Polynomials


X = (-0.7, 0.3, 1.0, 1.8)


def _poly_cases():
    x = np.array(X)
    s = 2 * x - 1
    return [
        ("chebyshev_polynomial_t", 3, 4 * x**3 - 3 * x),
        ("chebyshev_polynomial_u", 2, 4 * x**2 - 1),
        ("chebyshev_polynomial_v", 2, 4 * x**2 - 2 * x - 1),
        ("chebyshev_polynomial_w", 2, 4 * x**2 + 2 * x - 1),
        ("shifted_chebyshev_polynomial_t", 2, 2 * s**2 - 1),
        ("shifted_chebyshev_polynomial_u", 1, 2 * s),
        ("hermite_polynomial_h", 3, 8 * x**3 - 12 * x),
        ("hermite_polynomial_he", 3, x**3 - 3 * x),
        ("laguerre_polynomial_l", 2, (x**2 - 4 * x + 2) / 2),
        ("legendre_polynomial_p", 3, (5 * x**3 - 3 * x) / 2),
    ]


@pytest.mark.parametrize("name, n, expected", _poly_cases())
def test_polynomials(name, n, expected):
    fn = getattr(torch.special, name)
    close(fn(f64(*X), n), expected, rtol=1e-12, atol=1e-12)


def test_polynomial_tensor_degree():
    x = f64(0.5, 0.5, 0.5, 0.5)
    n = f64(-1.0, 0.0, 2.9, 5.0)  # negative degree gives 0; fractional degrees truncate
    t5 = 16 * 0.5**5 - 20 * 0.5**3 + 5 * 0.5
    close(torch.special.chebyshev_polynomial_t(x, n), [0.0, 1.0, -0.5, t5])
    assert torch.special.chebyshev_polynomial_t(torch.tensor([1, 2]), 2).dtype == torch.float32
