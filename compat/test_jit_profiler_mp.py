"""Parity of torch.jit, torch.profiler, torch.multiprocessing, nn.DataParallel and F additions.

jtorch has no TorchScript: what is compared is what a program sees (types for isinstance,
reprs, state_dict keys, shared parameters, outputs, errors). Profiler timings differ by
nature; the schedule, the recorded range names and counts, and the table layout match.
Spawning jtorch children is tested in tests/test_jit_profiler_mp.py (no torch needed).
"""

import sys
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

_rng = np.random.default_rng(0)


def _pair(seed=0):
    """The same Sequential in both libraries (PyTorch's weights copied)."""
    torch.manual_seed(seed)
    tm = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
    jm = jtorch.nn.Sequential(jtorch.nn.Linear(2, 3), jtorch.nn.ReLU())
    jm.load_state_dict({k: jtorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, jm


def _err(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return type(e).__name__, str(e)
    return None


def scaled(x: torch.Tensor, k: int) -> torch.Tensor:
    return x * k + 1


# ---------------------------------------------------------------------------
# torch.jit


@pytest.mark.filterwarnings("ignore")
def test_jit_script_and_trace_look_the_same():
    x = _rng.standard_normal((4, 2)).astype(np.float32)
    for make in (lambda lib, m: lib.jit.script(m), lambda lib, m: lib.jit.trace(m, lib.tensor(x))):
        tm, jm = _pair()
        ts, js = make(torch, tm), make(jtorch, jm)
        assert repr(js) == repr(ts)
        assert type(js).__name__ == type(ts).__name__
        assert isinstance(js, jtorch.jit.ScriptModule) and isinstance(ts, torch.jit.ScriptModule)
        assert list(js.state_dict()) == list(ts.state_dict())
        assert (js._modules["0"].weight is jm[0].weight) == (
            ts._modules["0"].weight is tm[0].weight
        )
        np.testing.assert_allclose(
            js(jtorch.tensor(x)).detach().numpy(), ts(torch.tensor(x)).detach().numpy(), rtol=1e-6
        )
        tm.eval()
        jm.eval()
        assert js.training == ts.training
    ts, js = torch.jit.script(scaled), jtorch.jit.script(scaled)
    assert js.name == ts.name and isinstance(js, jtorch.jit.ScriptFunction)
    np.testing.assert_allclose(js(jtorch.tensor(x), 3).numpy(), ts(torch.tensor(x), 3).numpy())
    flags = {}
    for lib in (torch, jtorch):
        seen = []  # PyTorch traces, re-traces and runs eagerly to check: three calls

        def f(a, lib=lib, seen=seen):
            seen.append(lib.jit.is_tracing())
            return a * 2

        lib.jit.trace(f, lib.ones(2))
        flags[lib.__name__] = (seen, lib.jit.is_tracing(), lib.jit.is_scripting())
    assert flags["jtorch"] == flags["torch"]


@pytest.mark.filterwarnings("ignore")
def test_jit_errors_and_helpers_match():
    tm, jm = _pair()
    cases = [
        lambda lib, m: lib.jit.freeze(m),
        lambda lib, m: lib.jit.freeze(lib.jit.script(m)),
        lambda lib, m: lib.jit.optimize_for_inference(m),
        lambda lib, m: lib.jit.script(3),
        lambda lib, m: lib.jit.save(m, "unused.pt"),
        lambda lib, m: lib.jit.trace(m, (lib.ones(1, 2), lib.ones(1, 2))),
        lambda lib, m: lib.jit.fuser("fuser9").__enter__(),
        lambda lib, m: lib.jit.fork(lambda: [][1]),
    ]
    for case in cases:
        assert _err(case, jtorch, jm) == _err(case, torch, tm)
    for lib in (torch, jtorch):
        fut = lib.jit.fork(lambda a, b: a + b, lib.tensor([1.0]), b=lib.tensor([2.0]))
        assert lib.jit.wait(fut).tolist() == [3.0] and fut.done()
    checks = [
        ([1, 2], List[int]),
        ([1, "a"], List[int]),
        ({"a": 1}, Dict[str, int]),
        (None, Optional[int]),
        ((1, "a"), Tuple[int, str]),
        (3, List[int]),
    ]
    got = [jtorch.jit.isinstance(v, t) for v, t in checks]
    assert got == [torch.jit.isinstance(v, t) for v, t in checks]
    assert repr(jtorch.jit.Attribute(3, int)) == repr(torch.jit.Attribute(3, int))
    assert jtorch.jit.annotate(list, []) == torch.jit.annotate(list, []) == []
    assert jtorch.jit.Final is torch.jit.Final


# ---------------------------------------------------------------------------
# torch.profiler


@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")
def test_profiler_schedule_matches():
    params = [
        dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1),
        dict(wait=2, warmup=0, active=1),
        dict(wait=3, warmup=1, active=1, skip_first=2, skip_first_wait=1),
    ]
    for p in params:
        ts, js = torch.profiler.schedule(**p), jtorch.profiler.schedule(**p)
        assert [js(i).name for i in range(14)] == [ts(i).name for i in range(14)]
    bad = dict(wait=-1, warmup=1, active=0)
    assert _err(jtorch.profiler.schedule, **bad) == _err(torch.profiler.schedule, **bad)
    assert [a.name for a in jtorch.profiler.ProfilerAction] == [
        a.name for a in torch.profiler.ProfilerAction
    ]
    assert {"CPU", "CUDA"} <= set(jtorch.profiler.ProfilerActivity.__members__)


def _profile_run(lib):
    """Record ranges under a schedule; the names and counts each trace-ready call saw."""
    seen = []

    def ready(prof):
        avg = prof.key_averages()
        seen.append(
            sorted(
                (e.key, e.count) for e in avg if e.key.startswith(("ProfilerStep", "it", "inner"))
            )
        )

    sched = lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    with lib.profiler.profile(
        activities=[lib.profiler.ProfilerActivity.CPU], schedule=sched, on_trace_ready=ready
    ) as p:
        for i in range(9):
            with lib.profiler.record_function(f"it{i}"):
                with lib.profiler.record_function("inner"):
                    pass
            p.step()
    legacy = lib.autograd.profiler.profile()
    err = _err(legacy.key_averages)
    with legacy:
        with lib.autograd.profiler.record_function("one"):
            pass
    table = legacy.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    user = [e for e in legacy.key_averages() if e.key == "one"]
    return seen, err, [(e.key, e.count) for e in user], table.splitlines()[1].split()


@pytest.mark.filterwarnings("ignore")
def test_profiler_records_the_same_ranges():
    assert _profile_run(jtorch) == _profile_run(torch)


# ---------------------------------------------------------------------------
# torch.multiprocessing


def test_profiler_records_op_calls():
    counts = {}
    for lib in (torch, jtorch):
        lib.manual_seed(0)
        m, x = lib.nn.Linear(8, 4), lib.randn(16, 8)
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU]) as prof:
            with lib.profiler.record_function("forward"):
                for _ in range(3):
                    m(x).relu().sum()
        avg = {e.key: e.count for e in prof.key_averages()}
        counts[lib.__name__] = [
            avg.get(k) for k in ("forward", "aten::linear", "aten::relu", "aten::sum")
        ]
    assert counts["jtorch"] == counts["torch"] == [1, 3, 3, 3]


