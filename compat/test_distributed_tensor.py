"""Device meshes, DTensor, FSDP2, distributed checkpointing, functional collectives and the
distributed algorithms in a world of one process: the same calls under PyTorch (gloo,
world_size=1) and jtorch give the same values, types, placements and errors."""

import copy
import os
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.dist_common import outcome, worlds  # noqa: E402,F401 - a fixture
from tests.helpers import numpy_mlp  # noqa: E402


def _norm(x):
    """Results made comparable across the two libraries: containers walked, other objects
    (placements, meshes, dtypes) by their repr."""
    if isinstance(x, (list, tuple)):
        return [_norm(v) for v in x]
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    if x is None or isinstance(x, (bool, int, float, str, bytes)):
        return x
    return repr(x)


def _both(scenario):
    return _norm(scenario(torch)), _norm(scenario(jtorch))


def _approx(values) -> list:
    """Marks low-precision values (bfloat16 math) to be compared within a tolerance: XLA's and
    PyTorch's bfloat16 matmuls may round an element differently."""
    return ["approx", values]


def _same(t, j) -> None:
    if isinstance(t, list) and t[:1] == ["approx"]:
        assert j[:1] == ["approx"]
        np.testing.assert_allclose(np.asarray(j[1]), np.asarray(t[1]), rtol=2e-2, atol=1e-2)
        return
    if isinstance(t, list) and isinstance(j, list) and len(t) == len(j):
        for a, b in zip(t, j):
            _same(a, b)
        return
    assert j == t


def _vals(t) -> list:
    return np.round(np.asarray(t.detach().tolist(), dtype=np.float64), 5).tolist()


def _mesh_scenario(lib):
    from importlib import import_module

    dm = import_module(f"{lib.__name__}.distributed.device_mesh")
    out = []
    m = dm.init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    out += [
        repr(m),
        m.mesh.tolist(),
        str(m.mesh.dtype),
        m.ndim,
        m.shape,
        m.size(),
        m.size(0),
        m.get_rank(),
        m.get_local_rank(),
        m.get_coordinate(),
        m.mesh_dim_names,
        m.device_type,
        lib.distributed.get_process_group_ranks(m.get_group()),
        m.get_group().size(),
        m["dp"] == m,
        hash(m["dp"]) == hash(m),
    ]
    m2 = dm.init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    out += [
        repr(m2),
        repr(m2["tp"]),
        repr(m2["dp", "tp"]),
        len(m2.get_all_groups()),
        m2.get_local_rank("tp"),
        m2.size(1),
        m2.get_coordinate(),
        m2.mesh.tolist(),
    ]
    flat = m2["dp", "tp"]._flatten("dp_tp")
    out += [repr(flat), repr(m2["dp_tp"])]
    out += [
        repr(dm.DeviceMesh("cpu", [0])),
        repr(dm.DeviceMesh("cpu", [[0]], mesh_dim_names=("a", "b"))),
        repr(dm.init_device_mesh("cpu", (1,))),
        repr(lib.distributed.DeviceMesh.from_group(lib.distributed.group.WORLD, "cpu")),
    ]
    out += [
        outcome(lambda: dm.DeviceMesh("cpu", [0, 1])),
        outcome(lambda: dm.init_device_mesh("cpu", (2,))),
        outcome(lambda: dm.init_device_mesh("cpu", (1,), mesh_dim_names=("a", "b"))),
        outcome(lambda: m2.get_local_rank()),
        outcome(lambda: m2.get_group()),
        outcome(lambda: dm.init_device_mesh("cpu", (1,))["x"]),
        outcome(lambda: m2["x"]),
    ]
    return out


def test_device_mesh(worlds):
    t, j = _both(_mesh_scenario)
    assert j == t


def test_device_mesh_needs_a_process_group():
    for lib in (torch, jtorch):
        from importlib import import_module

        dm = import_module(f"{lib.__name__}.distributed.device_mesh")
        os.environ.pop("RANK", None)
        with pytest.raises(ValueError, match="environment variable RANK expected"):
            dm.init_device_mesh("cpu", (1,))


def test_device_mesh_is_a_jax_mesh(worlds):
    import jax

    from jtorch.distributed.device_mesh import init_device_mesh

    m = init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    assert isinstance(m.jax_mesh, jax.sharding.Mesh)
    assert m.jax_mesh.axis_names == ("dp", "tp")
    assert m.jax_mesh.devices.shape == (1, 1)


