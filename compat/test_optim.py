"""Optimizer, scheduler and swa_utils parity with PyTorch.

Optimizers: the same initial parameters and the same gradient sequence in both
libraries for 20 steps; every step's parameters must agree to float32 tolerance,
`state_dict()` must have PyTorch's structure (param_groups, state keys in order,
dtypes, shapes), and a state dict saved by either library must load into the
other and resume identically. Schedulers: the learning rates (and momenta) of
100 steps must equal PyTorch's, and a `state_dict` round trip must resume the
schedule. `RESULTS` feeds the summary line `compat optim: K/N pass`.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.outcomes import same_outcome  # noqa: E402

RESULTS: dict = {}  # case name -> "pass" or the first mismatch

_rng = np.random.default_rng(0)
SHAPES = [(3, 4), (4,), (2, 2, 2)]
INIT = [_rng.standard_normal(s).astype(np.float32) for s in SHAPES]
GRADS = [[_rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(20)]
CINIT = [(a + 1j * _rng.standard_normal(a.shape)).astype(np.complex64) for a in INIT]
CGRADS = [
    [(g + 1j * _rng.standard_normal(g.shape)).astype(np.complex64) for g in gs] for gs in GRADS
]


def _record(name, fn):
    try:
        err = fn()
    except Exception as e:  # a crash is a failed case, recorded with its reason
        err = f"{type(e).__name__}: {e}"
    RESULTS[name] = "pass" if err is None else err
    assert err is None, err


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _convert(value, lib):
    """A state dict (nested dicts/lists of tensors and numbers) rebuilt with `lib` tensors."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return lib.tensor(_np(value).copy())
    if isinstance(value, dict):
        return {k: _convert(v, lib) for k, v in value.items()}
    if isinstance(value, list):
        return [_convert(v, lib) for v in value]
    return value


def _close(a, b, what, rtol=1e-5, atol=1e-6):
    x, y = np.asarray(_np(a)), np.asarray(_np(b))
    if x.shape != y.shape:
        return f"{what}: shape {x.shape} vs {y.shape}"
    if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
        return f"{what}: max abs diff {np.max(np.abs(x - y)):.3g}"
    return None


def _compare_state_dicts(sd_t, sd_j):
    if sd_t["param_groups"] != sd_j["param_groups"]:
        return f"param_groups differ: {sd_t['param_groups']} vs {sd_j['param_groups']}"
    if list(sd_t["state"]) != list(sd_j["state"]):
        return f"state indices differ: {list(sd_t['state'])} vs {list(sd_j['state'])}"
    for i, st in sd_t["state"].items():
        sj = sd_j["state"][i]
        if list(st) != list(sj):
            return f"state[{i}] keys {list(st)} vs {list(sj)}"
        for k, v in st.items():
            w = sj[k]
            if isinstance(v, torch.Tensor):
                if not isinstance(w, jtorch.Tensor):
                    return f"state[{i}][{k}] is {type(w).__name__}, not a Tensor"
                if str(v.dtype) != str(w.dtype) or tuple(v.shape) != tuple(w.shape):
                    return (
                        f"state[{i}][{k}]: {v.dtype}{tuple(v.shape)} vs {w.dtype}{tuple(w.shape)}"
                    )
                err = _close(v, w, f"state[{i}][{k}]", rtol=1e-4, atol=1e-5)
                if err:
                    return err
            elif type(v) is not type(w) or v != w:
                return f"state[{i}][{k}]: {v!r} vs {w!r}"
    return None


# -- optimizers -------------------------------------------------------------

OPT_CASES = [
    ("Adamax", {}),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01, betas=(0.5, 0.9), eps=1e-3)),
    ("NAdam", {}),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", {}),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.5))),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RMSprop", {}),
    ("RMSprop", dict(centered=True, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.001, alpha=0.9, momentum=0.5, maximize=True)),
    ("RMSprop", dict(centered=True)),
    ("Adagrad", {}),
    ("Adagrad", dict(lr_decay=0.1, initial_accumulator_value=0.5, weight_decay=0.1, maximize=True)),
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("Rprop", {}),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.01, 0.2), maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
]
COMPLEX_CASES = [
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("RMSprop", dict(centered=True, momentum=0.9)),
    ("Adagrad", dict(initial_accumulator_value=0.1)),
    ("Adadelta", {}),
    ("ASGD", dict(t0=3)),
    ("Rprop", {}),
]
SPARSE = 0.7  # SparseAdam: gradient entries below this magnitude are zero (absent)


