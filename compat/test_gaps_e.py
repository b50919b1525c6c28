"""Parity with PyTorch: Adafactor, Muon, nn.utils fusion/skip_init/stateless/memory formats,
`torch.random.fork_rng`, `torch.linalg` errors (`LinAlgError`), `linalg.matmul`,
`special.logsumexp` and `func.replace_all_batch_norm_modules_`.

The optimizer cases run through `compat/test_optim.py`'s harness (20-step trajectories,
state_dict structure, resume across libraries) and count in its summary line.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat import test_optim as _optim  # noqa: E402

LIBS = (torch, jtorch)


def _outcome(fn):
    """`fn()`'s value, or (exception type name, message) when it raises."""
    try:
        return fn()
    except Exception as e:  # the exception is the outcome being compared
        return type(e).__name__, str(e)


def _same_outcome(fn):
    t, j = _outcome(lambda: fn(torch)), _outcome(lambda: fn(jtorch))
    assert t == j, f"torch {t!r} vs jtorch {j!r}"
    return t


# -- optimizers -----------------------------------------------------------------

ADAFACTOR = [{}, dict(lr=0.05, weight_decay=0.1, maximize=True, beta2_decay=-0.5,
                      eps=(1e-3, 1e-2), d=1.5)]
_rng = np.random.default_rng(3)
MATRICES = [(3, 5), (6, 2)]          # Muon takes 2-D parameters only (wide and tall)
MINIT = [_rng.standard_normal(s).astype(np.float32) for s in MATRICES]
MGRADS = [[_rng.standard_normal(s).astype(np.float32) for s in MATRICES] for _ in range(20)]
MUON = [{}, dict(lr=0.02, nesterov=False, adjust_lr_fn="match_rms_adamw", weight_decay=0.0)]


@pytest.mark.parametrize("kw", ADAFACTOR, ids=["default", "options"])
def test_adafactor(kw):
    _optim._record(f"opt {_optim._case_id('Adafactor', kw)}",
                   lambda: _optim._check_opt("Adafactor", kw, _optim.INIT, _optim.GRADS))


@pytest.fixture
def one_torch_thread():
    # PyTorch's bfloat16 CPU matmuls slow down 100-fold when their threads compete for cores
    # (as on a shared CI machine); one thread keeps Muon's 60 reference steps fast.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.mark.parametrize("kw", MUON, ids=["default", "options"])
def test_muon(kw, one_torch_thread):
    _optim._record(f"opt {_optim._case_id('Muon', kw)}",
                   lambda: _optim._check_opt("Muon", kw, MINIT, MGRADS))


BAD = [("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)),
       ("Adafactor", dict(eps=(-1.0, 1e-3))), ("Adafactor", dict(eps=(None, -1.0))),
       ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-1.0)),
       ("Muon", dict(lr=-1.0)), ("Muon", dict(momentum=-1.0)), ("Muon", dict(weight_decay=-1.0)),
       ("Muon", dict(adjust_lr_fn="other"))]


def test_optimizer_errors():
    for name, kw in BAD:
        _same_outcome(lambda lib: getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2, 2))],
                                                           **kw))
    # Muon refuses non-matrix parameters at construction, bad settings at the step.
    _same_outcome(lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(3))]))

    def step(lib, opt_name, p, **kw):
        p.grad = lib.ones_like(p)
        getattr(lib.optim, opt_name)([p], **kw).step()
        return p.tolist()
    _same_outcome(lambda lib: step(lib, "Muon", lib.nn.Parameter(lib.ones(2, 2)), ns_steps=100))
    _same_outcome(lambda lib: step(lib, "Muon", lib.nn.Parameter(lib.ones(2, 2)),
                                   ns_coefficients=(1.0, 2.0)))
    _same_outcome(lambda lib: step(lib, "Adafactor",
                                   lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))))


