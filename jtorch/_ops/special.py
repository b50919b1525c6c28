"""Special functions: gamma family, zeta, Bessel and Airy functions, orthogonal polynomials.

Where `jax.scipy.special` has the function with PyTorch's values it is used
directly; the rest is written here. The Bessel and Airy functions are
evaluated in float64 (power series near zero, where float32 would lose digits
to cancellation; asymptotic expansions or a trapezoid-rule integral further
out) and cast back to the input's dtype.
"""

import jax.numpy as jnp
import jax.scipy.special as jss

from .. import _meta
from . import _derivatives
from . import _special_impl as _k
from ._registry import DEFAULT, INT_TO_FLOAT, T, composite, op


def _require_float(name, *arrays):
    for a in arrays:
        dt = jnp.result_type(a)
        if not jnp.issubdtype(dt, jnp.floating):
            kind = {
                "int64": "Long",
                "int32": "Int",
                "int16": "Short",
                "int8": "Char",
                "uint8": "Byte",
                "bool": "Bool",
            }.get(str(dt), str(dt))
            raise RuntimeError(f"\"{name}_cpu\" not implemented for '{kind}'")


# ---------------------------------------------------------------------------
# Gamma family


@op(promote=INT_TO_FLOAT, inplace=True, aliases=("special.digamma", "special.psi"))
def digamma(input: T):
    """Matches `torch.digamma`."""
    return _k.digamma(input)


@op(promote=INT_TO_FLOAT, method=False, aliases=("special.polygamma",))
def polygamma(n, input: T):
    """Matches `torch.polygamma`."""
    if not isinstance(n, int) or n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _k.polygamma(n, input)


@composite(name="Tensor.polygamma", method="polygamma", function=False)
def _polygamma_method(self, n):
    """Matches `torch.Tensor.polygamma`: the order comes second in the method form."""
    return polygamma(n, self)


@composite(name="Tensor.polygamma_", method="polygamma_", function=False)
def _polygamma_inplace(self, n):
    return self.copy_(polygamma(n, self))


@op(promote=INT_TO_FLOAT, inplace=True, aliases=("special.gammaln",))
def lgamma(input: T):
    """Matches `torch.lgamma`."""
    return _k.lgamma(input)


