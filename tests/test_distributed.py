"""jtorch.distributed in one process: a world of one (PyTorch's behaviour with world_size=1).

Worlds of several processes are tested in test_distributed_multiprocess.py."""

import pytest

import jtorch
import jtorch.distributed as dist

NOT_INIT = "Default process group has not been initialized"


@pytest.fixture
def world():
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_needs_a_process_group():
    assert dist.is_available() and not dist.is_initialized()
    for call in (dist.get_rank, dist.barrier, lambda: dist.all_reduce(jtorch.ones(1))):
        with pytest.raises(ValueError, match=NOT_INIT):
            call()
    with pytest.raises(ValueError, match="environment variable RANK expected"):
        dist.init_process_group("gloo")
    with pytest.raises(
        ValueError,
        match=r"Invalid rank 4, rank should be in the interval "
        r"\[0, 1\]",
    ):
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=4, world_size=2)
    with pytest.raises(ValueError, match="Unsupported init_method"):
        dist.init_process_group("gloo", init_method="udp://x:1", rank=0, world_size=2)
    assert not dist.is_initialized()


def test_env_rendezvous(monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    dist.init_process_group(backend="gloo")
    try:
        assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
    finally:
        dist.destroy_process_group()


def test_collectives_over_one_rank_are_the_identity(world):
    t = jtorch.tensor([1.0, -2.0, 3.0])
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX, dist.ReduceOp.PRODUCT):
        x = t.clone()
        dist.all_reduce(x, op=op)
        assert x.tolist() == t.tolist()
    out, parts = jtorch.zeros(3), [jtorch.zeros(3)]
    dist.all_gather_into_tensor(out, t)
    dist.all_gather(parts, t)
    assert out.tolist() == parts[0].tolist() == t.tolist()
    assert dist.broadcast(t, src=0, async_op=True).wait()
    with pytest.raises(RuntimeError, match="invalid root rank: 1"):
        dist.broadcast(t, src=1)
    with pytest.raises(RuntimeError, match="expected length 1, got 2"):
        dist.all_gather([jtorch.zeros(3)] * 2, t)


def test_ddp_is_the_module_behind_a_prefix(world):
    inner = jtorch.nn.Linear(2, 1)
    ddp = jtorch.nn.parallel.DistributedDataParallel(inner)
    assert ddp.module is inner and list(ddp.state_dict()) == ["module.weight", "module.bias"]
    x = jtorch.ones(3, 2)
    with ddp.no_sync():
        ddp(x).sum().backward()
    assert inner.weight.grad.tolist() == [[3.0, 3.0]]  # d sum(x w^T + b)/dw = sum of rows
    sampler = jtorch.utils.data.DistributedSampler(range(4), shuffle=False)
    assert list(sampler) == [0, 1, 2, 3]


def test_ddp_logging_record(world):
    ddp = jtorch.nn.parallel.DistributedDataParallel(jtorch.nn.Linear(3, 2))
    data = ddp._get_ddp_logging_data()
    assert data["world_size"] == 1 and data["rank"] == 0 and data["backend_name"] == "gloo"
    assert data["num_parameter_tensors"] == 2
    assert data["total_parameter_size_bytes"] == (3 * 2 + 2) * 4
    assert data["bucket_cap_bytes"] == 25 * 1024 * 1024 and data["dtypes"] == "float"
    assert ddp.reducer.prepare_for_backward([]) is None


def test_comm_debug_mode_counts_collectives_by_operator(world):
    from jtorch.distributed.tensor.debug import CommDebugMode

    mode, t = CommDebugMode(), jtorch.ones(2)
    with mode:
        dist.all_reduce(t)
        dist.broadcast(t, 0)
        dist.all_reduce(t)
        dist.barrier()  # PyTorch's mode does not count barriers
        # PyTorch counts a collective once it has run: a call refused for its arguments is not
        for op in ("nope", 3, None):  # PyTorch takes only a ReduceOp
            with pytest.raises(TypeError, match="ReduceOp"):
                dist.all_reduce(t, op=op)
        with pytest.raises(RuntimeError):
            dist.all_gather([t, t], t)  # a world of one wants one output
    c10d = jtorch.ops.c10d
    assert dict(mode.get_comm_counts()) == {c10d.allreduce_: 2, c10d.broadcast_: 1}
    assert str(c10d.allreduce_) == "c10d.allreduce_"
    assert repr(mode) == "CommDebugMode(get_total_counts()=3)"
    dist.all_reduce(t)  # outside the mode: not counted
    assert mode.get_total_counts() == 3
    with mode:  # entering again starts from zero
        pass
    assert mode.get_total_counts() == 0
    with pytest.raises(NotImplementedError, match="internal collective operator"):
        c10d.allreduce_(t)
    with pytest.raises(NotImplementedError, match="per-module"):
        mode.generate_comm_debug_tracing_table()


def test_ddp_bucket_assignment_follows_pytorchs_rule():
    from jtorch.nn.parallel._reducer import _buckets

    # float32 of 1.2 MB, 40 B, 0.8 MB, 0.4 MB; float64 of 8 kB. Limits 1 MiB then 2 MiB.
    params = [jtorch.zeros(n) for n in (300_000, 10, 200_000, 100_000)]
    params.append(jtorch.zeros(1000, dtype=jtorch.float64))
    limits = [1 << 20, 2 << 20]
    # In registration order: the first float32 closes the 1 MiB bucket alone; the other
    # float32 ones (1.2 MB) stay under 2 MiB; float64 is a bucket of its own.
    assert _buckets(params, range(5), limits) == [[0], [1, 2, 3], [4]]
    # In arrival order 4, 3, 2, 1, 0: 0.4 + 0.8 MB close the first float32 bucket.
    got = _buckets(params, [4, 3, 2, 1, 0], limits)
    assert got[0] == [3, 2] and sorted(got[1:]) == [[1, 0], [4]]
    assert _buckets(params, range(5), [float("inf")]) == [[0, 1, 2, 3], [4]]
