"""`torch.autograd.forward_ad` (dual tensors) against real PyTorch's forward AD."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
TX, TY = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
W, B = RNG.standard_normal((4, 3)), RNG.standard_normal(4)
IMG, TIMG = RNG.standard_normal((1, 2, 4, 4)), RNG.standard_normal((1, 2, 4, 4))
KER, TKER = RNG.standard_normal((3, 2, 3, 3)), RNG.standard_normal((3, 2, 3, 3))
LABELS = np.array([2, 0])
SPD = X.T @ X + 3 * np.eye(3)  # symmetric positive definite
TSYM = TX.T @ TY + TY.T @ TX  # a symmetric tangent (PyTorch assumes one)
Z, TZ = X + 1j * Y, TX - 2j * TY


def tensor(m, a, dtype=None):
    a = np.array(a)
    return m.from_numpy(a.astype(dtype or ("complex128" if a.dtype.kind == "c" else "float64")))


def _module_stack(m, x):
    lin, norm = m.nn.Linear(3, 4).double(), m.nn.LayerNorm(4).double()
    with m.no_grad():
        lin.weight.copy_(tensor(m, W))
        lin.bias.copy_(tensor(m, B))
    return m.nn.functional.relu(norm(lin(x)))


def _inplace(m, x, y):
    z = x.clone()
    z.mul_(y)
    z.add_(1.0)
    z.sin_()
    return z


def _setitem(m, x, y):
    z = m.zeros(3, 3, dtype=m.float64)
    row = z[0]  # a view made before the base has a tangent
    z[1:] = x * y
    return z, row


def _view_write(m, x, y):
    z = x * 1.0
    v = z.t()[1:]
    v.mul_(y.t()[1:])
    return z, v


# name -> (fn(m, *duals), primals, tangents). Written once, run with m = torch or jtorch.
CASES = {
    "sin": (lambda m, x: x.sin(), (X,), (TX,)),
    "arith_scalars": (lambda m, x, y: x * y + 2 * x - y / 3, (X, Y), (TX, TY)),
    "div_abs": (lambda m, x, y: x / (y.abs() + 1), (X, Y), (TX, TY)),
    "exp_log_pow": (lambda m, x: (x.exp() + 1).log() + x**3, (X,), (TX,)),
    "sigmoid_tanh": (lambda m, x: m.sigmoid(x) * x.tanh(), (X,), (TX,)),
    "where_clamp": (lambda m, x, y: m.where(x > 0, x.clamp(-0.5, 0.5), y * 2), (X, Y), (TX, TY)),
    "sum_mean": (lambda m, x: (x.sum(1), x.mean()), (X,), (TX,)),
    "max_dim": (lambda m, x: tuple(x.max(1)), (X,), (TX,)),
    "argmax_compare": (lambda m, x: (x.argmax(), x > 0), (X,), (TX,)),
    "logsumexp_norm": (lambda m, x: (m.logsumexp(x, 1), m.linalg.vector_norm(x)), (X,), (TX,)),
    "cumsum_prod": (lambda m, x: (x.cumsum(1), x.prod(0)), (X,), (TX,)),
    "matmul": (lambda m, x, y: (x @ y.t(), m.mm(x.t(), y)), (X, Y), (TX, TY)),
    "views": (
        lambda m, x: (
            x.t()[1:, ::1].reshape(-1),
            x[:, None].expand(2, 4, 3),
            x.unsqueeze(0).permute(2, 0, 1),
            x[1],
            x.flatten(),
        ),
        (X,),
        (TX,),
    ),
    "cat_stack": (lambda m, x, y: (m.cat([x, y], 0), m.stack([x, y * 2], 1)), (X, Y), (TX, TY)),
    "inplace": (_inplace, (X, Y), (TX, TY)),
    "setitem": (_setitem, (X, Y), (TX, TY)),
    "view_write": (_view_write, (X, Y), (TX, TY)),
    "softmax": (
        lambda m, x: (m.nn.functional.softmax(x, -1), m.nn.functional.log_softmax(x, 0)),
        (X,),
        (TX,),
    ),
    "conv2d": (
        lambda m, img, k: m.nn.functional.conv2d(img, k, padding=1),
        (IMG, KER),
        (TIMG, TKER),
    ),
    "linear_layernorm": (_module_stack, (X,), (TX,)),
    "losses": (
        lambda m, x, y: (
            m.nn.functional.mse_loss(x, y),
            m.nn.functional.cross_entropy(x, m.from_numpy(LABELS[:2])),
        ),
        (X, Y),
        (TX, TY),
    ),
    "cast_float32": (lambda m, x: (x.float() * 2, x.to(m.float32).exp()), (X,), (TX,)),
    # a kernel with a custom VJP rule: its JVP is the transpose of the VJP
    "cholesky": (lambda m, a: m.linalg.cholesky(a), (SPD,), (TSYM,)),
    "complex": (lambda m, z: (z.abs(), m.view_as_real(z * z.conj()), z.real * 2), (Z,), (TZ,)),
}


def run_forward_ad(m, name):
    """Runs case `name` in a dual level; returns [(primal, tangent or None)] per output."""
    fn, primals, tangents = CASES[name]
    fwad = m.autograd.forward_ad
    with fwad.dual_level():
        duals = [fwad.make_dual(tensor(m, p), tensor(m, t)) for p, t in zip(primals, tangents)]
        out = fn(m, *duals)
        outs = out if isinstance(out, tuple) else (out,)
        return [tuple(fwad.unpack_dual(o)) for o in outs]


def _check(expected, actual):
    assert len(expected) == len(actual)
    for (ep, et), (ap, at) in zip(expected, actual):
        assert str(ap.dtype) == str(ep.dtype) and tuple(ap.shape) == tuple(ep.shape)
        np.testing.assert_allclose(ap.detach().numpy(), ep.detach().numpy(), rtol=1e-6, atol=1e-9)
        assert (at is None) == (et is None)
        if et is not None:
            assert str(at.dtype) == str(et.dtype) and tuple(at.shape) == tuple(et.shape)
            np.testing.assert_allclose(
                at.detach().numpy(), et.detach().numpy(), rtol=1e-6, atol=1e-9
            )


@pytest.mark.parametrize("name", sorted(CASES))
def test_tangents(name):
    _check(run_forward_ad(torch, name), run_forward_ad(jtorch, name))


def test_dual_params_functional_call():
    def run(m):
        fwad = m.autograd.forward_ad
        lin = m.nn.Linear(3, 4).double()
        params = {"weight": tensor(m, W), "bias": tensor(m, B)}
        with fwad.dual_level():
            duals = {
                "weight": fwad.make_dual(params["weight"], tensor(m, np.ones((4, 3)))),
                "bias": fwad.make_dual(params["bias"], tensor(m, np.arange(4.0))),
            }
            out = m.func.functional_call(lin, duals, (tensor(m, X),))
            return [tuple(fwad.unpack_dual(out))]

    _check(run(torch), run(jtorch))


def test_backward_through_tangent():
    """Reverse-over-forward: gradients of a tangent with respect to primal and tangent."""

    def run(m):
        fwad = m.autograd.forward_ad
        x = tensor(m, X).requires_grad_()
        v = tensor(m, TX).requires_grad_()
        with fwad.dual_level():
            out = (fwad.make_dual(x, v).sin() * 3).sum()
            primal, tangent = fwad.unpack_dual(out)
            gx, gv = m.autograd.grad(tangent, (x, v), retain_graph=True)
            (gp,) = m.autograd.grad(primal, (x,))
        return [(gx, None), (gv, None), (gp, None)]

    _check(run(torch), run(jtorch))


def test_make_dual_keeps_tangent_and_level_exit_drops_it():
    for m in (torch, jtorch):
        fwad = m.autograd.forward_ad
        x, t = tensor(m, X), tensor(m, TX)
        with fwad.dual_level():
            d = fwad.make_dual(x, t)
            assert fwad.unpack_dual(d).tangent is t
            assert fwad.unpack_dual(x).tangent is None
            assert d._base is x and not d.requires_grad
            d.mul_(2)  # writes into the given tangent, as PyTorch does
            np.testing.assert_allclose(t.numpy(), 2 * TX)
            y = d * 2
        assert fwad.unpack_dual(y).tangent is None
        assert fwad.unpack_dual(y).primal is y


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception itself is the result
        return type(e).__name__, str(e)
    return None


ERRORS = {
    "outside_level": lambda m: m.autograd.forward_ad.make_dual(tensor(m, X), tensor(m, TX)),
    "size": lambda m: m.autograd.forward_ad.make_dual(tensor(m, X), tensor(m, W)),
    "int_primal": lambda m: m.autograd.forward_ad.make_dual(tensor(m, X, "int64"), tensor(m, TX)),
    "int_tangent": lambda m: m.autograd.forward_ad.make_dual(tensor(m, X), tensor(m, TX, "int64")),
    "bad_level": lambda m: m.autograd.forward_ad.make_dual(tensor(m, X), tensor(m, TX), level=3),
    "twice": lambda m: m.autograd.forward_ad.make_dual(
        m.autograd.forward_ad.make_dual(tensor(m, X), tensor(m, TX)), tensor(m, TX)
    ),
    "nested": lambda m: m.autograd.forward_ad.enter_dual_level(),
    "exit_other": lambda m: m.autograd.forward_ad.exit_dual_level(level=2),
    "unpack_number": lambda m: m.autograd.forward_ad.unpack_dual(1.0),
    "out": lambda m: m.sin(
        m.autograd.forward_ad.make_dual(tensor(m, X), tensor(m, TX)),
        out=m.empty(2, 3, dtype=m.float64),
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    results = []
    for m in (torch, jtorch):
        if name == "outside_level":
            results.append(_error(lambda: ERRORS[name](m)))
            continue
        with m.autograd.forward_ad.dual_level():
            results.append(_error(lambda: ERRORS[name](m)))
    assert results[0] is not None and results[1] == results[0]


def test_exit_without_level():
    for m in (torch, jtorch):
        assert _error(m.autograd.forward_ad.exit_dual_level) == (
            "RuntimeError",
            "Dual level must be a positive number.",
        )


def test_repr_and_inplace_restride_carry_the_tangent():
    out = {}
    for lib in (torch, jtorch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.ones(2, 3), lib.arange(6.0).reshape(2, 3))
            text = repr(x.sin())
            x.t_()
            y = x * 1
            t = fw.unpack_dual(y).tangent
            out[lib.__name__] = (text, tuple(x.shape), t.tolist())
    assert out["jtorch"] == out["torch"]