def test_multiprocessing_api_and_exit_code_error():
    names = [
        "Process",
        "Queue",
        "Pool",
        "Pipe",
        "Event",
        "Lock",
        "Manager",
        "SimpleQueue",
        "get_context",
        "set_start_method",
        "get_start_method",
        "get_all_start_methods",
        "cpu_count",
        "current_process",
        "spawn",
        "start_processes",
        "ProcessContext",
        "ProcessRaisedException",
        "ProcessExitedException",
        "SpawnContext",
        "get_sharing_strategy",
        "set_sharing_strategy",
        "get_all_sharing_strategies",
    ]
    assert [n for n in names if not hasattr(jtorch.multiprocessing, n)] == []
    assert (
        jtorch.multiprocessing.get_all_sharing_strategies()
        == torch.multiprocessing.get_all_sharing_strategies()
    )
    assert (
        jtorch.multiprocessing.get_sharing_strategy()
        == torch.multiprocessing.get_sharing_strategy()
    )
    assert _err(jtorch.multiprocessing.set_sharing_strategy, "x") == _err(
        torch.multiprocessing.set_sharing_strategy, "x"
    )
    out = []
    for lib in (torch, jtorch):
        p = lib.multiprocessing.get_context("spawn").Process(target=sys.exit, args=(2,))
        p.start()
        try:
            lib.multiprocessing.ProcessContext([p], ["/nonexistent/err.pickle"]).join()
        except lib.multiprocessing.ProcessExitedException as e:
            out.append((str(e), e.exit_code, e.error_index))
    assert out[0] == out[1] == ("process 0 terminated with exit code 2", 2, 0)


# ---------------------------------------------------------------------------
# nn.DataParallel (CPU: PyTorch's DataParallel just calls the module)


@pytest.mark.skipif(jtorch.cuda.is_available(), reason="PyTorch here is a CPU build")
def test_data_parallel_matches():
    tm, jm = _pair()
    tdp, jdp = torch.nn.DataParallel(tm), jtorch.nn.DataParallel(jm)
    assert repr(jdp) == repr(tdp) and jdp.device_ids == tdp.device_ids
    assert list(jdp.state_dict()) == list(tdp.state_dict())
    x = _rng.standard_normal((4, 2)).astype(np.float32)
    to, jo = tdp(torch.tensor(x)), jdp(jtorch.tensor(x))
    np.testing.assert_allclose(jo.detach().numpy(), to.detach().numpy(), rtol=1e-6)
    to.sum().backward()
    jo.sum().backward()
    np.testing.assert_allclose(jm[0].weight.grad.numpy(), tm[0].weight.grad.numpy(), rtol=1e-6)
    case = lambda lib, m: lib.nn.parallel.data_parallel(m, lib.ones(1, 2))
    assert _err(case, jtorch, jm) == _err(case, torch, tm)