def _check_mvlgamma(input, p, *, inplace=False, out=None):
    """PyTorch's argument and domain checks, on the values (skipped for traced values).

    A check before the kernel, not inside it: the kernel stays one compiled program, so its
    backward is one compiled program too, the same in the node-by-node engine and inlined
    into a fused backward (an eager backward rounds its steps apart, while a fused program
    contracts and reassociates them: the two differed in the last bit).
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    a = getattr(input, "_array", None)
    if a is not None and not _meta.no_values(a) and a.size and not bool(jnp.all(a > (p - 1) / 2)):
        raise RuntimeError("All elements must be greater than (p-1)/2")


@op(promote=INT_TO_FLOAT, inplace=True, aliases=("special.multigammaln",), check=_check_mvlgamma)
def mvlgamma(input: T, p):
    """Matches `torch.mvlgamma`."""
    return _k.mvlgamma(input, p)


def _igamma_impl(name, fn):
    def impl(input: T, other: T):
        _require_float(name, input)
        return fn(input, other)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.{name}`."
    return impl


igamma = op(
    _igamma_impl("igamma", jss.gammainc),
    promote=DEFAULT,
    inplace=True,
    aliases=("special.gammainc",),
)
igammac = op(
    _igamma_impl("igammac", jss.gammaincc),
    promote=DEFAULT,
    inplace=True,
    aliases=("special.gammaincc",),
)


@op(name="special.zeta", promote=INT_TO_FLOAT, method=False)
def zeta(input: T, other: T):
    """Matches `torch.special.zeta` (the Hurwitz zeta function)."""
    return _k.zeta(input, other)


# ---------------------------------------------------------------------------
# Unary special functions


def _unary(name, fn, method=False, inplace=False, aliases=(), node=None):
    def impl(input: T):
        return fn(input)

    impl.__name__ = name.rsplit(".", 1)[-1]
    impl.__doc__ = f"Matches `torch.{name}`."
    return op(
        impl,
        name=name,
        promote=INT_TO_FLOAT,
        method=method,
        inplace=inplace,
        aliases=aliases,
        node=node,
    )


i0 = _unary("i0", _k.i0, method=True, inplace=True, aliases=("special.i0",))
# (name, fn[, PyTorch's autograd node]): the ATen ops are `special_*`, and ndtr is composite
_UNARY = [
    ("special.i0e", jss.i0e, "SpecialI0EBackward0"),
    ("special.i1", jss.i1, "SpecialI1Backward0"),
    ("special.i1e", jss.i1e, "SpecialI1EBackward0"),
    ("special.entr", _k.entr, "SpecialEntrBackward0"),
    ("special.erfcx", jss.erfcx, "SpecialErfcxBackward0"),
    ("special.ndtr", jss.ndtr, "MulBackward1"),
    ("special.ndtri", jss.ndtri, "SpecialNdtriBackward0"),
    ("special.log_ndtr", jss.log_ndtr, "SpecialLogNdtrBackward0"),
    ("special.airy_ai", _k.airy_ai),
    ("special.bessel_j0", _k.bessel_j0),
    ("special.bessel_j1", _k.bessel_j1),
    ("special.bessel_y0", _k.bessel_y0),
    ("special.bessel_y1", _k.bessel_y1),
    ("special.modified_bessel_i0", _k.i0),
    ("special.modified_bessel_i1", jss.i1),
    ("special.modified_bessel_k0", _k.modified_bessel_k0),
    ("special.modified_bessel_k1", _k.modified_bessel_k1),
    ("special.scaled_modified_bessel_k0", _k.scaled_modified_bessel_k0),
    ("special.scaled_modified_bessel_k1", _k.scaled_modified_bessel_k1),
    ("special.spherical_bessel_j0", _k.spherical_bessel_j0),
]
for _name, _fn, *_node in _UNARY:
    globals()[_name.rsplit(".", 1)[-1]] = _unary(_name, _fn, node=_node[0] if _node else None)


@op(name="special.xlog1py", promote=INT_TO_FLOAT, method=False, node="SpecialXlog1PyBackward0")
def xlog1py(input: T, other: T):
    """Matches `torch.special.xlog1py`: `input * log1p(other)`, 0 where `input` is 0."""
    return _xlog1py(input, other)


def _xlog1py_tangent(primals, tangents, out):
    # PyTorch: d/dx = log1p(y), 0 where x == 0 and y <= -1; d/dy = x / (y + 1).
    (x, y), (tx, ty) = primals, tangents
    dx = _derivatives.masked(~((x == 0) & (y <= -1)), jnp.log1p(y))
    return _derivatives.linear(out, (dx, tx), (x / (y + 1), ty))


def _xlog1py_value(x, y):
    res = jnp.where(x == 0, jnp.zeros((), x.dtype), x * jnp.log1p(y))
    return jnp.where(jnp.isnan(y), y, res)


_xlog1py = _derivatives.with_jvp(_xlog1py_value, _xlog1py_tangent)


# ---------------------------------------------------------------------------
# Orthogonal polynomials: `n` is a tensor, truncated to an integer as PyTorch does.


def _polynomial(name, kind):
    def impl(input: T, n: T):
        return _k.polynomial(kind, input, n)

    impl.__name__ = name
    impl.__doc__ = f"Matches `torch.special.{name}`."
    return op(impl, name=f"special.{name}", promote=INT_TO_FLOAT, method=False)


for _kind in (
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
):
    globals()[_kind] = _polynomial(_kind, _kind)


# `torch.special.xlogy` is `torch.xlogy`, declared with the pointwise ops.
def _publish_xlogy():
    from . import _registry, pointwise

    fn = _registry.NAMESPACES[""].get("xlogy") or getattr(pointwise, "xlogy", None)
    if fn is not None and "xlogy" not in _registry.NAMESPACES["special"]:
        _registry.NAMESPACES["special"]["xlogy"] = fn


_publish_xlogy()
