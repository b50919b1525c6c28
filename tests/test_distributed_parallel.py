"""Tensor parallelism, pipelining, distributed optimizers, differentiable collectives,
elastic error records and the launcher, in a world of one process (every collective over one
rank is the identity, so sharded modules compute what unsharded ones do)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import jtorch
import jtorch.distributed as dist
from jtorch.distributed.elastic.multiprocessing.errors import (
    ChildFailedError,
    ProcessFailure,
    record,
)
from jtorch.distributed.tensor import DTensor, Replicate, Shard
from tests.helpers import numpy_mlp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def mesh():
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    yield dist.init_device_mesh("cpu", (1,))
    dist.destroy_process_group()


def test_colwise_rowwise_mlp_matches_the_unsharded_one(mesh):
    from jtorch.distributed.tensor.parallel import (
        ColwiseParallel,
        RowwiseParallel,
        parallelize_module,
    )

    x = jtorch.ones(5, 4)
    ref = numpy_mlp(jtorch, 4, 8, 3)
    ref(x).sum().backward()
    net = parallelize_module(
        numpy_mlp(jtorch, 4, 8, 3), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()}
    )
    assert net[0].weight.placements == (Shard(0),) and net[2].weight.placements == (Shard(1),)
    assert net[2].bias.placements == (Replicate(),)
    y = net(x)
    assert type(y) is jtorch.Tensor
    np.testing.assert_allclose(y.tolist(), ref(x).tolist(), rtol=1e-6)
    y.sum().backward()
    for p, q in zip(net.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.full_tensor().numpy(), q.grad.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="only support nn.Linear"):
        parallelize_module(jtorch.nn.ReLU(), mesh, ColwiseParallel())


def test_local_map_and_implicit_replication(mesh):
    from jtorch.distributed.tensor import distribute_tensor
    from jtorch.distributed.tensor.experimental import implicit_replication, local_map

    d = distribute_tensor(jtorch.ones(2), mesh, [Replicate()])
    out = local_map(lambda a: a * 3, out_placements=[Replicate()])(d)
    assert isinstance(out, DTensor) and out.to_local().tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="mixed torch.Tensor and DTensor"):
        d + jtorch.ones(2)
    with implicit_replication():
        assert isinstance(d + jtorch.ones(2), DTensor)


def test_single_stage_pipeline_gives_full_batch_gradients(mesh):
    from jtorch.distributed.pipelining import PipelineStage, ScheduleGPipe, pipeline

    rng = np.random.default_rng(0)
    net = jtorch.nn.Linear(3, 1)
    x = jtorch.tensor(rng.standard_normal((8, 3)), dtype=jtorch.float32)
    y = jtorch.tensor(rng.standard_normal((8, 1)), dtype=jtorch.float32)
    jtorch.nn.functional.mse_loss(net(x), y).backward()
    full = net.weight.grad.clone()
    net.zero_grad()
    losses = []
    out = ScheduleGPipe(
        PipelineStage(net, 0, 1, jtorch.device("cpu")),
        n_microbatches=4,
        loss_fn=jtorch.nn.functional.mse_loss,
    ).step(x, target=y, losses=losses)
    assert tuple(out.shape) == (8, 1) and len(losses) == 4
    # equal microbatches: the mean of their mean losses' gradients is the full-batch gradient
    np.testing.assert_allclose(net.weight.grad.numpy(), full.numpy(), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="torch.export"):
        pipeline(net, (x,))


def test_zero_and_post_local_sgd(mesh):
    from jtorch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager
    from jtorch.distributed.optim import (
        DistributedOptimizer,
        PostLocalSGDOptimizer,
        ZeroRedundancyOptimizer,
    )

    a, b = numpy_mlp(jtorch, 4, 8, 3), numpy_mlp(jtorch, 4, 8, 3)
    z = ZeroRedundancyOptimizer(a.parameters(), jtorch.optim.Adam, lr=0.1)
    plain = jtorch.optim.Adam(b.parameters(), lr=0.1)
    for net, opt in ((a, z), (b, plain)):
        net(jtorch.ones(2, 4)).sum().backward()
        opt.step()
    assert a[0].weight.tolist() == b[0].weight.tolist()  # one shard is the whole state
    with pytest.raises(RuntimeError, match="has not been consolidated"):
        z.state_dict()
    z.consolidate_state_dict()
    assert sorted(z.state_dict()) == ["param_groups", "state"]
    opt = PostLocalSGDOptimizer(
        jtorch.optim.SGD(b.parameters(), lr=0.1), PeriodicModelAverager(period=2)
    )
    b(jtorch.ones(1, 4)).sum().backward()
    opt.step()
    assert opt.state_dict()["step"] == 1
    with pytest.raises(NotImplementedError, match="rpc"):
        DistributedOptimizer(jtorch.optim.SGD, [])


def test_differentiable_collectives(mesh):
    from jtorch.distributed.nn import functional as fn

    t = jtorch.arange(3.0, requires_grad=True)
    (gathered,) = fn.all_gather(t)
    (gathered.sum() + fn.all_reduce(t * 2).sum()).backward()
    assert t.grad.tolist() == [3.0, 3.0, 3.0]


def test_record_writes_the_error_file(tmp_path, monkeypatch):
    error_file = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(error_file))

    @record
    def main():
        raise ValueError("boom")

    with pytest.raises(ValueError):
        main()
    data = json.loads(error_file.read_text())
    assert data["message"]["message"] == "ValueError: boom"
    failure = ProcessFailure(local_rank=0, pid=1, exitcode=1, error_file=str(error_file))
    err = ChildFailedError("train.py", {0: failure})
    assert "train.py FAILED" in str(err) and "ValueError: boom" in str(err)
    assert err.get_first_failure() == (0, failure)
    signal_failure = ProcessFailure(local_rank=0, pid=7, exitcode=-9, error_file="missing")
    assert signal_failure.message == "Signal 9 (SIGKILL) received by PID 7"


def _torchrun(tmp_path, script: str, *flags):
    path = tmp_path / "s.py"
    path.write_text(script)
    return subprocess.run(
        [sys.executable, "-m", "jtorch", "-m", "torch.distributed.run", *flags, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=ROOT),
        cwd=tmp_path,
    )


def test_torchrun_runs_one_worker(tmp_path):
    script = (
        "import os, torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "print(dist.get_rank(), dist.get_world_size(), os.environ['LOCAL_RANK'],"
        " dist.is_torchelastic_launched())\n"
    )
    r = _torchrun(tmp_path, script, "--nproc-per-node", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0", "1", "0", "True"]