# ---------------------------------------------------------------------------
# nn.functional additions


def _pool_case(name, x, *args, **kwargs):
    t_in = torch.tensor(x, requires_grad=True)
    j_in = jtorch.tensor(x, requires_grad=True)
    t_out, t_idx = getattr(torch.nn.functional, name)(t_in, *args, **kwargs)
    j_out, j_idx = getattr(jtorch.nn.functional, name)(j_in, *args, **kwargs)
    np.testing.assert_array_equal(j_out.detach().numpy(), t_out.detach().numpy())
    np.testing.assert_array_equal(j_idx.numpy(), t_idx.numpy())
    assert str(j_idx.dtype) == str(t_idx.dtype)
    w = _rng.standard_normal(tuple(t_out.shape)).astype(np.float32)
    (t_out * torch.tensor(w)).sum().backward()
    (j_out * jtorch.tensor(w)).sum().backward()
    np.testing.assert_allclose(j_in.grad.numpy(), t_in.grad.numpy(), rtol=1e-6)


def test_with_indices_pools_match():
    x4 = _rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    x5 = _rng.standard_normal((1, 2, 4, 5, 6)).astype(np.float32)
    _pool_case("adaptive_max_pool1d_with_indices", x4[0], 4)
    _pool_case("adaptive_max_pool2d_with_indices", x4, (2, 4))
    _pool_case("adaptive_max_pool3d_with_indices", x5, 3)
    s2 = _rng.uniform(size=(2, 3, 2)).astype(np.float32)
    s3 = _rng.uniform(size=(1, 2, 3)).astype(np.float32)
    for s, nd, x, k, out in ((s2, 2, x4, 2, (3, 4)), (s3, 3, x5, 2, (2, 3, 3))):
        name = f"fractional_max_pool{nd}d_with_indices"
        t_res = getattr(torch.nn.functional, name)(
            torch.tensor(x), k, output_size=out, _random_samples=torch.tensor(s)
        )
        j_res = getattr(jtorch.nn.functional, name)(
            jtorch.tensor(x), k, output_size=out, _random_samples=jtorch.tensor(s)
        )
        for a, b in zip(j_res, t_res):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    bad = [(lambda lib: lib.nn.functional.adaptive_max_pool2d_with_indices(lib.ones(3), 2))]
    for case in bad:
        assert _err(case, jtorch) == _err(case, torch)
    xs = _rng.standard_normal((2, 6, 3)).astype(np.float32)
    np.testing.assert_array_equal(
        jtorch.nn.functional.native_channel_shuffle(jtorch.tensor(xs), 3).numpy(),
        torch.nn.functional.native_channel_shuffle(torch.tensor(xs), 3).numpy(),
    )


def _gumbel_relations(lib):
    """Same seed, soft then hard: the hard one-hot is the soft argmax, with its gradient."""
    logits = lib.tensor(_rng.standard_normal((5, 4)).astype(np.float32), requires_grad=True)
    w = lib.tensor([1.0, -2.0, 3.0, 0.5])
    lib.manual_seed(3)
    soft = lib.nn.functional.gumbel_softmax(logits, tau=0.7, dim=1)
    (soft * w).sum().backward()
    g_soft = logits.grad.numpy().copy()
    logits.grad = None
    lib.manual_seed(3)
    hard = lib.nn.functional.gumbel_softmax(logits, tau=0.7, hard=True, dim=1)
    (hard * w).sum().backward()
    onehot = np.eye(4)[soft.detach().numpy().argmax(1)]
    np.testing.assert_allclose(hard.detach().numpy(), onehot, atol=1e-6)
    np.testing.assert_allclose(logits.grad.numpy(), g_soft, rtol=1e-5, atol=1e-6)
    lib.manual_seed(0)
    base = lib.tensor([0.0, 1.0, 2.0])
    counts = lib.nn.functional.gumbel_softmax(base.expand(4000, 3), hard=True).sum(0)
    return str(hard.dtype).split(".")[-1], tuple(hard.shape), counts.numpy() / 4000


def test_gumbel_softmax_matches_in_distribution():
    jd, js, jf = _gumbel_relations(jtorch)
    td, ts, tf = _gumbel_relations(torch)
    assert (jd, js) == (td, ts)
    p = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    np.testing.assert_allclose(jf, p, atol=0.03)
    np.testing.assert_allclose(tf, p, atol=0.03)