def _dtensor_scenario(lib):
    from importlib import import_module

    dt = import_module(f"{lib.__name__}.distributed.tensor")
    pt = import_module(f"{lib.__name__}.distributed.tensor.placement_types")
    ut = import_module(f"{lib.__name__}.distributed.tensor._utils")
    dm = import_module(f"{lib.__name__}.distributed.device_mesh")
    Shard, Replicate, Partial, DTensor = dt.Shard, dt.Replicate, dt.Partial, dt.DTensor
    m = dm.init_device_mesh("cpu", (1,))
    out = []
    for pl in ([Replicate()], [Shard(0)]):
        x = lib.arange(4.0)
        d = dt.distribute_tensor(x, m, pl)
        x.add_(1)  # Replicate aliases, Shard copies
        loc = lib.arange(4.0)
        f = DTensor.from_local(loc, m, pl)
        loc.add_(1)
        out += [_vals(d.to_local()), _vals(f.to_local()), d.placements, f.placements]
    x = lib.arange(4.0, requires_grad=True)
    d = dt.distribute_tensor(x, m, [Shard(0)])
    out += [d.is_leaf, d.requires_grad, d.grad_fn is None, repr(d)]
    y = (d * 2).sum()
    out += [type(y).__name__, type(d + 1).__name__, (d + 1).placements]
    y.backward()
    out += [type(d.grad).__name__, _vals(d.grad.to_local()), x.grad]
    leaf = lib.ones(3, requires_grad=True)
    f = DTensor.from_local(leaf, m, [Replicate()])
    loc = f.to_local()
    out += [f.grad_fn is not None, f.is_leaf, loc.grad_fn is not None, type(loc).__name__]
    (loc * 3).sum().backward()
    out.append(_vals(leaf.grad))
    r = dt.distribute_tensor(lib.ones(2, 2), m, [Replicate()])
    out += [
        type(r.detach()).__name__,
        type(r.data).__name__,
        type(r.clone()).__name__,
        type(r @ r).__name__,
        _vals((r @ r).full_tensor()),
        r.shape,
        r.stride(),
        r.dim(),
        str(r.dtype),
        r.numel(),
        _vals(r.redistribute(m, [Shard(1)]).to_local()),
        r.redistribute(m, [Shard(-1)]).placements,
    ]
    out += [
        outcome(lambda: dt.distribute_tensor(lib.ones(2), m, [Shard(1)])),
        outcome(lambda: dt.distribute_tensor(lib.ones(2), m, [Shard(0), Shard(0)])),
        outcome(lambda: dt.distribute_tensor(r, m, [Shard(0)])),
        outcome(lambda: dt.distribute_tensor(r, m, [Replicate()]) is r),
        outcome(lambda: r.redistribute(m, [Partial()])),
        outcome(lambda: DTensor.from_local(lib.ones(2, 3))),
        outcome(lambda: dt.distribute_tensor(lib.ones(2, 3), m, [Shard(-1)]).placements),
        outcome(lambda: DTensor.from_local(lib.ones(2, 3), m, [Shard(-1)]).placements),
    ]
    mixed = outcome(lambda: r + lib.ones(2, 2))
    out += [
        mixed[0],
        "got mixed torch.Tensor and DTensor" in mixed[1],
        type(r * lib.tensor(2.0)).__name__,
    ]
    p = lib.nn.Parameter(r)
    out += [isinstance(p, lib.nn.Parameter), type(p).__name__, p.is_leaf, p.requires_grad]
    lin = lib.nn.Linear(2, 2)
    lin.weight = lib.nn.Parameter(dt.distribute_tensor(lin.weight.detach(), m, [Shard(0)]))
    out += [type(lin.weight).__name__, [type(v).__name__ for v in lin.state_dict().values()]]
    out += [
        Shard(0) == Shard(0),
        Shard(0) != Shard(1),
        hash(Replicate()),
        Partial() == Partial("sum"),
        str(Partial("avg")),
        repr(Partial("max")),
        Shard(0).is_shard(0),
        Shard(0).is_shard(1),
        Partial().is_partial(),
        Replicate().is_partial(),
        Shard(0).is_replicate(),
        str(Shard(2)),
        str(Replicate()),
    ]
    s = pt._StridedShard(0, split_factor=2)
    out += [str(s), repr(s), s.split_factor, s == Shard(0), isinstance(s, Shard), s.is_shard()]
    out += [
        ut.compute_local_shape_and_global_offset((4, 6), m, [Shard(1)]),
        Shard.local_shard_size_and_offset(10, 3, 2),
        Shard.local_shard_size_and_offset(9, 3, 1),
        Shard.local_shard_size_and_offset(2, 4, 3),
    ]
    shards, pads = Shard(0)._split_tensor(lib.arange(5.0), 3)
    out += [[_vals(x) for x in shards], pads]
    out += [
        repr(dt.ones(2, device_mesh=m)),
        repr(dt.zeros(2, 2, device_mesh=m, placements=[Shard(0)])),
        repr(dt.full((2,), 3.0, device_mesh=m)),
    ]
    return out