def test_optimizer_state_and_groups():
    def state(lib):
        ps = [lib.nn.Parameter(lib.ones(2, 3, 4)), lib.nn.Parameter(lib.ones(3)),
              lib.nn.Parameter(lib.tensor(2.0))]
        opt = lib.optim.Adafactor(ps)
        for p in ps:
            p.grad = lib.ones_like(p)
        opt.step()
        sd = opt.state_dict()
        return ([{k: (str(v.dtype), tuple(v.shape)) for k, v in st.items()}
                 for st in sd["state"].values()], sd["param_groups"], repr(opt))
    _same_outcome(state)
    _same_outcome(lambda lib: (lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))])
                               .state_dict()["param_groups"]))


# -- nn.utils -------------------------------------------------------------------

_W = _rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
_BN = [_rng.standard_normal(4).astype(np.float32) for _ in range(3)] + \
    [_rng.uniform(0.5, 2, 4).astype(np.float32)]
_X = _rng.standard_normal((2, 3, 5, 5)).astype(np.float32)


def _bn(lib, cls, n):
    bn = cls(n)
    with lib.no_grad():
        for t, v in zip((bn.weight, bn.bias, bn.running_mean, bn.running_var), _BN):
            t.copy_(lib.tensor(v[:n]))
    return bn.eval()


def _fused(lib, kind):
    if kind == "conv":
        m, bn, x = lib.nn.Conv2d(3, 4, 3), _bn(lib, lib.nn.BatchNorm2d, 4), _X
    elif kind == "transposed":
        m, bn = lib.nn.ConvTranspose2d(4, 3, 3), _bn(lib, lib.nn.BatchNorm2d, 3)
        x = np.concatenate([_X, _X[:, :1]], 1)
    else:
        m, bn, x = lib.nn.Linear(3, 4), _bn(lib, lib.nn.BatchNorm1d, 4), _X[:, :, 0, 0]
    with lib.no_grad():
        m.weight.copy_(lib.tensor(_W.reshape(m.weight.shape) if kind != "linear"
                                  else _W[:, :, 0, 0]))
        m.bias.copy_(lib.tensor(_BN[0][:m.bias.shape[0]]))
    m.eval()
    if kind == "linear":
        f = lib.nn.utils.fuse_linear_bn_eval(m, bn)
    else:
        f = lib.nn.utils.fuse_conv_bn_eval(m, bn, transpose=kind == "transposed")
    xt = lib.tensor(x)
    return (f(xt).detach().numpy(), bn(m(xt)).detach().numpy(), type(f.weight).__name__,
            f.weight.requires_grad, f.bias.requires_grad, f.weight.is_leaf, f is m)


@pytest.mark.parametrize("kind", ["conv", "transposed", "linear"])
def test_fuse_eval(kind):
    t, j = _fused(torch, kind), _fused(jtorch, kind)
    np.testing.assert_allclose(j[0], t[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(j[0], j[1], rtol=1e-5, atol=1e-5)   # fused == conv then bn
    assert t[2:] == j[2:]


def test_fuse_weights_and_errors():
    def weights(lib):
        w = lib.ones(4, 3, 1, 1, requires_grad=True)
        fw, fb = lib.nn.utils.fuse_conv_bn_weights(w, None, lib.zeros(4), lib.ones(4), 1e-5,
                                                   None, None)
        lw, lb = lib.nn.utils.fuse_linear_bn_weights(
            lib.ones(4, 3, dtype=lib.float64), None, lib.ones(4), lib.ones(4), 1e-5,
            lib.full((4,), 2.0), lib.ones(4))
        return [(type(t).__name__, t.requires_grad, str(t.dtype), tuple(t.shape),
                 np.round(t.detach().numpy().ravel()[:2], 6).tolist()) for t in (fw, fb, lw, lb)]
    _same_outcome(weights)
    _same_outcome(lambda lib: lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(3, 4).eval(),
                                                               lib.nn.BatchNorm1d(3).eval()))
    _same_outcome(lambda lib: lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(3, 4),
                                                               lib.nn.BatchNorm1d(4).eval()))
    _same_outcome(lambda lib: lib.nn.utils.fuse_conv_bn_eval(
        lib.nn.Conv2d(3, 4, 1).eval(), lib.nn.BatchNorm2d(4, track_running_stats=False).eval()))


