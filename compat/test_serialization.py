"""Checkpoints move between PyTorch and jtorch in both directions (DESIGN 10)."""

import collections
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

_DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "bool",
    "complex64",
    "complex128",
]


def _np(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.numpy()


def _every_dtype(lib):
    base = np.arange(6).reshape(2, 3)
    out = {}
    for name in _DTYPES:
        t = lib.tensor(base.tolist()).to(getattr(lib, name))
        out[name] = t
    return out


def _torch_to_jtorch(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return jtorch.load(buf)


def _jtorch_to_torch(obj):
    buf = io.BytesIO()
    jtorch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def _same(a, b):
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    assert tuple(a.stride()) == tuple(b.stride())
    np.testing.assert_array_equal(_np(a), _np(b))


@pytest.mark.parametrize("direction", ["torch->jtorch", "jtorch->torch"])
def test_every_dtype_and_shared_noncontiguous_storages(direction):
    src_lib, move = (
        (torch, _torch_to_jtorch) if direction == "torch->jtorch" else (jtorch, _jtorch_to_torch)
    )
    x = src_lib.arange(12.0).reshape(3, 4)
    obj = dict(
        _every_dtype(src_lib),
        x=x,
        col=x[:, 1],
        t=x.t(),
        tail=x.view(-1)[5:],
        scalar=src_lib.tensor(2.5),
    )
    back = move(obj)
    for k in obj:
        _same(obj[k], back[k])
    # views into one storage stay views into one storage
    back["x"][0, 1] = -1.0
    assert back["col"][0].item() == -1.0 and back["t"][1, 0].item() == -1.0


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(
        lib.nn.Linear(4, 3),
        lib.nn.ReLU() if hasattr(lib.nn, "ReLU") else lib.nn.Identity(),
        lib.nn.Linear(3, 2),
    )


def _train_state(lib, model):
    opt = lib.optim.Adam(model.parameters(), lr=0.01)
    x = lib.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    for _ in range(2):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
    return opt


def test_model_optimizer_checkpoint_torch_to_jtorch_resumes_identically():
    tm = _model(torch)
    topt = _train_state(torch, tm)
    ck = {"model": tm.state_dict(), "optimizer": topt.state_dict(), "epoch": 2}
    loaded = _torch_to_jtorch(ck)
    jm = _model(jtorch)
    jm.load_state_dict(loaded["model"])
    jopt = jtorch.optim.Adam(jm.parameters(), lr=0.01)
    jopt.load_state_dict(loaded["optimizer"])
    assert loaded["epoch"] == 2
    assert list(loaded["model"].keys()) == list(tm.state_dict().keys())
    assert loaded["optimizer"]["param_groups"] == ck["optimizer"]["param_groups"]
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    for lib, m, o in ((torch, tm, topt), (jtorch, jm, jopt)):
        o.zero_grad()
        m(lib.tensor(x)).pow(2).sum().backward()
        o.step()
    for (k, a), b in zip(tm.state_dict().items(), jm.state_dict().values()):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6, err_msg=k)


def test_model_optimizer_checkpoint_jtorch_to_torch():
    jm = _model(jtorch)
    jopt = _train_state(jtorch, jm)
    ck = {
        "model": jm.state_dict(),
        "optimizer": jopt.state_dict(),
        "epoch": 2,
        "meta": collections.OrderedDict(name="run"),
    }
    loaded = _jtorch_to_torch(ck)
    tm = _model(torch)
    tm.load_state_dict(loaded["model"])
    topt = torch.optim.Adam(tm.parameters(), lr=0.01)
    topt.load_state_dict(loaded["optimizer"])
    assert loaded["epoch"] == 2 and loaded["meta"]["name"] == "run"
    for k, v in loaded["optimizer"]["state"][0].items():
        _same(v, ck["optimizer"]["state"][0][k])


def test_legacy_format_written_by_pytorch_loads():
    x = torch.arange(6.0).reshape(2, 3)
    buf = io.BytesIO()
    torch.save(
        {"x": x, "col": x[:, 2], "p": torch.nn.Parameter(torch.ones(2))},
        buf,
        _use_new_zipfile_serialization=False,
    )
    buf.seek(0)
    out = jtorch.load(buf)
    assert out["x"].tolist() == x.tolist() and out["col"].tolist() == [2.0, 5.0]
    assert isinstance(out["p"], jtorch.nn.Parameter)


def test_pytorch_file_reader_agrees_on_pytorch_files(tmp_path):
    path = str(tmp_path / "t.pt")
    torch.save({"w": torch.arange(6.0).reshape(2, 3), "n": 3}, path)
    rt, rj = torch.PyTorchFileReader(path), jtorch.PyTorchFileReader(path)
    assert sorted(rj.get_all_records()) == sorted(rt.get_all_records())
    assert rj.get_record("data.pkl") == rt.get_record("data.pkl")
    assert rj.get_record_offset("data/0") == rt.get_record_offset("data/0")
    assert rj.serialization_id() == rt.serialization_id()


def test_a_whole_module_pickled_by_jtorch_loads_and_runs_in_pytorch():
    """jtorch writes its classes and functions under PyTorch's names (`torch.nn.modules...`),
    so `torch.save(model)` of a whole module is a file PyTorch can load and run."""
    rng = np.random.default_rng(0)
    model = jtorch.nn.Sequential(jtorch.nn.Linear(3, 4), jtorch.nn.GELU(), jtorch.nn.Linear(4, 2))
    with jtorch.no_grad():
        for p in model.parameters():
            p.copy_(jtorch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    buf = io.BytesIO()
    jtorch.save({"model": model, "act": jtorch.nn.functional.gelu}, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    assert type(loaded["model"]) is torch.nn.Sequential
    assert [type(m) for m in loaded["model"]] == [torch.nn.Linear, torch.nn.GELU, torch.nn.Linear]
    assert loaded["act"] is torch.nn.functional.gelu
    x = rng.standard_normal((5, 3)).astype(np.float32)
    ours = model(jtorch.tensor(x)).detach().numpy()
    theirs = loaded["model"](torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)