def test_dtensor(worlds):
    t, j = _both(_dtensor_scenario)
    assert j == t


def _fsdp_scenario(lib):
    from importlib import import_module

    fsdp = import_module(f"{lib.__name__}.distributed.fsdp")
    x = lib.tensor(np.random.default_rng(1).standard_normal((5, 3)), dtype=lib.float32)
    ref = numpy_mlp(lib, 3, 4, 2)(x)
    f = numpy_mlp(lib, 3, 4, 2)
    fsdp.fully_shard(f[0])
    fsdp.fully_shard(f)
    out = [
        type(f).__name__,
        type(f[0]).__name__,
        type(f[2]).__name__,
        isinstance(f, fsdp.FSDPModule),
        type(f).__mro__[1].__name__,
    ]
    out.append(
        [(n, type(p).__name__, p.placements, tuple(p.shape)) for n, p in f.named_parameters()]
    )
    out.append([(k, type(v).__name__) for k, v in f.state_dict().items()])
    y = f(x)
    out += [type(y).__name__, _vals(y) == _vals(ref), str(y.dtype)]
    y.sum().backward()
    out.append(
        [
            (n, type(p.grad).__name__, p.grad.placements, _vals(p.grad.to_local()))
            for n, p in f.named_parameters()
        ]
    )
    opt = lib.optim.SGD(f.parameters(), lr=0.1)
    opt.step()
    out += [type(f[0].weight).__name__, _vals(f[0].weight.to_local())]
    f.reshard()
    out += [f.unshard(), f.unshard(async_op=True).wait()]
    f.set_requires_gradient_sync(False)
    f.set_is_last_backward(True)
    f.set_reshard_after_backward(True)
    out += [
        outcome(lambda: copy.deepcopy(f)),
        outcome(lambda: type(fsdp.fully_shard(lib.nn.ReLU())).__name__),
        outcome(lambda: fsdp.fully_shard(lib.nn.ModuleList([lib.nn.ReLU()]))),
    ]
    g = numpy_mlp(lib, 3, 4, 2)
    fsdp.fully_shard(g, mp_policy=fsdp.MixedPrecisionPolicy(param_dtype=lib.bfloat16))
    yb = g(x)
    out += [str(yb.dtype), _approx(_vals(yb.float()))]
    yb.float().sum().backward()
    out += [str(g[0].weight.grad.dtype), _approx(_vals(g[0].weight.grad.to_local()))]
    h = numpy_mlp(lib, 3, 4, 2)
    fsdp.fully_shard(
        h, mp_policy=fsdp.MixedPrecisionPolicy(param_dtype=lib.bfloat16, output_dtype=lib.float32)
    )
    out.append(str(h(x).dtype))
    m2 = numpy_mlp(lib, 3, 4, 2)
    fsdp.fully_shard(m2)
    m2.load_state_dict(f.state_dict())
    out.append(_vals(m2(x)) == _vals(f(x)))
    return out


def test_fully_shard(worlds):
    t, j = _both(_fsdp_scenario)
    _same(t, j)