def test_skip_init_stateless_memory_format():
    def skip(lib):
        lib.manual_seed(0)
        a = lib.rand(3)
        lib.manual_seed(0)
        m = lib.nn.utils.skip_init(lib.nn.Linear, 3, 2)
        return (bool((a == lib.rand(3)).all()), tuple(m.weight.shape), m.weight.requires_grad,
                str(m.weight.device), type(m.weight).__name__)
    assert _same_outcome(skip)[0] is True
    _same_outcome(lambda lib: lib.nn.utils.skip_init(int))
    _same_outcome(lambda lib: lib.nn.utils.skip_init(lib.nn.ReLU))

    def stateless(lib):
        m = lib.nn.Linear(2, 1)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            y = lib.nn.utils.stateless.functional_call(
                m, {"weight": lib.ones(1, 2), "bias": lib.zeros(1)}, (lib.ones(1, 2),))
        return y.tolist(), [(w.category.__name__, str(w.message)) for w in rec]
    _same_outcome(stateless)

    def memory_format(lib):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3),
                              lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 2)),
                              lib.nn.Conv3d(1, 1, 1))
        before = [p.detach().clone() for p in m.parameters()]
        ids = [id(p) for p in m.parameters()]
        out = lib.nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last)
        out = lib.nn.utils.convert_conv3d_weight_memory_format(out, lib.contiguous_format)
        return (out is m, [id(p) for p in m.parameters()] == ids,
                all(bool((a == b).all()) for a, b in zip(before, m.parameters())))
    _same_outcome(memory_format)


# -- random, func ---------------------------------------------------------------

def test_fork_rng():
    def fork(lib):
        lib.manual_seed(1)
        with lib.random.fork_rng():
            a = lib.rand(2)
        b = lib.rand(2)
        with lib.random.fork_rng(devices=[], enabled=False):
            lib.rand(2)
        c = lib.rand(2)
        lib.manual_seed(1)
        d, _, f = lib.rand(2), lib.rand(2), lib.rand(2)
        return bool((a == b).all()), bool((b == d).all()), bool((c == f).all())
    assert _same_outcome(fork) == (True, True, True)

    def raising(lib):
        lib.manual_seed(2)
        state = lib.get_rng_state()
        try:
            with lib.random.fork_rng(devices=iter([])):
                lib.rand(3)
                raise KeyError("x")
        except KeyError:
            pass
        return bool((lib.get_rng_state() == state).all())
    assert _same_outcome(raising) is True


def test_replace_all_batch_norm_modules_():
    def replace(lib):
        m = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 1), lib.nn.BatchNorm2d(2),
                              lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False)))
        out = lib.func.replace_all_batch_norm_modules_(m)
        return out is m, [(b.track_running_stats, b.running_mean, b.running_var,
                           b.num_batches_tracked) for b in (m[1], m[2][0])], \
            sorted(n for n, _ in m.named_buffers())
    _same_outcome(replace)


# -- linalg ----------------------------------------------------------------------

_SING = np.zeros((3, 2, 2), np.float32)
_SING[0] = np.eye(2)
LINALG_ERRORS = {
    "cholesky": lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 0], [0, -1]])),
    "cholesky upper": lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 2], [2, 1]]),
                                                      upper=True),
    "cholesky batch": lambda lib: lib.linalg.cholesky(-lib.tensor(_SING)),
    "cholesky nan": lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 0], [0, float("nan")]])),
    "legacy cholesky": lambda lib: lib.tensor([[1.0, 2], [2, 1]]).cholesky(),
    "cholesky_ex": lambda lib: lib.linalg.cholesky_ex(-lib.tensor(_SING), check_errors=True),
    "inv": lambda lib: lib.linalg.inv(lib.tensor([[1.0, 2], [2, 4]])),
    "inv batch": lambda lib: lib.linalg.inv(lib.tensor(_SING)),
    "inverse": lambda lib: lib.tensor(_SING).inverse(),
    "inv complex": lambda lib: lib.linalg.inv(lib.zeros(2, 2, dtype=lib.complex64)),
    "inv_ex": lambda lib: lib.linalg.inv_ex(lib.tensor(_SING), check_errors=True),
    "solve": lambda lib: lib.linalg.solve(lib.tensor(_SING), lib.ones(2)),
    "solve_ex": lambda lib: lib.linalg.solve_ex(lib.zeros(2, 2), lib.ones(2),
                                                check_errors=True),
    "matrix_power": lambda lib: lib.tensor(_SING).matrix_power(-2),
    "tensorinv": lambda lib: lib.linalg.tensorinv(lib.zeros(2, 2, 2, 2), ind=2),
    "cholesky_inverse": lambda lib: lib.cholesky_inverse(lib.tensor([[1.0, 1], [0, 0]]),
                                                         upper=True),
    "lu_factor": lambda lib: lib.linalg.lu_factor(lib.tensor(_SING)),
    "lu_factor_ex": lambda lib: lib.linalg.lu_factor_ex(lib.tensor(_SING), check_errors=True),
}


