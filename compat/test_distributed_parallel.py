"""Tensor parallelism, pipelining, distributed optimizers, differentiable collectives and the
launcher in a world of one process: the same calls under PyTorch (gloo, world_size=1) and
jtorch give the same values, placements and errors."""

import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.dist_common import outcome, worlds  # noqa: E402,F401 - a fixture
from tests.helpers import numpy_mlp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _vals(t) -> list:
    return np.round(np.asarray(t.detach().tolist(), dtype=np.float64), 5).tolist()


def _tp_scenario(lib):
    from importlib import import_module

    tp = import_module(f"{lib.__name__}.distributed.tensor.parallel")
    dt = import_module(f"{lib.__name__}.distributed.tensor")
    ex = import_module(f"{lib.__name__}.distributed.tensor.experimental")
    mesh = lib.distributed.init_device_mesh("cpu", (1,))
    x = lib.tensor(np.random.default_rng(1).standard_normal((5, 4)), dtype=lib.float32)
    ref = numpy_mlp(lib, 4, 8, 3)
    yr = ref(x)
    yr.sum().backward()
    net = tp.parallelize_module(
        numpy_mlp(lib, 4, 8, 3), mesh, {"0": tp.ColwiseParallel(), "2": tp.RowwiseParallel()}
    )
    out = [[(n, type(p).__name__, repr(p.placements)) for n, p in net.named_parameters()]]
    y = net(x)
    y.sum().backward()
    out += [
        type(y).__name__,
        _vals(y) == _vals(yr),
        [
            _vals(p.grad.full_tensor()) == _vals(q.grad)
            for p, q in zip(net.parameters(), ref.parameters())
        ],
    ]
    emb = tp.parallelize_module(
        lib.nn.Embedding(6, 4), mesh, tp.ColwiseParallel(output_layouts=dt.Replicate())
    )
    out += [repr(emb.weight.placements), type(emb(lib.tensor([1, 2]))).__name__]
    ln = tp.parallelize_module(lib.nn.LayerNorm(4), mesh, tp.SequenceParallel())
    o = ln(lib.ones(2, 3, 4))
    out += [type(o).__name__, repr(o.placements), repr(ln.weight.placements)]
    pm = tp.parallelize_module(
        lib.nn.Identity(),
        mesh,
        tp.PrepareModuleInput(
            input_layouts=(dt.Shard(0),), desired_input_layouts=(dt.Replicate(),)
        ),
    )
    o = pm(lib.ones(2, 2))
    out += [type(o).__name__, repr(o.placements)]
    out.append(outcome(lambda: tp.parallelize_module(lib.nn.ReLU(), mesh, tp.ColwiseParallel())))
    f = ex.local_map(lambda a: a * 2, out_placements=[dt.Replicate()])
    r = f(dt.distribute_tensor(lib.ones(2), mesh, [dt.Replicate()]))
    out += [type(r).__name__, repr(r.placements), _vals(r.to_local())]
    with ex.implicit_replication():
        out.append(
            type(dt.distribute_tensor(lib.ones(2), mesh, [dt.Replicate()]) + lib.ones(2)).__name__
        )
    with ex.context_parallel(mesh, buffers=[lib.ones(2, 4)], buffer_seq_dims=[1]):
        out.append("in context")
    out.append(
        outcome(
            lambda: ex.context_parallel(mesh, buffers=[lib.ones(2)], buffer_seq_dims=[]).__enter__()
        )
    )
    return out


def test_tensor_parallel(worlds):
    assert _tp_scenario(jtorch) == _tp_scenario(torch)


