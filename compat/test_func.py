"""`jtorch.func`, `jtorch.autograd.functional` and `gradcheck` against real PyTorch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.outcomes import same_outcome  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal(3)
Y = RNG.standard_normal((2, 3))
XS = RNG.standard_normal((4, 3))


def both(a, dtype="float64"):
    """The same data as a torch and a jtorch tensor."""
    a = np.asarray(a, dtype=dtype)
    return torch.from_numpy(a.copy()), jtorch.from_numpy(a.copy())


def same(expected, actual, rtol=1e-6, atol=1e-9):
    """Same structure, shapes, dtypes and values (nested tuples/lists/dicts of tensors)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, type(expected)) and len(actual) == len(expected)
        for e, a in zip(expected, actual):
            same(e, a, rtol, atol)
    elif isinstance(expected, dict):
        assert set(actual) == set(expected)
        for k in expected:
            same(expected[k], actual[k], rtol, atol)
    elif isinstance(expected, torch.Tensor):
        assert isinstance(actual, jtorch.Tensor)
        assert tuple(actual.shape) == tuple(expected.shape)
        assert str(actual.dtype) == str(expected.dtype)
        np.testing.assert_allclose(
            actual.detach().numpy(), expected.detach().numpy(), rtol=rtol, atol=atol
        )
    else:
        assert actual == expected


# Functions written once, run with `m` = torch or jtorch.
FUNCS = {
    "cubic_sum": (lambda m: lambda x: (x**3).sum(), (X,)),
    "softplus_dot": (lambda m: lambda x, y: m.nn.functional.softplus(y @ x).sum(), (X, Y)),
    "matvec_tanh": (lambda m: lambda x, y: (y @ x).tanh(), (X, Y)),
    "two_outputs": (lambda m: lambda x, y: (x.sin() * y, (y**2).mean()), (X, Y)),
    "logsumexp": (lambda m: lambda x: m.logsumexp(x * 2, 0), (X,)),
}


def _args(arrays):
    pairs = [both(a) for a in arrays]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def _scalar(name):
    return name in ("cubic_sum", "softplus_dot", "logsumexp")


@pytest.mark.parametrize("name", FUNCS)
def test_func_transforms_match_torch(name):
    make, arrays = FUNCS[name]
    tf, jf = make(torch), make(jtorch)
    targs, jargs = _args(arrays)
    argnums = tuple(range(len(arrays)))
    same(torch.func.jacrev(tf, argnums)(*targs), jtorch.func.jacrev(jf, argnums)(*jargs))
    same(torch.func.jacfwd(tf, argnums)(*targs), jtorch.func.jacfwd(jf, argnums)(*jargs))
    tout, tvjp = torch.func.vjp(tf, *targs)
    jout, jvjp = jtorch.func.vjp(jf, *jargs)
    same(tout, jout)
    cts = torch.utils._pytree.tree_map(torch.ones_like, tout)
    jcts = torch.utils._pytree.tree_map(lambda t: jtorch.from_numpy(t.numpy()), cts)
    same(tvjp(cts), jvjp(jcts))
    tangents = tuple(t * 0.5 + 1 for t in targs)
    jtangents = tuple(t * 0.5 + 1 for t in jargs)
    same(torch.func.jvp(tf, targs, tangents), jtorch.func.jvp(jf, jargs, jtangents))
    if _scalar(name):
        same(
            torch.func.grad_and_value(tf, argnums)(*targs),
            jtorch.func.grad_and_value(jf, argnums)(*jargs),
        )
        same(torch.func.hessian(tf, argnums)(*targs), jtorch.func.hessian(jf, argnums)(*jargs))