def _state_dict_scenario(lib):
    from importlib import import_module

    sd_mod = import_module(f"{lib.__name__}.distributed.checkpoint.state_dict")
    dcp = import_module(f"{lib.__name__}.distributed.checkpoint")
    fu = import_module(f"{lib.__name__}.distributed.checkpoint.format_utils")
    opts = sd_mod.StateDictOptions
    m = numpy_mlp(lib, 3, 4, 2)
    m[2].weight.requires_grad_(False)
    opt = lib.optim.Adam(m.parameters(), lr=0.1)

    def osd_summary(osd):
        return (
            {
                k: {n: _vals(v) if isinstance(v, lib.Tensor) else v for n, v in s.items()}
                for k, s in osd["state"].items()
            },
            osd["param_groups"],
        )

    out = [
        list(sd_mod.get_model_state_dict(m)),
        osd_summary(sd_mod.get_optimizer_state_dict(m, opt)),
    ]  # initialises the state
    x = lib.ones(2, 3)
    m(x).sum().backward()
    opt.step()
    out.append(osd_summary(sd_mod.get_optimizer_state_dict(m, opt)))
    flat = sd_mod.get_optimizer_state_dict(m, opt, options=opts(flatten_optimizer_state_dict=True))
    out.append(list(flat))
    out.append(list(sd_mod.get_model_state_dict(m, options=opts(ignore_frozen_params=True))))
    msd, osd = sd_mod.get_state_dict(m, opt)
    out += [
        type(msd).__name__,
        str(sd_mod.set_model_state_dict(m, msd)),
        str(sd_mod.set_state_dict(m, opt, model_state_dict=msd, optim_state_dict=osd)),
    ]
    sd_mod.set_optimizer_state_dict(m, opt, flat)
    out.append(osd_summary(sd_mod.get_optimizer_state_dict(m, opt)))
    out.append(outcome(lambda: str(sd_mod.set_model_state_dict(m, {"x": lib.ones(1)}))))
    out.append(
        str(
            sd_mod.set_model_state_dict(m, {"0.weight": lib.ones(4, 3)}, options=opts(strict=False))
        )
    )
    out.append(_vals(m[0].weight))
    ddp = lib.nn.parallel.DistributedDataParallel(m)
    out.append(list(sd_mod.get_model_state_dict(ddp)))
    with tempfile.TemporaryDirectory() as d:
        sd = {"model": m.state_dict(), "step": 3, "extra": {"lst": [1, 2]}}
        meta = dcp.save(sd, checkpoint_id=d)
        out += [
            sorted(meta.state_dict_metadata),
            type(meta.state_dict_metadata["model.0.weight"]).__name__,
            type(meta.state_dict_metadata["step"]).__name__,
        ]
        m2 = numpy_mlp(lib, 3, 4, 2)
        sd2 = {"model": m2.state_dict(), "step": 0, "extra": {"lst": []}}
        dcp.load(sd2, checkpoint_id=d)
        out += [sd2["step"], sd2["extra"], _vals(m2[0].weight) == _vals(m[0].weight)]
        err = outcome(lambda: dcp.load({"nope": lib.zeros(1)}, checkpoint_id=d))
        out += [err[0], err[1].splitlines()[-1]]
        part = {"nope": lib.zeros(1), "step": 0}
        dcp.load(part, checkpoint_id=d, planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
        out.append(part["step"])
        path = os.path.join(d, "x.pt")
        fu.dcp_to_torch_save(d, path)
        full = lib.load(path, weights_only=False)
        out += [sorted(full), sorted(full["model"]), full["step"], full["extra"]]
        out.append(outcome(lambda: dcp.save({"a": lib.ones(1)})))
        opt2 = lib.optim.Adam(m2.parameters(), lr=0.1)
        stateful = {"model": m2, "optim": opt2}
        dcp.save(stateful, checkpoint_id=os.path.join(d, "s"))
        m3 = numpy_mlp(lib, 3, 4, 2)
        with lib.no_grad():
            for p in m3.parameters():
                p.zero_()
        dcp.load(
            {"model": m3},
            checkpoint_id=os.path.join(d, "s"),
            planner=dcp.DefaultLoadPlanner(allow_partial_load=True),
        )
        out.append(_vals(m3[0].weight) == _vals(m2[0].weight))
    return out


def test_checkpoint_state_dict(worlds):
    t, j = _both(_state_dict_scenario)
    assert j == t


def _collectives_scenario(lib):
    from importlib import import_module

    fc = import_module(f"{lib.__name__}.distributed._functional_collectives")
    dm = import_module(f"{lib.__name__}.distributed.device_mesh")
    m = dm.init_device_mesh("cpu", (1,))
    x = lib.arange(6.0).reshape(3, 2)
    out = []
    for r in (
        fc.all_reduce(x, "sum", m),
        fc.all_reduce(x, "avg", [0]),
        fc.all_gather_tensor(x, 0, m),
        fc.reduce_scatter_tensor(x, "sum", 0, m),
        fc.all_to_all_single(x, None, None, m),
        fc.broadcast(x, 0, m),
    ):
        w = fc.wait_tensor(r)
        out += [_vals(w), w is x, str(w.dtype)]
    y = lib.arange(3.0, requires_grad=True)
    z = fc.all_to_all_single_autograd(y, None, None, m)
    (z * 2).sum().backward()
    out.append(_vals(y.grad))
    out.append(_vals(x))
    return out


def test_functional_collectives(worlds):
    t, j = _both(_collectives_scenario)
    assert j == t


def _algorithms_scenario(lib):
    from importlib import import_module

    join = import_module(f"{lib.__name__}.distributed.algorithms.join")
    av = import_module(f"{lib.__name__}.distributed.algorithms.model_averaging.averagers")
    cw = import_module(f"{lib.__name__}.distributed.algorithms._checkpoint.checkpoint_wrapper")
    wrap = import_module(f"{lib.__name__}.distributed.fsdp.wrap")
    calls = []

    class Hook(join.JoinHook):
        def post_hook(self, is_last_joiner):
            calls.append(("post", is_last_joiner))

    class Worker(join.Joinable):
        def __init__(self):
            super().__init__()

        def join_hook(self, **kwargs):
            return Hook()

        @property
        def join_device(self):
            return lib.device("cpu")

        @property
        def join_process_group(self):
            return lib.distributed.group.WORLD

    w = Worker()
    with join.Join([w]):
        work = join.Join.notify_join_context(w)
        calls.append(type(work).__name__ != "NoneType")
    out = [calls, outcome(lambda: join.Join([]))]
    m = numpy_mlp(lib, 3, 4, 2)
    avg = av.PeriodicModelAverager(period=2, warmup_steps=1)
    before = _vals(m[0].weight)
    m(lib.ones(1, 3)).sum().backward()
    for _ in range(4):
        avg.average_parameters(m.parameters())
    out += [
        avg.step,
        _vals(m[0].weight) == before,
        outcome(lambda: av.PeriodicModelAverager(period=0)),
        outcome(lambda: av.PeriodicModelAverager(period=2).average_parameters([])),
    ]
    base = numpy_mlp(lib, 3, 4, 2)
    wrapped = cw.checkpoint_wrapper(numpy_mlp(lib, 3, 4, 2))
    x = lib.tensor(np.random.default_rng(2).standard_normal((4, 3)), dtype=lib.float32)
    ya, yb = base(x), wrapped(x)
    ya.sum().backward()
    yb.sum().backward()
    out += [
        type(wrapped).__name__,
        list(wrapped.state_dict()),
        [n for n, _ in wrapped.named_parameters()],
        _vals(ya) == _vals(yb),
        _vals(base[0].weight.grad) == _vals(wrapped[0].weight.grad),
    ]
    wrapped.load_state_dict(base.state_dict())
    seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU(), lib.nn.Linear(2, 2))
    cw.apply_activation_checkpointing(seq, check_fn=lambda mod: isinstance(mod, lib.nn.Linear))
    out.append([type(c).__name__ for c in seq])
    seq2 = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
    cw.apply_activation_checkpointing(seq2, auto_wrap_policy=wrap.ModuleWrapPolicy({lib.nn.Linear}))
    out.append([type(c).__name__ for c in seq2])
    lin = lib.nn.Linear(100, 100)
    out += [
        wrap.size_based_auto_wrap_policy(lin, True, 10_100, min_num_params=10_000),
        wrap.size_based_auto_wrap_policy(lin, False, 9_000, min_num_params=10_000),
        wrap.transformer_auto_wrap_policy(lin, False, 0, {lib.nn.Linear}),
        wrap.lambda_auto_wrap_policy(lin, True, 0, lambda_fn=lambda mod: False),
        wrap.always_wrap_policy(),
    ]
    return out


