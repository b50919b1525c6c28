"""jtorch.distributed beyond c10d, in a world of one process: device meshes, DTensor, FSDP2,
distributed checkpointing, functional collectives, algorithms, stores and futures.
Expected values follow PyTorch's documented one-rank behaviour (a collective over one rank
is the identity) and mathematics."""

import copy
import datetime
import os

import jax
import numpy as np
import pytest

import jtorch
import jtorch.distributed as dist
from jtorch.distributed import _functional_collectives as fc
from jtorch.distributed import checkpoint as dcp
from jtorch.distributed import fsdp
from jtorch.distributed.checkpoint import state_dict as dsd
from jtorch.distributed.device_mesh import DeviceMesh, init_device_mesh
from jtorch.distributed.tensor import (
    DTensor,
    Partial,
    Replicate,
    Shard,
    distribute_module,
    distribute_tensor,
)
from jtorch.distributed.tensor._utils import compute_local_shape_and_global_offset
from jtorch.distributed.tensor.placement_types import _StridedShard
from tests.helpers import numpy_mlp


@pytest.fixture
def world():
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


@pytest.fixture
def mesh(world):
    return init_device_mesh("cpu", (1,))


# -- device meshes -----------------------------------------------------------------


def test_mesh_is_a_jax_mesh_of_this_process(world):
    m = init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    assert isinstance(m.jax_mesh, jax.sharding.Mesh)
    assert m.jax_mesh.axis_names == ("dp", "tp")
    assert list(m.jax_mesh.devices.ravel()) == [jax.devices("cpu")[0]]
    assert m.mesh.tolist() == [[0]] and m.mesh.dtype == jtorch.int32
    assert (m.ndim, m.shape, m.size(), m.get_coordinate()) == (2, (1, 1), 1, (0, 0))
    assert repr(m) == "DeviceMesh((dp=1, tp=1), 'cpu', stride=((), ()))"
    assert m.get_group("dp") is dist.group.WORLD  # a dim spanning the world is the world
    assert repr(m["tp"]) == "DeviceMesh((tp=1), 'cpu', stride=((),))"
    flat = m._flatten()
    assert repr(flat) == "DeviceMesh((dp_tp=1), 'cpu', stride=((),))"
    with pytest.warns(UserWarning, match="flattened dim"):
        assert m["dp_tp"] is flat


def test_mesh_errors(world):
    with pytest.raises(RuntimeError, match="bigger than default world size 1"):
        init_device_mesh("cpu", (2,))
    with pytest.raises(RuntimeError, match="should have same length"):
        init_device_mesh("cpu", (1,), mesh_dim_names=("a", "b"))
    m = init_device_mesh("cpu", (1, 1))
    with pytest.raises(RuntimeError, match="without mesh_dim_names"):
        m["x"]
    with pytest.raises(RuntimeError):
        m.get_group()
    with pytest.raises(KeyError, match="Valid mesh_dim_names"):
        init_device_mesh("cpu", (1,), mesh_dim_names=("a",))["b"]


