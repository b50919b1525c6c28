"""torch.jit, torch.profiler, torch.multiprocessing, nn.DataParallel and the F additions.

Expected values come from PyTorch's documented behaviour (schedules, reprs, error texts)
and from mathematics (one-hot structure, self time = total - children).
"""

import json
import multiprocessing
import os
import pickle
import sys
import time
import typing

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from jtorch import jit, nn
from jtorch.profiler import ProfilerAction, profile, record_function, schedule
from tests.helpers import close, same


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU())


# ---------------------------------------------------------------------------
# torch.jit


def test_script_module_shares_parameters_and_prints_as_pytorch():
    m = _net()
    s = jit.script(m)
    assert isinstance(s, jit.ScriptModule) and isinstance(s, jit.RecursiveScriptModule)
    assert isinstance(s[0], jit.RecursiveScriptModule)
    assert s[0].weight is m[0].weight
    assert list(s.state_dict()) == ["0.weight", "0.bias"]
    assert repr(s) == (
        "RecursiveScriptModule(\n  original_name=Sequential\n"
        "  (0): RecursiveScriptModule(original_name=Linear)\n"
        "  (1): RecursiveScriptModule(original_name=ReLU)\n)"
    )
    x = torch.ones(1, 2)
    same(s(x), m(x).detach().numpy())
    m.eval()  # the scripted module keeps its own training flag
    assert s.training and jit.script(s) is s
    with pytest.raises(AttributeError, match="has no TorchScript graph"):
        assert s.graph is None
    with pytest.raises(RuntimeError, match=r"torch.save\(model.state_dict\(\), path\)"):
        jit.save(s, "unused.pt")
    with pytest.raises(RuntimeError, match="TorchScript archives is not supported"):
        jit.load("unused.pt")
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'save'"):
        jit.save(nn.Linear(1, 1), "unused.pt")


class _WithAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = jit.Attribute(2.0, float)

    def forward(self, x):
        return x * self.scale


def test_trace_runs_once_while_tracing_and_keeps_python():
    seen = []

    def f(x):
        seen.append(jit.is_tracing())
        return x * 2

    tf = jit.trace(f, torch.ones(2))
    # PyTorch traces, then with check_trace re-traces and compares with an eager run.
    assert seen == [True, True, False] and not jit.is_tracing() and not jit.is_scripting()
    assert isinstance(tf, jit.ScriptFunction) and tf.name == "f"
    same(tf(torch.tensor([1.0, 3.0])), [2.0, 6.0])
    t = jit.trace(_net(), torch.ones(1, 2))
    assert isinstance(t, jit.TopLevelTracedModule)
    assert repr(t).splitlines()[:3] == [
        "Sequential(",
        "  original_name=Sequential",
        "  (0): Linear(original_name=Linear)",
    ]
    s = jit.script(_WithAttribute())  # Attribute(value, type) becomes the value
    same(s(torch.ones(1)), [2.0])
    tm = jit.trace_module(_net(), {"forward": torch.ones(1, 2)})
    assert isinstance(tm, jit.TopLevelTracedModule)


def test_freeze_optimize_for_inference_and_helpers():
    m = _net()
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        jit.freeze(m)
    s = jit.script(m)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        jit.freeze(s)
    assert jit.freeze(s.eval()) is s
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
        jit.optimize_for_inference(m)
    s.train()
    assert jit.optimize_for_inference(s) is s and not s.training
    with pytest.raises(TypeError, match="<class 'int'> is a built-in class"):
        jit.script(3)

    @jit.ignore(drop=True)
    def g(x):
        return x + 1

    assert jit.ignore(g) is g and jit.unused(g) is g and jit.export(g) is g and g(1) == 2
    fut = jit.fork(lambda a, b: a * b, 3, b=4)
    assert fut.done() and jit.wait(fut) == 12 and fut.then(lambda f: f.wait() + 1).wait() == 13
    with pytest.raises(ValueError, match="boom"):
        jit.fork(lambda: (_ for _ in ()).throw(ValueError("boom")))
    assert jit.annotate(list, [1]) == [1] and jit.Final is typing.Final
    assert jit.isinstance([1, 2], list[int]) and not jit.isinstance([1, "a"], list[int])
    assert jit.isinstance({"a": torch.ones(1)}, typing.Dict[str, torch.Tensor])
    assert jit.isinstance(None, typing.Optional[int]) and jit.isinstance((1, "a"), tuple[int, str])
    with pytest.raises(Exception, match=r"unrecognized fuser option \(name: fuser9\)"):
        with jit.fuser("fuser9"):
            pass