def test_algorithms(worlds):
    t, j = _both(_algorithms_scenario)
    assert j == t


def _store_scenario(lib):
    dist = lib.distributed
    out = []
    with tempfile.TemporaryDirectory() as d:
        fs = dist.FileStore(os.path.join(d, "store"), 1)
        fs.set("a", "x")
        out += [fs.get("a"), fs.add("n", 2), fs.add("n", 3), fs.check(["a"]), fs.check(["zz"])]
        out += [
            fs.compare_set("a", "x", "y"),
            fs.get("a"),
            fs.compare_set("a", "nope", "z"),
            fs.compare_set("q", "", "w"),
            fs.get("q"),
            fs.delete_key("a"),
            fs.delete_key("a"),
            fs.check(["a"]),
        ]
        import datetime

        fs.set_timeout(datetime.timedelta(milliseconds=200))
        out.append(outcome(lambda: fs.get("missing")))
    h = dist.HashStore()
    h.set("k", b"v")
    p = dist.PrefixStore("pre", h)
    p.set("a", "1")
    out += [h.get("k"), h.get("pre/a"), p.get("a"), p.add("c", 5), h.get("pre/c")]
    return out


def test_stores():
    t, j = _both(_store_scenario)
    assert j == t


def _futures_scenario(lib):
    f = lib.futures.Future()
    out = [f.done()]
    f.set_result(3)
    g = f.then(lambda x: x.value() + 1)
    out += [f.done(), f.wait(), f.value(), g.wait(), outcome(lambda: f.set_result(4))]
    h = lib.futures.Future()
    h.set_exception(ValueError("bad"))
    out.append(outcome(h.wait))
    out += [lib.futures.collect_all([f, g]).wait()[1].value(), lib.futures.wait_all([f, g])]
    return out