def test_mesh_needs_a_process_group(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    with pytest.raises(ValueError, match="environment variable RANK expected"):
        init_device_mesh("cpu", (1,))


# -- DTensor -----------------------------------------------------------------------------


def test_distribute_tensor_replicate_aliases_shard_copies(mesh):
    x = jtorch.arange(4.0)
    r, s = distribute_tensor(x, mesh, [Replicate()]), distribute_tensor(x, mesh, [Shard(0)])
    x.add_(1)
    assert r.to_local().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert s.to_local().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert s.placements == (Shard(0),) and s.device_mesh is mesh
    assert r._spec.sharding.spec == jax.sharding.PartitionSpec(None)
    assert s._spec.sharding.spec == jax.sharding.PartitionSpec("dim_0")


def test_dtensor_autograd(mesh):
    x = jtorch.arange(4.0, requires_grad=True)
    d = distribute_tensor(x, mesh, [Shard(0)])
    assert d.is_leaf and d.requires_grad
    y = (d * 2).sum()
    assert isinstance(y, DTensor)
    y.backward()
    assert isinstance(d.grad, DTensor) and d.grad.placements == (Shard(0),)
    assert d.grad.to_local().tolist() == [2.0] * 4 and x.grad is None
    leaf = jtorch.ones(3, requires_grad=True)
    f = DTensor.from_local(leaf, mesh, [Replicate()])
    local = f.to_local()
    assert type(local) is jtorch.Tensor and not f.is_leaf
    (local * 3).sum().backward()
    assert leaf.grad.tolist() == [3.0] * 3


def test_dtensor_ops_and_errors(mesh):
    r = distribute_tensor(jtorch.ones(2, 2), mesh, [Replicate()])
    prod = r @ r
    assert isinstance(prod, DTensor) and prod.full_tensor().tolist() == [[2.0, 2.0]] * 2
    assert isinstance(r * jtorch.tensor(2.0), DTensor)  # one-element tensors replicate
    with pytest.raises(RuntimeError, match="got mixed torch.Tensor and DTensor"):
        r + jtorch.ones(2, 2)
    assert type(r.detach()) is DTensor and type(r.data) is DTensor
    with pytest.raises(ValueError, match="same length as `device_mesh.ndim`"):
        distribute_tensor(jtorch.ones(2), mesh, [Shard(0), Shard(0)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        distribute_tensor(jtorch.ones(2), mesh, [Shard(1)])
    with pytest.raises(ValueError, match="do you want to call `redistribute`"):
        distribute_tensor(r, mesh, [Shard(0)])
    with pytest.raises(RuntimeError, match="redistributing to Partial is for internal use"):
        r.redistribute(mesh, [Partial()])
    with pytest.raises(RuntimeError, match="No device mesh is currently active"):
        DTensor.from_local(jtorch.ones(2))
    with mesh:
        assert DTensor.from_local(jtorch.ones(2)).device_mesh is mesh
    assert r.redistribute(mesh, [Shard(-1)]).placements == (Shard(1),)


def test_parameter_of_a_dtensor_keeps_its_class(mesh):
    p = jtorch.nn.Parameter(distribute_tensor(jtorch.ones(2), mesh, [Shard(0)]))
    assert type(p) is DTensor and isinstance(p, jtorch.nn.Parameter)
    assert p.requires_grad and p.is_leaf
    lin = jtorch.nn.Linear(2, 2)
    lin.weight = jtorch.nn.Parameter(distribute_tensor(lin.weight.detach(), mesh, [Shard(0)]))
    assert "weight" in lin._parameters and type(lin.state_dict()["weight"]) is DTensor


def test_placements():
    assert (str(Shard(1)), str(Replicate()), str(Partial("max"))) == ("S(1)", "R", "P(max)")
    assert repr(Partial()) == "Partial(sum)" and Partial() == Partial("sum")
    s = _StridedShard(0, split_factor=2)
    assert not isinstance(s, Shard) and not s.is_shard() and s != Shard(0)
    # torch.chunk's split: sizes ceil(n/k) while elements last
    assert Shard.local_shard_size_and_offset(10, 3, 2) == (2, 8)
    assert Shard.local_shard_size_and_offset(2, 4, 3) == (0, 2)
    shards, pads = Shard(0)._split_tensor(jtorch.arange(5.0), 3)
    assert [t.tolist() for t in shards] == [[0.0, 1.0], [2.0, 3.0], [4.0, 0.0]]
    assert pads == [0, 0, 1]


def test_compute_local_shape_and_distribute_module(mesh):
    assert compute_local_shape_and_global_offset((4, 6), mesh, [Shard(1)]) == ((4, 6), (0, 0))
    m = distribute_module(jtorch.nn.Linear(2, 2), mesh)
    assert all(type(p) is DTensor and p.placements == (Replicate(),) for p in m.parameters())
    with pytest.raises(RuntimeError, match="only be called once"):
        distribute_module(m, mesh)


# -- FSDP2 -------------------------------------------------------------------------------


def test_fully_shard_computes_what_the_module_computed(world):
    x = jtorch.tensor(np.random.default_rng(1).standard_normal((5, 3)), dtype=jtorch.float32)
    ref = numpy_mlp(jtorch, 3, 4, 2)
    y_ref = ref(x)
    y_ref.sum().backward()
    f = numpy_mlp(jtorch, 3, 4, 2)
    fsdp.fully_shard(f[0])
    fsdp.fully_shard(f)
    assert type(f).__name__ == "FSDPSequential" and isinstance(f, fsdp.FSDPModule)
    assert type(f[2]).__name__ == "Linear"
    assert all(type(p) is DTensor and p.placements == (Shard(0),) for p in f.parameters())
    y = f(x)
    assert type(y) is jtorch.Tensor and np.allclose(y.tolist(), y_ref.tolist())
    y.sum().backward()
    for (_, p), q in zip(f.named_parameters(), ref.parameters()):
        assert isinstance(p.grad, DTensor)
        np.testing.assert_allclose(p.grad.to_local().numpy(), q.grad.numpy(), rtol=1e-6)
    assert all(type(p) is DTensor for p in f.parameters())  # back after forward
    with pytest.raises(AssertionError, match="does not support deepcopy"):
        copy.deepcopy(f)
    with pytest.raises(ValueError, match="containers that do not implement forward"):
        fsdp.fully_shard(jtorch.nn.ModuleList([jtorch.nn.ReLU()]))


def test_fully_shard_mixed_precision(world):
    x = jtorch.ones(2, 3)
    g = numpy_mlp(jtorch, 3, 4, 2)
    fsdp.fully_shard(g, mp_policy=fsdp.MixedPrecisionPolicy(param_dtype=jtorch.bfloat16))
    y = g(x)
    assert y.dtype == jtorch.bfloat16
    y.float().sum().backward()
    assert g[0].weight.dtype == g[0].weight.grad.dtype == jtorch.float32
    h = numpy_mlp(jtorch, 3, 4, 2)
    fsdp.fully_shard(
        h,
        mp_policy=fsdp.MixedPrecisionPolicy(
            param_dtype=jtorch.bfloat16, output_dtype=jtorch.float32
        ),
    )
    assert h(x).dtype == jtorch.float32


def test_fsdp1_is_refused_and_policies():
    with pytest.raises(NotImplementedError, match="fully_shard"):
        fsdp.FullyShardedDataParallel(jtorch.nn.Linear(2, 2))
    from jtorch.distributed.fsdp import wrap

    lin = jtorch.nn.Linear(100, 100)
    assert wrap.size_based_auto_wrap_policy(lin, False, 10_100, min_num_params=10_000)
    assert not wrap.size_based_auto_wrap_policy(lin, False, 9_000, min_num_params=10_000)
    assert wrap.ModuleWrapPolicy({jtorch.nn.Linear})(lin, False)
    with wrap.enable_wrap(wrapper_cls=lambda m, **kw: ("wrapped", m, kw), flag=1):
        assert wrap.wrap(lin) == ("wrapped", lin, {"flag": 1})
    assert wrap.wrap(lin) is lin


# -- checkpointing -------------------------------------------------------------------------


def test_dcp_round_trip(tmp_path, world):
    m = numpy_mlp(jtorch, 3, 4, 2)
    meta = dcp.save(
        {"model": m.state_dict(), "step": 3, "extra": {"lst": [1, 2]}}, checkpoint_id=str(tmp_path)
    )
    assert sorted(meta.state_dict_metadata)[:2] == ["extra.lst", "model.0.bias"]
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp"]
    m2 = jtorch.nn.Sequential(jtorch.nn.Linear(3, 4), jtorch.nn.ReLU(), jtorch.nn.Linear(4, 2))
    sd = {"model": m2.state_dict(), "step": 0, "extra": {"lst": []}}
    dcp.load(sd, checkpoint_id=str(tmp_path))
    assert sd["step"] == 3 and sd["extra"] == {"lst": [1, 2]}
    assert jtorch.equal(m2[0].weight, m[0].weight)
    with pytest.raises(dcp.CheckpointException, match="Missing key in checkpoint"):
        dcp.load({"nope": jtorch.zeros(1)}, checkpoint_id=str(tmp_path))
    with pytest.raises(RuntimeError, match="`checkpoint_id` must be specified"):
        dcp.save({"a": jtorch.ones(1)})


def test_dcp_reads_a_tensor_saved_in_chunks_by_several_ranks(tmp_path):
    """PyTorch's sharded saves write each rank's chunk of a tensor as its own record (in its
    own `__<rank>_0.distcp`); the metadata says where each chunk lies: they are put together."""
    import io
    import pickle

    from jtorch.distributed.checkpoint.filesystem import _StorageInfo
    from jtorch.distributed.checkpoint.metadata import (
        ChunkStorageMetadata,
        Metadata,
        MetadataIndex,
        TensorProperties,
        TensorStorageMetadata,
    )

    whole = jtorch.arange(24.0).reshape(4, 6)
    pieces = {(0, 0): whole[:2], (2, 0): whole[2:]}  # two ranks' row blocks
    storage, chunks = {}, []
    for rank, (offsets, piece) in enumerate(pieces.items()):
        buf = io.BytesIO()
        jtorch.save(piece.clone(), buf)
        name = f"__{rank}_0.distcp"
        (tmp_path / name).write_bytes(b"x" * 5 + buf.getvalue())  # at an offset, as PyTorch's
        storage[MetadataIndex("w", offsets)] = _StorageInfo(name, 5, len(buf.getvalue()))
        chunks.append(ChunkStorageMetadata(jtorch.Size(offsets), piece.shape))
    props = TensorProperties.create_from_tensor(whole)
    meta = Metadata({"w": TensorStorageMetadata(props, whole.shape, chunks)}, storage_data=storage)
    (tmp_path / ".metadata").write_bytes(pickle.dumps(meta))
    out = {"w": jtorch.zeros(4, 6)}
    dcp.load(out, checkpoint_id=str(tmp_path))
    assert out["w"].tolist() == whole.tolist()


def test_hf_storage_round_trip(tmp_path):
    w = jtorch.arange(6.0).reshape(2, 3)
    dcp.save({"w": w}, storage_writer=dcp.HuggingFaceStorageWriter(str(tmp_path)))
    assert os.listdir(tmp_path) == ["model-00001-of-00001.safetensors"]
    out = {"w": jtorch.zeros(2, 3)}
    dcp.load(out, storage_reader=dcp.HuggingFaceStorageReader(str(tmp_path)))
    assert out["w"].tolist() == w.tolist()


def test_state_dict_by_fqn(world):
    m = numpy_mlp(jtorch, 3, 4, 2)
    m[2].weight.requires_grad_(False)
    opt = jtorch.optim.Adam(m.parameters(), lr=0.1)
    osd = dsd.get_optimizer_state_dict(m, opt)
    # PyTorch initialises the state with one zero-gradient, zero-lr step; frozen params stay out
    assert sorted(osd["state"]) == ["0.bias", "0.weight", "2.bias"]
    assert osd["state"]["0.weight"]["step"].item() == 1.0
    assert osd["param_groups"][0]["params"] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert opt.param_groups[0]["lr"] == 0.1
    flat = dsd.get_optimizer_state_dict(
        m, opt, options=dsd.StateDictOptions(flatten_optimizer_state_dict=True)
    )
    assert "state.0.weight.exp_avg" in flat and "param_groups.0.weight.lr" in flat
    dsd.set_optimizer_state_dict(m, opt, flat)
    ddp = jtorch.nn.parallel.DistributedDataParallel(m)
    assert list(dsd.get_model_state_dict(ddp)) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert list(
        dsd.get_model_state_dict(m, options=dsd.StateDictOptions(ignore_frozen_params=True))
    ) == ["0.weight", "0.bias", "2.bias"]
    result = dsd.set_model_state_dict(
        ddp, {"0.weight": jtorch.ones(4, 3)}, options=dsd.StateDictOptions(strict=False)
    )
    assert result.missing_keys == ["module.0.bias", "module.2.weight", "module.2.bias"]
    assert m[0].weight.tolist() == [[1.0] * 3] * 4


# -- collectives, algorithms, stores, futures --------------------------------------------------


def test_functional_collectives_copy(mesh):
    x = jtorch.arange(4.0)
    for out in (
        fc.all_reduce(x, "sum", mesh),
        fc.all_gather_single(x, 0, mesh),
        fc.reduce_scatter_single(x, "avg", 0, mesh),
        fc.broadcast(x, 0, mesh),
    ):
        assert out is not x and fc.wait_tensor(out).tolist() == x.tolist()
    with pytest.raises(ValueError, match="Unrecognized reduce_op"):
        fc.all_reduce(x, "median", mesh)
    y = jtorch.ones(2, requires_grad=True)
    (fc.all_gather_single_autograd(y, 0, mesh) * 5).sum().backward()
    assert y.grad.tolist() == [5.0, 5.0]


def test_join_and_model_averaging(world):
    from jtorch.distributed.algorithms import Join, Joinable, JoinHook
    from jtorch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager

    calls = []

    class Hook(JoinHook):
        def post_hook(self, is_last_joiner):
            calls.append(is_last_joiner)

    class Worker(Joinable):
        def join_hook(self, **kwargs):
            return Hook()

        join_device = jtorch.device("cpu")
        join_process_group = None

    w = Worker()
    with Join([w]):
        assert Join.notify_join_context(w).result()[0].tolist() == [1.0]  # ranks not joined
    assert calls == [True]
    avg = PeriodicModelAverager(period=2, warmup_steps=1)
    p = jtorch.ones(2, requires_grad=True)
    p.grad = jtorch.ones(2)
    for _ in range(3):
        avg.average_parameters([p])
    assert avg.step == 3 and p.tolist() == [1.0, 1.0]  # the mean over one rank
    with pytest.raises(ValueError, match="non-empty list"):  # no parameter has a gradient
        PeriodicModelAverager(period=2).average_parameters([jtorch.ones(2)])
    with pytest.raises(ValueError, match="positive"):
        PeriodicModelAverager(period=0)


def test_comm_hooks_round_like_their_dtype(world):
    from jtorch.distributed.algorithms.ddp_comm_hooks import default_hooks

    class Bucket:
        def __init__(self, t):
            self._t = t

        def buffer(self):
            return self._t

    values = jtorch.tensor([1.0 + 2.0**-12, 3.14159265])
    out = default_hooks.fp16_compress_hook(None, Bucket(values.clone())).wait()
    assert out.tolist() == values.half().float().tolist()
    out = default_hooks.bf16_compress_hook(None, Bucket(values.clone())).wait()
    assert out.tolist() == values.bfloat16().float().tolist()
    assert (
        default_hooks.allreduce_hook(None, Bucket(values.clone())).wait().tolist()
        == values.tolist()
    )


def test_checkpoint_wrapper_hides_its_prefix():
    from jtorch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
        apply_activation_checkpointing,
        checkpoint_wrapper,
    )

    base, wrapped = numpy_mlp(jtorch, 3, 4, 2), checkpoint_wrapper(numpy_mlp(jtorch, 3, 4, 2))
    assert list(wrapped.state_dict()) == list(base.state_dict())
    assert [n for n, _ in wrapped.named_parameters()] == [n for n, _ in base.named_parameters()]
    x = jtorch.ones(2, 3)
    base(x).sum().backward()
    wrapped(x).sum().backward()
    assert wrapped[0].weight.grad.tolist() == base[0].weight.grad.tolist()
    wrapped.load_state_dict(base.state_dict())
    seq = jtorch.nn.Sequential(jtorch.nn.Linear(2, 2), jtorch.nn.ReLU())
    apply_activation_checkpointing(seq, check_fn=lambda m: isinstance(m, jtorch.nn.Linear))
    assert [type(c).__name__ for c in seq] == ["CheckpointWrapper", "ReLU"]


def test_stores(tmp_path):
    fs = dist.FileStore(str(tmp_path / "store"), 1)
    fs.set("a", "x")
    assert fs.get("a") == b"x" and fs.add("n", 2) == 2 and fs.add("n", 3) == 5
    assert fs.compare_set("a", "x", "y") == b"y" and fs.compare_set("a", "no", "z") == b"y"
    assert fs.delete_key("a") and fs.delete_key("a") and not fs.check(["a"])
    other = dist.FileStore(str(tmp_path / "store"), 1)  # another opener sees the keys
    assert other.get("n") == b"5"
    fs.set_timeout(datetime.timedelta(milliseconds=50))
    with pytest.raises(RuntimeError, match="Timeout waiting for key: missing"):
        fs.get("missing")
    h = dist.HashStore()
    p = dist.PrefixStore("pre", h)
    p.set("a", "1")
    assert h.get("pre/a") == b"1" and p.get("a") == b"1" and p.add("c", 5) == 5


def test_futures():
    f = jtorch.futures.Future()
    g = f.then(lambda x: x.value() * 2)
    assert not f.done() and not g.done()
    f.set_result(3)
    assert g.wait() == 6 and jtorch.futures.wait_all([f, g]) == [3, 6]
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        f.set_result(4)
    h = jtorch.futures.Future()
    h.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        h.wait()
    assert jtorch.futures.collect_all([]).wait() == []


def test_async_work_future(world):
    t = jtorch.ones(2)
    work = dist.all_reduce(t, async_op=True)
    assert work.get_future().wait()[0] is t


def test_mesh_from_group(world):
    m = DeviceMesh.from_group(dist.group.WORLD, "cpu")
    assert m.mesh.tolist() == [0] and m.ndim == 1