def _grad(lib, g, sparse):
    if sparse:
        g = g * (np.abs(g) > SPARSE)
    t = lib.tensor(g)
    return t.to_sparse() if sparse else t


def _run_opt(lib, cls, kw, init, grads, steps, sparse=False, opt=None, params=None):
    params = params or [lib.nn.Parameter(lib.tensor(a.copy())) for a in init]
    opt = opt or getattr(lib.optim, cls)(params, **kw)
    traj = []
    for gs in grads[:steps]:
        for p, g in zip(params, gs):
            p.grad = _grad(lib, g, sparse)
        opt.step()
        traj.append([_np(p).copy() for p in params])
    return params, opt, traj


def _check_opt(cls, kw, init, grads):
    sparse = cls == "SparseAdam"
    tp, topt, ttraj = _run_opt(torch, cls, kw, init, grads, 20, sparse)
    jp, jopt, jtraj = _run_opt(jtorch, cls, kw, init, grads, 20, sparse)
    for i, (a, b) in enumerate(zip(ttraj, jtraj)):
        for k, (x, y) in enumerate(zip(a, b)):
            err = _close(x, y, f"step {i + 1} param {k}")
            if err:
                return err
    err = _compare_state_dicts(topt.state_dict(), jopt.state_dict())
    if err:
        return err
    if repr(topt) != repr(jopt):
        return f"repr differs:\n{topt!r}\n{jopt!r}"
    # Resume across libraries: torch's state after 10 steps loaded into jtorch, and back.
    for src, dst in ((torch, jtorch), (jtorch, torch)):
        sp, sopt, _ = _run_opt(src, cls, kw, init, grads, 10, sparse)
        sd = _convert(sopt.state_dict(), dst)
        dparams = [dst.nn.Parameter(dst.tensor(_np(p).copy())) for p in sp]
        dopt = getattr(dst.optim, cls)(dparams, **kw)
        dopt.load_state_dict(sd)
        _, _, straj = _run_opt(src, cls, kw, None, grads[10:], 10, sparse, sopt, sp)
        _, _, dtraj = _run_opt(dst, cls, kw, None, grads[10:], 10, sparse, dopt, dparams)
        for i, (a, b) in enumerate(zip(straj, dtraj)):
            for k, (x, y) in enumerate(zip(a, b)):
                err = _close(
                    x, y, f"resumed {src.__name__}->{dst.__name__} step {i + 11} param {k}"
                )
                if err:
                    return err
    return None


def _case_id(cls, kw):
    return cls + ("" if not kw else "(" + ",".join(f"{k}={v}" for k, v in kw.items()) + ")")


@pytest.mark.parametrize(
    "cls,kw",
    OPT_CASES + [("SparseAdam", {}), ("SparseAdam", dict(lr=0.01, maximize=True))],
    ids=[_case_id(c, k) for c, k in OPT_CASES] + ["SparseAdam", "SparseAdam(maximize)"],
)
def test_optimizer(cls, kw):
    _record(f"opt {_case_id(cls, kw)}", lambda: _check_opt(cls, kw, INIT, GRADS))


@pytest.mark.parametrize("cls,kw", COMPLEX_CASES, ids=[_case_id(c, k) for c, k in COMPLEX_CASES])
def test_optimizer_complex(cls, kw):
    _record(f"opt complex {_case_id(cls, kw)}", lambda: _check_opt(cls, kw, CINIT, CGRADS))


def test_param_groups_and_defaults():
    def check():
        for name in [
            "Adamax",
            "NAdam",
            "RAdam",
            "RMSprop",
            "Adagrad",
            "Adadelta",
            "ASGD",
            "Rprop",
            "LBFGS",
            "SparseAdam",
        ]:
            tp = [torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3))]
            jp = [jtorch.nn.Parameter(jtorch.ones(2)), jtorch.nn.Parameter(jtorch.ones(3))]
            groups = lambda ps: [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.5}]
            if name == "LBFGS":
                groups = lambda ps: ps
            ts, js = (
                getattr(lib.optim, name)(groups(ps)).state_dict()
                for lib, ps in ((torch, tp), (jtorch, jp))
            )
            err = _compare_state_dicts(ts, js)
            if err:
                return f"{name}: {err}"
        return None

    _record("opt param_groups/defaults", check)