@pytest.mark.parametrize("name", FUNCS)
def test_autograd_functional_matches_torch(name):
    make, arrays = FUNCS[name]
    tf, jf = make(torch), make(jtorch)
    targs, jargs = _args(arrays)
    TF, JF = torch.autograd.functional, jtorch.autograd.functional
    same(TF.jacobian(tf, targs), JF.jacobian(jf, jargs))
    same(
        TF.jacobian(tf, targs, vectorize=True, strategy="forward-mode"),
        JF.jacobian(jf, jargs, vectorize=True, strategy="forward-mode"),
    )
    same(
        TF.jacobian(tf, targs[0]) if len(targs) == 1 else TF.jacobian(tf, targs),
        JF.jacobian(jf, jargs[0]) if len(jargs) == 1 else JF.jacobian(jf, jargs),
    )
    tv = tuple(t * 0.25 - 1 for t in targs)
    jv = tuple(t * 0.25 - 1 for t in jargs)
    same(TF.jvp(tf, targs, tv), JF.jvp(jf, jargs, jv))
    if _scalar(name):
        same(TF.vjp(tf, targs), JF.vjp(jf, jargs))
        same(TF.hessian(tf, targs), JF.hessian(jf, jargs))
        same(
            TF.hessian(tf, targs, vectorize=True, outer_jacobian_strategy="forward-mode"),
            JF.hessian(jf, jargs, vectorize=True, outer_jacobian_strategy="forward-mode"),
        )
        same(TF.hvp(tf, targs, tv), JF.hvp(jf, jargs, jv))
        same(TF.vhp(tf, targs, tv), JF.vhp(jf, jargs, jv))


def test_jacobian_create_graph_matches_torch():
    (tx,), (jx,) = _args((X,))
    tx.requires_grad_()
    jx.requires_grad_()
    tj = torch.autograd.functional.jacobian(lambda x: x.sin() * x, tx, create_graph=True)
    jj = jtorch.autograd.functional.jacobian(lambda x: x.sin() * x, jx, create_graph=True)
    same(torch.autograd.grad(tj.sum(), tx), jtorch.autograd.grad(jj.sum(), jx))


def test_vmap_matches_torch():
    (tx, ty, txs), (jx, jy, jxs) = _args((X, Y, XS))
    cases = [
        (lambda m: m.dot, (0, 0), (txs, txs), (jxs, jxs)),
        (lambda m: lambda y, x: y @ x, (None, 0), (ty, txs), (jy, jxs)),
        (lambda m: lambda x: (x.sum(0), x * 2), 1, (txs,), (jxs,)),
        (
            lambda m: lambda d: d["a"] @ d["b"][0],
            ({"a": None, "b": (0,)},),
            ({"a": ty, "b": (txs,)},),
            ({"a": jy, "b": (jxs,)},),
        ),
    ]
    for make, in_dims, targs, jargs in cases:
        for out_dims, chunk in ((0, None), (-1, 3)):
            t = torch.func.vmap(make(torch), in_dims, out_dims, chunk_size=chunk)(*targs)
            j = jtorch.func.vmap(make(jtorch), in_dims, out_dims, chunk_size=chunk)(*jargs)
            same(t, j)
    # per-sample gradients
    loss_t = lambda w, x: (w @ x).tanh().sum()  # noqa: E731
    same(
        torch.func.vmap(torch.func.grad(loss_t), (None, 0))(ty, txs),
        jtorch.func.vmap(jtorch.func.grad(loss_t), (None, 0))(jy, jxs),
    )


def test_complex_grad_and_vjp_match_torch():
    z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])
    tz, jz = both(z, "complex128")
    same(
        torch.func.grad(lambda z: (z.abs() ** 2 + z.real * z.imag).sum())(tz),
        jtorch.func.grad(lambda z: (z.abs() ** 2 + z.real * z.imag).sum())(jz),
    )
    tct, jct = both(np.array([1j, 1.0, 2 - 1j]), "complex128")
    same(
        torch.func.vjp(lambda z: z**2 * z.conj(), tz)[1](tct),
        jtorch.func.vjp(lambda z: z**2 * z.conj(), jz)[1](jct),
    )
    same(
        torch.func.jvp(lambda z: z.conj() * z, (tz,), (tct,)),
        jtorch.func.jvp(lambda z: z.conj() * z, (jz,), (jct,)),
    )