def _pipeline_scenario(lib):
    from importlib import import_module

    pp = import_module(f"{lib.__name__}.distributed.pipelining")
    rng = np.random.default_rng(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
    x = lib.tensor(rng.standard_normal((8, 3)), dtype=lib.float32)
    y = lib.tensor(rng.standard_normal((8, 1)), dtype=lib.float32)
    stage = pp.PipelineStage(net, stage_index=0, num_stages=1, device=lib.device("cpu"))
    out = []
    for cls in (pp.ScheduleGPipe, pp.Schedule1F1B):
        net.zero_grad()
        losses = []
        res = cls(stage, n_microbatches=4, loss_fn=lib.nn.functional.mse_loss).step(
            x, target=y, losses=losses
        )
        out += [
            type(res).__name__,
            tuple(res.shape),
            [round(float(v), 5) for v in losses],
            _vals(net[0].weight.grad),
        ]
    out += [
        pp.pipe_split(),
        [s.name for s in pp.SplitPoint],
        tuple(pp.ScheduleGPipe(stage, n_microbatches=2).step(x).shape),
    ]
    return out


def test_pipelining(worlds):
    assert _pipeline_scenario(jtorch) == _pipeline_scenario(torch)


def _optim_scenario(lib):
    from importlib import import_module

    dopt = import_module(f"{lib.__name__}.distributed.optim")
    av = import_module(f"{lib.__name__}.distributed.algorithms.model_averaging.averagers")
    fn = import_module(f"{lib.__name__}.distributed.nn.functional")
    du = import_module(f"{lib.__name__}.distributed.utils")
    out = []
    net = numpy_mlp(lib, 4, 8, 3)
    z = dopt.ZeroRedundancyOptimizer(net.parameters(), lib.optim.Adam, lr=0.1)
    for _ in range(2):
        net(lib.ones(2, 4)).sum().backward()
        z.step()
        z.zero_grad()
    out += [_vals(net[0].weight), outcome(lambda: z.state_dict())]
    z.consolidate_state_dict(to=0)
    sd = z.state_dict()
    out += [sorted(sd), sorted(sd["state"]), sd["param_groups"][0]["lr"]]
    net2 = numpy_mlp(lib, 4, 8, 3)
    opt = dopt.PostLocalSGDOptimizer(
        lib.optim.SGD(net2.parameters(), lr=0.1), av.PeriodicModelAverager(period=2, warmup_steps=1)
    )
    for _ in range(3):
        net2(lib.ones(2, 4)).sum().backward()
        opt.step()
        opt.zero_grad()
    out += [_vals(net2[0].weight), opt.state_dict()["step"]]
    t = lib.arange(3.0, requires_grad=True)
    # PyTorch binds these functions' default group when it imports them, so a world made
    # after another was destroyed must be passed explicitly.
    world = lib.distributed.group.WORLD
    g = fn.all_gather(t, group=world)
    r = fn.all_reduce(t * 2, group=world)
    (g[0].sum() + r.sum()).backward()
    out += [len(g), _vals(g[0]), _vals(r), _vals(t.grad)]
    du._sync_module_states(
        net, lib.distributed.distributed_c10d._get_default_group(), 250 * 1024 * 1024, 0, set()
    )
    out.append(_vals(net[0].bias))
    out.append(du._pack_kwargs(1, 2, a=3))
    return out


def test_optimizers_functional_collectives_utils(worlds):
    assert _optim_scenario(jtorch) == _optim_scenario(torch)


SCRIPT = """
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(2) * 3
dist.all_reduce(t)
print("rank", dist.get_rank(), "world", dist.get_world_size(), os.environ["LOCAL_RANK"],
      os.environ["LOCAL_WORLD_SIZE"], dist.is_torchelastic_launched(), t.tolist())
dist.destroy_process_group()
"""

FAILING = """
from torch.distributed.elastic.multiprocessing.errors import record
@record
def main():
    raise ValueError("boom")
main()
"""


def _launch(runner: list, script: str, tmp_path, name: str, *flags):
    path = tmp_path / name
    path.write_text(script)
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(
        runner + ["-m", "torch.distributed.run", *flags, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )


def test_torchrun_one_process(tmp_path):
    t = _launch([sys.executable], SCRIPT, tmp_path, "s.py", "--nproc-per-node", "1")
    j = _launch([sys.executable, "-m", "jtorch"], SCRIPT, tmp_path, "s.py", "--nproc-per-node", "1")
    assert t.returncode == j.returncode == 0, j.stderr
    assert j.stdout == t.stdout
    t = _launch([sys.executable], FAILING, tmp_path, "f.py", "--standalone")
    j = _launch([sys.executable, "-m", "jtorch"], FAILING, tmp_path, "f.py", "--standalone")
    assert t.returncode == j.returncode == 1
    for out in (t.stderr, j.stderr):
        assert "ChildFailedError" in out and "f.py FAILED" in out
        assert "ValueError: boom" in out and "exitcode  : 1" in out