# ---------------------------------------------------------------------------
# torch.profiler


def test_schedule_follows_pytorch_cycle():
    N, W, R, S = (
        ProfilerAction.NONE,
        ProfilerAction.WARMUP,
        ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE,
    )
    s = schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    assert [s(i) for i in range(11)] == [N, N, W, R, S, N, W, R, S, N, N]
    s = schedule(wait=2, warmup=1, active=1, skip_first_wait=1)
    assert [s(i) for i in range(6)] == [W, S, N, N, W, S]
    with pytest.warns(UserWarning, match="won't be using warmup"):
        s = schedule(wait=0, warmup=0, active=1)
    assert [s(i) for i in range(3)] == [S, S, S]
    with pytest.raises(AssertionError, match=r"active=0 \(need > 0\)"):
        schedule(wait=0, warmup=1, active=0)


def test_record_function_ranges_nest_and_average():
    with profile() as p:
        with record_function("outer"):
            time.sleep(0.002)
            with record_function("inner"):
                time.sleep(0.001)
        with record_function("inner"):
            pass
    ev = {e.key: e for e in p.key_averages()}
    assert list(ev) == ["outer", "inner"]
    assert (ev["outer"].count, ev["inner"].count) == (1, 2)
    outer = [e for e in p.events() if e.name == "outer"][0]
    inner = outer.cpu_children[0]
    assert inner.name == "inner" and inner.cpu_parent is outer
    assert outer.cpu_time_total >= 3000 and inner.cpu_time_total >= 1000
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - inner.cpu_time_total)
    table = p.key_averages().table(sort_by="cpu_time_total", row_limit=1)
    lines = table.splitlines()
    assert lines[1].split() == [
        "Name",
        "Self",
        "CPU",
        "%",
        "Self",
        "CPU",
        "CPU",
        "total",
        "%",
        "CPU",
        "total",
        "CPU",
        "time",
        "avg",
        "#",
        "of",
        "Calls",
    ]
    assert lines[3].split()[0] == "outer" and len(lines) == 6
    assert lines[5].startswith("Self CPU time total: ")


def test_schedule_steps_trace_ready_and_chrome_trace(tmp_path):
    keys = []
    handler = torch.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    with pytest.warns(UserWarning):
        sched = schedule(wait=1, warmup=0, active=2, repeat=1)

    def ready(prof):
        keys.append([e.key for e in prof.key_averages()])
        handler(prof)

    with profile(schedule=sched, on_trace_ready=ready) as p:
        for i in range(5):
            with record_function(f"it{i}"):
                pass
            p.step()
    # Step ranges average together as "ProfilerStep*"; the trace keeps their numbers.
    assert keys == [["ProfilerStep*", "it1", "it2"]]
    (name,) = os.listdir(tmp_path / "tb")
    assert name.startswith("w.") and name.endswith(".pt.trace.json")
    trace = json.load(open(tmp_path / "tb" / name))
    assert [e["name"] for e in trace["traceEvents"]] == [
        "ProfilerStep#1",
        "it1",
        "ProfilerStep#2",
        "it2",
    ]
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in trace["traceEvents"])