BAD_ARGS = [
    ("Adamax", dict(lr=-1.0)),
    ("Adamax", dict(betas=(1.0, 0.9))),
    ("NAdam", dict(momentum_decay=-1.0)),
    ("RAdam", dict(eps=-1.0)),
    ("RMSprop", dict(alpha=-1.0)),
    ("RMSprop", dict(momentum=-1.0)),
    ("Adagrad", dict(lr_decay=-1.0)),
    ("Adagrad", dict(initial_accumulator_value=-1.0)),
    ("Adadelta", dict(rho=1.5)),
    ("ASGD", dict(weight_decay=-1.0)),
    ("Rprop", dict(etas=(1.5, 1.2))),
    ("LBFGS", dict(lr=-1.0)),
    ("SparseAdam", dict(lr=0.0)),
    ("SparseAdam", dict(eps=0.0)),
]


def test_validation_errors():
    def check():
        for name, kw in BAD_ARGS:
            msgs = []
            for lib in (torch, jtorch):
                try:
                    getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2))], **kw)
                    msgs.append(None)
                except Exception as e:
                    msgs.append((type(e).__name__, str(e)))
            if msgs[0] != msgs[1]:
                return f"{name}{kw}: torch {msgs[0]} vs jtorch {msgs[1]}"
        return None

    _record("opt validation errors", check)


# -- LBFGS --------------------------------------------------------------------