@pytest.mark.parametrize("case", list(LINALG_ERRORS))
def test_linalg_errors(case):
    def run(lib):
        try:
            LINALG_ERRORS[case](lib)
        except RuntimeError as e:
            return type(e).__name__, str(e), isinstance(e, lib.linalg.LinAlgError)
        return None
    assert _same_outcome(run) is not None


def test_linalg_infos_and_aliases():
    mats = [[[1.0, 0], [0, -1]], [[4.0, 2, 1], [2, 1, 0], [1, 0, 3]], [[1.0, 2], [0, 1]]]
    _same_outcome(lambda lib: [lib.linalg.cholesky_ex(lib.tensor(m), upper=u).info.tolist()
                               for m in mats for u in (False, True)])
    _same_outcome(lambda lib: [lib.linalg.inv_ex(lib.tensor(_SING)).info.tolist(),
                               lib.linalg.lu_factor_ex(lib.tensor(_SING)).info.tolist(),
                               lib.linalg.solve_ex(lib.tensor(_SING), lib.ones(2)).info.tolist()])
    # nan input: LAPACK finds no zero pivot, so no error (the result is nan).
    _same_outcome(lambda lib: lib.linalg.inv(lib.tensor([[1.0, 2], [2, float("nan")]]))
                  .isnan().all().item())
    _same_outcome(lambda lib: lib.linalg.matrix_power(lib.zeros(2, 2), 2).tolist())
    assert issubclass(jtorch.linalg.LinAlgError, RuntimeError)
    assert jtorch.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__

    a = _rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = _rng.standard_normal((4, 2)).astype(np.float32)
    res = {}
    for lib in LIBS:
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.linalg.matmul(x, y)
        lse = lib.special.logsumexp(x, dim=(0, 2), keepdim=True)
        (out.sum() + lse.sum()).backward()
        res[lib.__name__] = [out.detach().numpy(), lse.detach().numpy(), x.grad.numpy(),
                             y.grad.numpy(), str(out.dtype), tuple(lse.shape)]
        with pytest.raises(RuntimeError, match="cannot be multiplied"):
            lib.linalg.matmul(lib.ones(2, 3), lib.ones(2, 3))
    for t, j in zip(res["torch"], res["jtorch"]):
        if isinstance(t, np.ndarray):
            np.testing.assert_allclose(j, t, rtol=1e-5, atol=1e-6)
        else:
            assert t == j


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cholesky_solve_gradients(upper, dtype):
    # PyTorch's backward treats the factor as the full matrix in L L^H (an upper-triangle
    # gradient for a lower factor): jtorch gives the same gradients.
    low = np.array([[2.0, 0.0], [0.5 + (0.3j if dtype == "complex128" else 0), 1.0]])
    factor = low.conj().T if upper else low
    rhs = np.array([[1.0, 0.3], [0.2, 2.0]]) * (1 + (0.5j if dtype == "complex128" else 0))
    grads = {}
    for lib in (torch, jtorch):
        f = lib.tensor(factor, dtype=getattr(lib, dtype), requires_grad=True)
        b = lib.tensor(rhs, dtype=getattr(lib, dtype), requires_grad=True)
        lib.cholesky_solve(b, f, upper=upper).abs().pow(2).sum().backward()
        grads[lib.__name__] = (f.grad.numpy(), b.grad.numpy())
    for a, b in zip(grads["jtorch"], grads["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