def test_futures():
    t, j = _both(_futures_scenario)
    assert j == t


def _dcp_state(lib, seed: int) -> dict:
    """A training checkpoint as scripts save one: model and Adam state, a step, a string."""
    m = numpy_mlp(lib, 3, 4, 2)
    opt = lib.optim.Adam(m.parameters(), lr=0.1)
    m(
        lib.tensor(np.random.default_rng(seed).standard_normal((2, 3)).astype(np.float32))
    ).sum().backward()
    opt.step()
    return {
        "model": m.state_dict(),
        "optim": opt.state_dict(),
        "step": 7,
        "tag": "run-1",
        "half": lib.arange(6, dtype=lib.float16).view(2, 3),
        "ids": lib.arange(5),
    }


def _dcp_summary(lib, sd) -> dict:
    flat = {}

    def walk(v, path):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, path + (str(k),))
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(x, path + (str(i),))
        elif isinstance(v, lib.Tensor):
            flat[".".join(path)] = (
                str(v.dtype)[6:],
                tuple(v.shape),
                np.asarray(v.detach().cpu().numpy()).tolist(),
            )
        else:
            flat[".".join(path)] = v

    walk(sd, ())
    return flat


@pytest.mark.parametrize("writer", ["torch", "jtorch"])
def test_dcp_checkpoints_move_between_pytorch_and_jtorch(tmp_path, writer):
    """A DCP directory written by one library loads in the other, entry for entry."""
    from importlib import import_module

    src, dst = (torch, jtorch) if writer == "torch" else (jtorch, torch)
    saved = _dcp_state(src, 0)
    import_module(f"{src.__name__}.distributed.checkpoint").save(saved, checkpoint_id=str(tmp_path))
    target = _dcp_state(dst, 1)  # other values, the same structure
    target["step"], target["tag"] = 0, ""
    import_module(f"{dst.__name__}.distributed.checkpoint").load(
        target, checkpoint_id=str(tmp_path)
    )
    assert _dcp_summary(dst, target) == _dcp_summary(src, saved)
    # the reader's own metadata view of it
    meta = (
        import_module(f"{dst.__name__}.distributed.checkpoint")
        .FileSystemReader(str(tmp_path))
        .read_metadata()
    )
    md = meta.state_dict_metadata["model.0.weight"]
    assert (tuple(md.size), str(md.properties.dtype)) == (
        (4, 3),
        f"{dst.__name__}.float32".replace("jtorch", "torch"),
    )