def _rosenbrock(lib, x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs(line_search):
    def check():
        out = {}
        for lib in (torch, jtorch):
            # float64: Rosenbrock amplifies last-bit differences of float32 gradients.
            x = lib.nn.Parameter(lib.tensor([-1.5, 2.0], dtype=lib.float64))
            opt = lib.optim.LBFGS(
                [x],
                lr=1 if line_search else 0.1,
                max_iter=10,
                history_size=5,
                line_search_fn=line_search,
            )
            losses = []

            def closure(lib=lib, x=x, opt=opt):
                opt.zero_grad()
                loss = _rosenbrock(lib, x)
                loss.backward()
                return loss

            for _ in range(5):
                losses.append(float(opt.step(closure).detach()))
            out[lib.__name__] = (losses, _np(x).copy(), opt.state_dict())
        (tl, tx, ts), (jl, jx, js) = out["torch"], out["jtorch"]
        err = _close(np.array(tl), np.array(jl), "losses", rtol=1e-7, atol=1e-9)
        err = err or _close(tx, jx, "x", rtol=1e-7, atol=1e-9)
        if err:
            return err
        if ts["param_groups"] != js["param_groups"]:
            return f"param_groups {ts['param_groups']} vs {js['param_groups']}"
        if list(ts["state"][0]) != list(js["state"][0]):
            return f"state keys {list(ts['state'][0])} vs {list(js['state'][0])}"
        for k in ("func_evals", "n_iter"):
            if ts["state"][0][k] != js["state"][0][k]:
                return f"state {k}: {ts['state'][0][k]} vs {js['state'][0][k]}"
        return None

    _record(f"opt LBFGS(line_search_fn={line_search})", check)


def test_lbfgs_quadratic_converges_like_torch():
    def check():
        a = _rng.standard_normal((6, 6)).astype(np.float32)
        a = a @ a.T + 6 * np.eye(6, dtype=np.float32)
        b = _rng.standard_normal(6).astype(np.float32)
        res = []
        for lib in (torch, jtorch):
            x = lib.nn.Parameter(lib.zeros(6))
            A, B = lib.tensor(a), lib.tensor(b)
            opt = lib.optim.LBFGS([x], line_search_fn="strong_wolfe")

            def closure(lib=lib, x=x, opt=opt, A=A, B=B):
                opt.zero_grad()
                loss = 0.5 * (x @ (A @ x)) - B @ x
                loss.backward()
                return loss

            opt.step(closure)
            res.append(_np(x).copy())
        return _close(res[0], res[1], "x", rtol=1e-4, atol=1e-5) or _close(
            res[1], np.linalg.solve(a, b), "solution", rtol=1e-3, atol=1e-4
        )

    _record("opt LBFGS quadratic", check)


# -- schedulers ---------------------------------------------------------------


def _sched_cases():
    half = lambda e: 0.5 ** (e // 10)
    yield "LambdaLR", lambda lr, o: lr.LambdaLR(o, lr_lambda=[half, lambda e: 1 / (e + 1)])
    yield "MultiplicativeLR", lambda lr, o: lr.MultiplicativeLR(o, lambda e: 0.97)
    yield "StepLR", lambda lr, o: lr.StepLR(o, step_size=7, gamma=0.5)
    yield "StepLR.default", lambda lr, o: lr.StepLR(o, step_size=30)
    yield "MultiStepLR", lambda lr, o: lr.MultiStepLR(o, milestones=[10, 30, 30, 80], gamma=0.3)
    yield "ConstantLR", lambda lr, o: lr.ConstantLR(o)
    yield "ConstantLR.opts", lambda lr, o: lr.ConstantLR(o, factor=0.2, total_iters=40)
    yield "LinearLR", lambda lr, o: lr.LinearLR(o)
    yield (
        "LinearLR.opts",
        lambda lr, o: lr.LinearLR(o, start_factor=0.1, end_factor=0.6, total_iters=50),
    )
    yield "ExponentialLR", lambda lr, o: lr.ExponentialLR(o, gamma=0.95)
    yield "PolynomialLR", lambda lr, o: lr.PolynomialLR(o)
    yield "PolynomialLR.opts", lambda lr, o: lr.PolynomialLR(o, total_iters=60, power=2.0)
    yield "CosineAnnealingLR", lambda lr, o: lr.CosineAnnealingLR(o, T_max=30)
    yield "CosineAnnealingLR.eta_min", lambda lr, o: lr.CosineAnnealingLR(o, T_max=17, eta_min=0.01)
    yield "CosineAnnealingWarmRestarts", lambda lr, o: lr.CosineAnnealingWarmRestarts(o, T_0=10)
    yield (
        "CosineAnnealingWarmRestarts.mult",
        lambda lr, o: lr.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.001),
    )
    yield "CyclicLR.triangular", lambda lr, o: lr.CyclicLR(o, 0.01, 0.1, step_size_up=10)
    yield (
        "CyclicLR.triangular2",
        lambda lr, o: lr.CyclicLR(
            o, [0.01, 0.02], 0.1, step_size_up=7, step_size_down=13, mode="triangular2"
        ),
    )
    yield (
        "CyclicLR.exp_range",
        lambda lr, o: lr.CyclicLR(o, 0.01, 0.1, step_size_up=10, mode="exp_range", gamma=0.98),
    )
    yield (
        "CyclicLR.scale_fn",
        lambda lr, o: lr.CyclicLR(
            o,
            0.01,
            0.1,
            step_size_up=6,
            scale_fn=lambda x: 1 / (1 + x),
            scale_mode="iterations",
            cycle_momentum=False,
        ),
    )
    yield "CyclicLR.adam", lambda lr, o: lr.CyclicLR(o, 0.01, 0.1, step_size_up=8), "Adam"
    yield "OneCycleLR", lambda lr, o: lr.OneCycleLR(o, max_lr=0.1, total_steps=101)
    yield (
        "OneCycleLR.linear3",
        lambda lr, o: lr.OneCycleLR(
            o,
            max_lr=[0.1, 0.2],
            epochs=10,
            steps_per_epoch=11,
            anneal_strategy="linear",
            three_phase=True,
            pct_start=0.25,
        ),
    )
    yield (
        "OneCycleLR.adam",
        lambda lr, o: lr.OneCycleLR(
            o, max_lr=0.1, total_steps=120, div_factor=10.0, final_div_factor=100.0
        ),
        "Adam",
    )
    yield (
        "OneCycleLR.nomomentum",
        lambda lr, o: lr.OneCycleLR(o, max_lr=0.1, total_steps=100, cycle_momentum=False),
    )
    yield (
        "SequentialLR",
        lambda lr, o: lr.SequentialLR(
            o,
            [
                lr.LinearLR(o, start_factor=0.1, total_iters=10),
                lr.ExponentialLR(o, 0.9),
                lr.StepLR(o, 5),
            ],
            milestones=[10, 40],
        ),
    )
    yield (
        "ChainedScheduler",
        lambda lr, o: lr.ChainedScheduler(
            [
                lr.ConstantLR(o, factor=0.5, total_iters=10),
                lr.ExponentialLR(o, 0.97),
                lr.MultiStepLR(o, [20, 50]),
            ]
        ),
    )
    yield "SWALR.cos", lambda lr, o: _swalr(lr, o, swa_lr=0.05, anneal_epochs=10)
    yield (
        "SWALR.linear",
        lambda lr, o: _swalr(lr, o, swa_lr=[0.05, 0.2], anneal_epochs=20, anneal_strategy="linear"),
    )
    yield "SWALR.zero", lambda lr, o: _swalr(lr, o, swa_lr=0.05, anneal_epochs=0)


def _swalr(lr_mod, opt, **kw):
    swa = torch.optim.swa_utils if lr_mod is torch.optim.lr_scheduler else jtorch.optim.swa_utils
    return swa.SWALR(opt, **kw)


SCHED_CASES = [(c[0], c[1], c[2] if len(c) > 2 else "SGD") for c in _sched_cases()]


def _make_opt(lib, kind):
    ps = [lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(3))]
    groups = [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.05}]
    if kind == "Adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def _run_sched(lib, make, kind, steps, sched=None, opt=None):
    opt = opt or _make_opt(lib, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = sched or make(lib.optim.lr_scheduler, opt)
        seq = [(list(sched.get_last_lr()), _momenta(opt))]
        for _ in range(steps):
            opt.step()
            sched.step()
            seq.append((list(sched.get_last_lr()), _momenta(opt)))
    return opt, sched, seq


def _same_seq(a, b, what):
    for i, ((la, ma), (lb, mb)) in enumerate(zip(a, b)):
        if not np.allclose(la, lb, rtol=1e-12, atol=0):
            return f"{what}: lr at step {i}: {la} vs {lb}"
        if not np.allclose(
            np.array(ma, float), np.array(mb, float), rtol=1e-12, atol=0, equal_nan=True
        ):  # None (no momentum) reads as nan
            return f"{what}: momentum at step {i}: {ma} vs {mb}"
    return None


def _plain(sd):
    """A scheduler state dict without what differs by construction (functions, Counters)."""
    return {k: v for k, v in sd.items() if k not in ("_scale_fn_ref", "anneal_func")}


@pytest.mark.parametrize("name,make,kind", SCHED_CASES, ids=[c[0] for c in SCHED_CASES])
def test_scheduler(name, make, kind):
    def check():
        _, _, tseq = _run_sched(torch, make, kind, 100)
        _, _, jseq = _run_sched(jtorch, make, kind, 100)
        err = _same_seq(tseq, jseq, "sequence")
        if err:
            return err
        # state_dict: same keys as PyTorch's; a round trip resumes the schedule.
        topt, tsched, _ = _run_sched(torch, make, kind, 30)
        jopt, jsched, _ = _run_sched(jtorch, make, kind, 30)
        tkeys, jkeys = sorted(_plain(tsched.state_dict())), sorted(_plain(jsched.state_dict()))
        if tkeys != jkeys:
            return f"state_dict keys {tkeys} vs {jkeys}"
        sd = jsched.state_dict()
        opt_sd = jopt.state_dict()
        opt2 = _make_opt(jtorch, kind)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched2 = make(jtorch.optim.lr_scheduler, opt2)
        opt2.load_state_dict(opt_sd)
        sched2.load_state_dict(sd)
        _, _, tcont = _run_sched(torch, make, kind, 40, tsched, topt)
        _, _, jcont = _run_sched(jtorch, make, kind, 40, sched2, opt2)
        return _same_seq(tcont, jcont, "resumed")

    _record(f"sched {name}", check)


def test_reduce_lr_on_plateau():
    metrics = [
        1.0,
        0.9,
        0.95,
        0.95,
        0.96,
        0.97,
        0.5,
        0.5,
        0.5,
        0.5,
        0.5,
        0.5,
        0.49999,
        0.6,
        0.7,
        0.8,
        0.9,
        1.0,
        0.1,
        0.1,
        0.1,
    ] * 5
    opts = [
        dict(),
        dict(patience=2),
        dict(mode="max", patience=1, factor=0.5),
        dict(threshold_mode="abs", threshold=0.05, patience=1, cooldown=2),
        dict(mode="max", threshold_mode="abs", patience=0, min_lr=[0.02, 0.001]),
        dict(patience=1, factor=0.5, min_lr=0.01, eps=1e-3),
    ]

    def check():
        for kw in opts:
            seqs = []
            for lib in (torch, jtorch):
                opt = _make_opt(lib, "SGD")
                sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
                seq = []
                for i, m in enumerate(metrics):
                    opt.step()
                    sched.step(m)
                    seq.append((list(sched.get_last_lr()), [None, None]))
                    if i == 40 and lib is jtorch:  # a state_dict round trip mid-way
                        sd = sched.state_dict()
                        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
                        sched.load_state_dict(sd)
                seqs.append((seq, sched.state_dict()))
            err = _same_seq(seqs[0][0], seqs[1][0], f"ReduceLROnPlateau{kw}")
            if err:
                return err
            if sorted(seqs[0][1]) != sorted(seqs[1][1]):
                return f"state_dict keys {sorted(seqs[0][1])} vs {sorted(seqs[1][1])}"
        return None

    _record("sched ReduceLROnPlateau", check)


def test_scheduler_warnings_and_closed_form():
    def check():
        msgs = []
        for lib in (torch, jtorch):
            opt = _make_opt(lib, "SGD")
            sched = lib.optim.lr_scheduler.StepLR(opt, 3)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                sched.step()  # before optimizer.step(): PyTorch warns
                sched.get_lr()  # outside step(): PyTorch warns
                sched.step(7)  # epoch argument: deprecation warning, closed form
            msgs.append(([str(x.message) for x in w], sched.get_last_lr()))
        if msgs[0] != msgs[1]:
            return f"torch {msgs[0]} vs jtorch {msgs[1]}"
        return None

    _record("sched warnings/closed form", check)


# -- swa_utils ----------------------------------------------------------------


def _models(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def _load(model, arrays, lib):
    with lib.no_grad():
        for p, a in zip(model.parameters(), arrays):
            p.copy_(lib.tensor(a))


@pytest.mark.parametrize("mode", ["swa", "ema_multi", "swa_multi", "ema_avg_fn", "use_buffers"])
def test_averaged_model(mode):
    shapes = [(4, 3), (4,), (2, 4), (2,)]
    weights = [[_rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(5)]

    def check():
        res = []
        for lib in (torch, jtorch):
            swa = lib.optim.swa_utils
            model = _models(lib)
            kw = {
                "swa": {},
                "ema_multi": dict(multi_avg_fn=swa.get_ema_multi_avg_fn(0.9)),
                "swa_multi": dict(multi_avg_fn=swa.get_swa_multi_avg_fn()),
                "ema_avg_fn": dict(avg_fn=swa.get_ema_avg_fn(0.8)),
                "use_buffers": dict(use_buffers=True),
            }[mode]
            avg = swa.AveragedModel(model, **kw)
            for w in weights:
                _load(model, w, lib)
                avg.update_parameters(model)
            x = lib.tensor(np.ones((2, 3), np.float32))
            res.append(
                (
                    [_np(p).copy() for p in avg.parameters()],
                    _np(avg(x)).copy(),
                    int(avg.n_averaged),
                    list(avg.state_dict()),
                )
            )
        (tp, tout, tn, tk), (jp, jout, jn, jk) = res
        if tn != jn or tk != jk:
            return f"n_averaged/state_dict keys: {tn} {tk} vs {jn} {jk}"
        for i, (a, b) in enumerate(zip(tp, jp)):
            err = _close(a, b, f"averaged param {i}")
            if err:
                return err
        return _close(tout, jout, "forward")

    _record(f"swa AveragedModel {mode}", check)


def test_update_bn():
    if not hasattr(jtorch.nn, "BatchNorm1d"):
        pytest.skip("jtorch.nn.BatchNorm1d is not implemented yet")
    data = [_rng.standard_normal((4, 3)).astype(np.float32) * (i + 1) for i in range(5)]

    def check():
        res = []
        for lib in (torch, jtorch):
            model = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))
            with lib.no_grad():
                for p, v in zip(
                    model.parameters(), [np.eye(3), np.zeros(3), np.ones(3), np.zeros(3)]
                ):
                    p.copy_(lib.tensor(np.asarray(v, np.float32)))
            model.eval()
            loader = [(lib.tensor(d), 0) for d in data]
            lib.optim.swa_utils.update_bn(loader, model)
            bn = model[1]
            res.append(
                (
                    _np(bn.running_mean).copy(),
                    _np(bn.running_var).copy(),
                    int(bn.num_batches_tracked),
                    bn.momentum,
                    model.training,
                )
            )
        (tm, tv, tn, tmom, ttr), (jm, jv, jn, jmom, jtr) = res
        if (tn, tmom, ttr) != (jn, jmom, jtr):
            return f"{(tn, tmom, ttr)} vs {(jn, jmom, jtr)}"
        return _close(tm, jm, "running_mean") or _close(tv, jv, "running_var")

    _record("swa update_bn", check)


# ---------------------------------------------------------------------------
# Adafactor and Muon (their trajectories count in this file's summary line)

_mrng = np.random.default_rng(3)

ADAFACTOR = [
    {},
    dict(lr=0.05, weight_decay=0.1, maximize=True, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5),
]
MATRICES = [(3, 5), (6, 2)]  # Muon takes 2-D parameters only (wide and tall)
MINIT = [_mrng.standard_normal(s).astype(np.float32) for s in MATRICES]
MGRADS = [[_mrng.standard_normal(s).astype(np.float32) for s in MATRICES] for _ in range(20)]
MUON = [{}, dict(lr=0.02, nesterov=False, adjust_lr_fn="match_rms_adamw", weight_decay=0.0)]


@pytest.mark.parametrize("kw", ADAFACTOR, ids=["default", "options"])
def test_adafactor(kw):
    _record(f"opt {_case_id('Adafactor', kw)}", lambda: _check_opt("Adafactor", kw, INIT, GRADS))


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
    _record(f"opt {_case_id('Muon', kw)}", lambda: _check_opt("Muon", kw, MINIT, MGRADS))


BAD = [
    ("Adafactor", dict(lr=-1.0)),
    ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1.0, 1e-3))),
    ("Adafactor", dict(eps=(None, -1.0))),
    ("Adafactor", dict(d=0.5)),
    ("Adafactor", dict(weight_decay=-1.0)),
    ("Muon", dict(lr=-1.0)),
    ("Muon", dict(momentum=-1.0)),
    ("Muon", dict(weight_decay=-1.0)),
    ("Muon", dict(adjust_lr_fn="other")),
]