def test_legacy_autograd_profiler_and_decorator():
    @record_function("deco")
    def f():
        return 1

    prof = torch.autograd.profiler.profile()
    assert list(prof.key_averages()) == []  # nothing yet, as PyTorch answers
    with pytest.raises(AssertionError, match="must be initialized before getting key"):
        profile().key_averages()
    with prof:
        f()
        f()
    assert [(e.key, e.count) for e in prof.key_averages()] == [("deco", 2)]
    assert torch.autograd.profiler.record_function is record_function
    f()  # no profiler: nothing recorded, nothing raised


# ---------------------------------------------------------------------------
# torch.multiprocessing (no jax child here: the compat suite spawns jtorch children)


def test_sharing_strategies_and_exports():
    mp = torch.multiprocessing
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(AssertionError, match="invalid sharing strategy 'bad'"):
        mp.set_sharing_strategy("bad")
    assert mp.Queue is multiprocessing.Queue and mp.get_context is multiprocessing.get_context
    e = pickle.loads(pickle.dumps(mp.ProcessExitedException("m", 1, 2, 3, "SIGX")))
    assert (e.msg, e.error_index, e.error_pid, e.exit_code, e.signal_name) == ("m", 1, 2, 3, "SIGX")


def test_process_context_raises_for_failed_child(tmp_path):
    mp = torch.multiprocessing
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=sys.exit, args=(3,))
    p.start()
    missing = str(tmp_path / "none.pickle")
    with pytest.raises(
        mp.ProcessExitedException, match="process 0 terminated with exit code 3"
    ) as info:
        mp.ProcessContext([p], [missing]).join()
    assert info.value.exit_code == 3 and info.value.error_index == 0
    # A child whose error file holds a traceback: ProcessRaisedException carries it.
    p = ctx.Process(target=sys.exit, args=(1,))
    p.start()
    err = str(tmp_path / "err.pickle")
    with open(err, "wb") as f:
        pickle.dump("Traceback ...\nValueError: boom\n", f)
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.ProcessContext([p], [err]).join()
    assert str(info.value) == (
        "\n\n-- Process 0 terminated with the following error:\nTraceback ...\nValueError: boom\n"
    )


def _spawned(i, q, ready):
    if i == 1:
        ready.wait()
        raise ValueError(f"boom from {i}")
    q.put((i, torch.arange(3.0) * 2, torch.ones(2, requires_grad=True)))
    ready.set()


def test_spawn_passes_tensors_and_raises_the_child_error():
    mp = torch.multiprocessing
    ctx = mp.get_context("spawn")
    q, ready = ctx.Queue(), ctx.Event()
    pc = mp.spawn(_spawned, args=(q, ready), nprocs=2, join=False)
    assert len(pc.pids()) == 2
    i, t, g = q.get(timeout=300)
    assert i == 0 and type(t) is torch.Tensor and g.requires_grad
    same(t, [0.0, 2.0, 4.0])
    with pytest.raises(mp.ProcessRaisedException) as info:
        while not pc.join():
            pass
    lines = str(info.value).strip().splitlines()
    assert info.value.error_index == 1
    assert lines[0] == "-- Process 1 terminated with the following error:"
    assert lines[-1] == "ValueError: boom from 1"


def test_spawn_under_the_alias_gives_children_the_alias(monkeypatch):
    import sys

    from jtorch import _alias

    _spawn = sys.modules["jtorch.multiprocessing.spawn"]
    calls = []
    monkeypatch.setattr(_alias, "install_in_children", lambda: calls.append(1))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    _spawn._alias_for_children()
    assert calls == []
    monkeypatch.setitem(sys.modules, "torch", torch)
    _spawn._alias_for_children()
    assert calls == [1]


# ---------------------------------------------------------------------------
# nn.DataParallel


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-build behaviour")
def test_data_parallel_on_cpu_calls_the_module():
    m = nn.Linear(2, 3)
    dp = nn.DataParallel(m)
    assert dp.module is m and dp.device_ids == []
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp) == (
        "DataParallel(\n  (module): Linear(in_features=2, out_features=3, bias=True)\n)"
    )
    x = torch.ones(4, 2)
    same(dp(x).detach(), m(x).detach().numpy())
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        nn.parallel.data_parallel(m, x)  # PyTorch's functional form needs an accelerator
    dp(x).sum().backward()
    same(m.bias.grad, [4.0, 4.0, 4.0])