def test_stack_module_state_and_functional_call_match_torch():
    lin = [torch.nn.Linear(3, 2).double() for _ in range(3)]

    class Lin:  # a module-shaped object with the same weights
        def __init__(self, m):
            self.training = True
            self.weight = jtorch.from_numpy(m.weight.detach().numpy().copy()).requires_grad_()
            self.bias = jtorch.from_numpy(m.bias.detach().numpy().copy()).requires_grad_()

        def named_parameters(self):
            return [("weight", self.weight), ("bias", self.bias)]

        def named_buffers(self):
            return []

        def __call__(self, x):
            return jtorch.nn.functional.linear(x, self.weight, self.bias)

    jl = [Lin(m) for m in lin]
    (txs,), (jxs,) = _args((XS,))
    tp, tb = torch.func.stack_module_state(lin)
    jp, jb = jtorch.func.stack_module_state(jl)
    same(tp, jp)
    assert jp["weight"].requires_grad and jp["weight"].is_leaf

    def run(mod, m0):
        return lambda p, b, x: mod.func.functional_call(m0, (p, b), (x,))

    tout = torch.func.vmap(run(torch, lin[0]), (0, 0, None))(tp, tb, txs)
    jout = jtorch.func.vmap(run(jtorch, jl[0]), (0, 0, None))(jp, jb, jxs)
    same(tout, jout)
    # the stacked parameters are trainable: the vmapped call is on the tape
    (tout**2).sum().backward()
    (jout**2).sum().backward()
    same(tp["weight"].grad, jp["weight"].grad)
    same(tp["bias"].grad, jp["bias"].grad)


class _WrongSquare:
    """A custom Function with a wrong backward, for both libraries."""

    @staticmethod
    def make(m):
        class WrongSquare(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x

        return WrongSquare


def test_gradcheck_matches_torch():
    (tx, ty), (jx, jy) = _args((X, Y))
    for t in (tx, ty, jx, jy):
        t.requires_grad_()

    def good(m):
        return lambda x, y: ((y @ x).sin(), m.nn.functional.softplus(x).sum())

    assert torch.autograd.gradcheck(good(torch), (tx, ty))
    assert jtorch.autograd.gradcheck(good(jtorch), (jx, jy))
    assert torch.autograd.gradgradcheck(good(torch), (tx, ty))
    assert jtorch.autograd.gradgradcheck(good(jtorch), (jx, jy))
    errors = []
    for m, x in ((torch, tx), (jtorch, jx)):
        with pytest.raises(RuntimeError) as info:
            m.autograd.gradcheck(_WrongSquare.make(m).apply, (x,))
        errors.append(str(info.value))
        assert (
            m.autograd.gradcheck(_WrongSquare.make(m).apply, (x,), raise_exception=False) is False
        )
    assert errors[0].split("\n")[0] == errors[1].split("\n")[0]
    from torch.autograd.gradcheck import GradcheckError as TErr

    from jtorch.autograd.gradcheck import GradcheckError as JErr

    assert issubclass(TErr, RuntimeError) and issubclass(JErr, RuntimeError)


# ---------------------------------------------------------------------------
# replace_all_batch_norm_modules_


def test_replace_all_batch_norm_modules_():
    def replace(lib):
        m = lib.nn.Sequential(
            lib.nn.Conv2d(1, 2, 1),
            lib.nn.BatchNorm2d(2),
            lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False)),
        )
        out = lib.func.replace_all_batch_norm_modules_(m)
        return (
            out is m,
            [
                (b.track_running_stats, b.running_mean, b.running_var, b.num_batches_tracked)
                for b in (m[1], m[2][0])
            ],
            sorted(n for n, _ in m.named_buffers()),
        )

    same_outcome(replace)