def test_optimizer_errors():
    for name, kw in BAD:
        same_outcome(lambda lib: getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2, 2))], **kw))
    # Muon refuses non-matrix parameters at construction, bad settings at the step.
    same_outcome(lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(3))]))

    def step(lib, opt_name, p, **kw):
        p.grad = lib.ones_like(p)
        getattr(lib.optim, opt_name)([p], **kw).step()
        return p.tolist()

    same_outcome(lambda lib: step(lib, "Muon", lib.nn.Parameter(lib.ones(2, 2)), ns_steps=100))
    same_outcome(
        lambda lib: step(lib, "Muon", lib.nn.Parameter(lib.ones(2, 2)), ns_coefficients=(1.0, 2.0))
    )
    same_outcome(
        lambda lib: step(lib, "Adafactor", lib.nn.Parameter(lib.ones(2, dtype=lib.complex64)))
    )


def test_optimizer_state_and_groups():
    def state(lib):
        ps = [
            lib.nn.Parameter(lib.ones(2, 3, 4)),
            lib.nn.Parameter(lib.ones(3)),
            lib.nn.Parameter(lib.tensor(2.0)),
        ]
        opt = lib.optim.Adafactor(ps)
        for p in ps:
            p.grad = lib.ones_like(p)
        opt.step()
        sd = opt.state_dict()
        return (
            [
                {k: (str(v.dtype), tuple(v.shape)) for k, v in st.items()}
                for st in sd["state"].values()
            ],
            sd["param_groups"],
            repr(opt),
        )

    same_outcome(state)
    same_outcome(
        lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))]).state_dict()["param_groups"]
    )