# ---------------------------------------------------------------------------
# nn.functional additions


def test_gumbel_softmax_hard_is_straight_through():
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]], requires_grad=True)
    w = torch.tensor([1.0, -2.0, 3.0])
    torch.manual_seed(5)
    soft = F.gumbel_softmax(logits, tau=0.5)
    (soft * w).sum().backward()
    g_soft = logits.grad.clone()
    logits.grad = None
    torch.manual_seed(5)  # the same noise
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    (hard * w).sum().backward()
    onehot = np.eye(3)[soft.detach().numpy().argmax(-1)]
    close(hard.detach(), onehot)
    close(logits.grad, g_soft.numpy())
    close(soft.detach().sum(-1), [1.0, 1.0])
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(logits, eps=1e-3)


def test_gumbel_softmax_samples_the_softmax():
    # Gumbel-max: the argmax of a hard sample is distributed as softmax(logits).
    torch.manual_seed(0)
    logits = torch.tensor([0.0, 1.0, 2.0]).log_softmax(0).expand(4000, 3)
    counts = F.gumbel_softmax(logits, hard=True).sum(0).numpy()
    p = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    np.testing.assert_allclose(counts / 4000, p, atol=0.03)


def test_with_indices_pools_and_native_channel_shuffle():
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    out, idx = F.adaptive_max_pool2d_with_indices(x, 2)
    same(out, [[[[5.0, 7.0], [13.0, 15.0]]]])
    same(idx, [[[[5, 7], [13, 15]]]])
    out, idx = F.adaptive_max_pool1d_with_indices(torch.tensor([[[3.0, 1.0, 4.0, 1.0]]]), 2)
    same(out, [[[3.0, 4.0]]])
    same(idx, [[[0, 2]]])
    out, idx = F.adaptive_max_pool3d_with_indices(x.reshape(1, 1, 1, 4, 4), (1, 1, 1))
    same(out, [[[[[15.0]]]]])
    same(idx, [[[[[15]]]]])
    samples = torch.full((1, 1, 2), 0.5)
    out, idx = F.fractional_max_pool2d_with_indices(x, 2, output_size=2, _random_samples=samples)
    same(out, [[[[5.0, 7.0], [13.0, 15.0]]]])
    same(idx, [[[[5, 7], [13, 15]]]])
    samples3 = torch.full((1, 1, 3), 0.5)
    out, idx = F.fractional_max_pool3d_with_indices(
        x.reshape(1, 1, 1, 4, 4), (1, 2, 2), output_size=(1, 2, 2), _random_samples=samples3
    )
    same(idx, [[[[[5, 7], [13, 15]]]]])
    same(
        F.native_channel_shuffle(torch.arange(4.0).reshape(1, 4, 1), 2).flatten(),
        [0.0, 2.0, 1.0, 3.0],
    )


def test_profiler_records_each_op_call_and_unhooks():
    from jtorch._ops import _dispatch

    x = torch.ones(4)
    with torch.profiler.profile() as prof:
        for _ in range(2):
            (x * 2).sin()
    assert _dispatch.profile_hook is None  # no cost once no profiler records
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["aten::mul"] == 2 and counts["aten::sin"] == 2
    assert all(e.cpu_time_total >= 0 for e in prof.events())


def test_autograd_profiler_enabled_and_disable():
    jtorch = torch
    assert not jtorch.autograd._profiler_enabled()
    with jtorch.profiler.profile():
        jtorch.ones(2) + 1
        assert jtorch.autograd._profiler_enabled()
        events = jtorch.autograd._disable_profiler()
        assert any("add" in e.name for e in events)
        assert not jtorch.autograd._profiler_enabled()
    assert jtorch.profiler.profiler._default_schedule_fn(5) == jtorch.profiler.ProfilerAction.RECORD
