"""`torch.distributed` parity in a world of one process: the same calls under PyTorch (gloo,
world_size=1) and jtorch give the same values, errors and module layouts. Worlds of several
processes: test_distributed_torchrun.py."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from tests.helpers import free_port  # noqa: E402


def _errors(lib):
    out = []
    for call in (
        lambda: lib.distributed.get_rank(),
        lambda: lib.distributed.get_world_size(),
        lambda: lib.distributed.all_reduce(lib.ones(2)),
        lambda: lib.distributed.barrier(),
        lambda: lib.distributed.destroy_process_group(),
        lambda: lib.nn.parallel.DistributedDataParallel(lib.nn.Linear(2, 2)),
    ):
        try:
            call()
            out.append(None)
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            out.append((type(e).__name__, str(e)))
    return out


def _session(lib):
    dist = lib.distributed
    before = (dist.is_available(), dist.is_initialized(), _errors(lib))
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1
    )
    try:
        with pytest.raises(
            ValueError, match="trying to initialize the default process group twice!"
        ):
            dist.init_process_group("gloo", rank=0, world_size=1)
        t = lib.tensor([1.0, -2.0, 3.5])
        results = [
            dist.get_rank(),
            dist.get_world_size(),
            str(dist.get_backend()),
            dist.is_initialized(),
        ]
        for op in (
            dist.ReduceOp.SUM,
            dist.ReduceOp.AVG,
            dist.ReduceOp.MAX,
            dist.ReduceOp.MIN,
            dist.ReduceOp.PRODUCT,
        ):
            x = t.clone()
            assert dist.all_reduce(x, op=op) is None
            results.append(x.tolist())
        w = dist.all_reduce(t.clone(), async_op=True)
        results.append((w.wait(), w.is_completed()))
        gathered = [lib.zeros(3)]
        dist.all_gather(gathered, t)
        out = lib.zeros(3)
        dist.all_gather_into_tensor(out, t)
        rs = lib.zeros(3)
        dist.reduce_scatter_tensor(rs, t)
        b = t.clone()
        dist.broadcast(b, src=0)
        objs = [None]
        dist.all_gather_object(objs, {"step": 3})
        results += [
            gathered[0].tolist(),
            out.tolist(),
            rs.tolist(),
            b.tolist(),
            objs,
            dist.get_process_group_ranks(dist.group.WORLD),
        ]
        dist.barrier()
        lib.manual_seed(0)
        inner = lib.nn.Linear(3, 2)
        ddp = lib.nn.parallel.DistributedDataParallel(inner)
        results += [repr(ddp), list(ddp.state_dict()), type(ddp.module).__name__]
        with ddp.no_sync():
            pass
        inner.weight.data.copy_(lib.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3)))
        inner.bias.data.zero_()
        y = ddp(lib.ones(1, 3))
        y.sum().backward()
        results += [y.tolist(), inner.weight.grad.tolist()]
        sampler = lib.utils.data.DistributedSampler(list(range(5)), shuffle=False)
        results.append(list(sampler))
        # PyTorch's DDP reducer, freed after its process group, is that group's last owner
        # and joins gloo's worker threads holding the GIL, which a worker may need: the
        # oracle itself hung here once. Freed first, it leaves the group to
        # `destroy_process_group`, whose release lets the GIL go.
        del ddp
    finally:
        dist.destroy_process_group()
    return before, results, dist.is_initialized()


def test_one_process_world_matches_pytorch():
    t_before, t_res, t_after = _session(torch)
    j_before, j_res, j_after = _session(jtorch)
    assert j_before == t_before
    assert j_res == t_res
    assert j_after is t_after is False


def test_errors_inside_the_world():
    seen = {}
    for lib in (torch, jtorch):
        dist = lib.distributed
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1
        )
        t = lib.ones(1)
        calls = (
            lambda: dist.broadcast(t, src=1),
            lambda: dist.reduce(t, dst=1),
            lambda: dist.gather(t, [lib.ones(1)], dst=1),
            lambda: dist.scatter(t, [lib.ones(1)], src=1),
            lambda: dist.all_gather([lib.ones(1)] * 2, t),
            lambda: dist.new_group([0, 1]),
            lambda: dist.send(t, 0),
            lambda: dist.all_reduce(t, op=dist.ReduceOp.PREMUL_SUM),
        )
        try:
            out = []
            for call in calls:
                try:
                    call()
                    out.append(None)
                except Exception as e:  # noqa: BLE001 - compared below
                    out.append((type(e).__name__, str(e)))
        finally:
            dist.destroy_process_group()
        seen[lib.__name__] = out
    premul_t, premul_j = seen["torch"].pop(), seen["jtorch"].pop()
    assert premul_t[0] == premul_j[0] == "TypeError"  # pybind's message is not PyTorch's
    assert seen["jtorch"] == seen["torch"]


def test_reduce_op_names():
    assert [str(getattr(jtorch.distributed.ReduceOp, n)) for n in ("SUM", "AVG", "MAX")] == [
        str(getattr(torch.distributed.ReduceOp, n)) for n in ("SUM", "AVG", "MAX")
    ]


def test_ddp_logging_data_and_reducer():
    records = []
    for lib in (torch, jtorch):
        dist = lib.distributed
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1
        )
        try:
            ddp = lib.nn.parallel.DistributedDataParallel(lib.nn.Linear(3, 2))
            ddp.reducer.prepare_for_backward([])
            records.append((ddp._get_ddp_logging_data(), ddp.require_forward_param_sync))
        finally:
            dist.destroy_process_group()
    assert records[1] == records[0]


def test_ddp_bucket_assignment_matches_pytorchs():
    from jtorch.nn.parallel._reducer import _buckets

    shapes = [(300, 300), (300,), (700, 500), (500,), (10, 500), (10,), (2000, 200), (7,)]
    kinds = ["float32"] * 6 + ["float64", "float32"]
    tp = [torch.zeros(s, dtype=getattr(torch, k)) for s, k in zip(shapes, kinds)]
    jp = [jtorch.zeros(s, dtype=getattr(jtorch, k)) for s, k in zip(shapes, kinds)]
    for limits in ([1 << 20, 25 << 20], [500_000], [1 << 20, 2 << 20]):
        # registration order (the initial buckets: PyTorch sorts them by first index)
        expected, _ = torch.distributed._compute_bucket_assignment_by_size(tp, limits, [False] * 8)
        assert sorted(_buckets(jp, range(8), limits), key=min) == expected
        # gradient-arrival order (the rebuilt buckets)
        order = [7, 5, 4, 6, 3, 2, 1, 0]
        expected, _ = torch.distributed._compute_bucket_assignment_by_size(
            [tp[i] for i in order], limits, [False] * 8, order
        )
        assert _buckets(jp, order, limits) == expected
