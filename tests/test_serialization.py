"""jtorch.save / jtorch.load without torch: PyTorch's checkpoint format both ways."""

import io
import os
import pickle

import numpy as np
import pytest

import jtorch

DATA = os.path.join(os.path.dirname(__file__), "data", "torch_checkpoint.pt")


def test_loads_a_checkpoint_written_by_pytorch():
    # Written by tests/data/make_torch_checkpoint.py; expected values follow from its formulas.
    ck = jtorch.load(DATA)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert ck["x"].dtype == jtorch.float32 and ck["x"].tolist() == x.tolist()
    assert ck["x_col"].tolist() == x[:, 1].tolist() and ck["x_col"].stride() == (4,)
    assert ck["x_t"].tolist() == x.T.tolist() and ck["x_t"].stride() == (1, 4)
    assert ck["x"].untyped_storage() == ck["x_col"].untyped_storage()   # sharing survives
    ck["x"][0, 1] = 100.0
    assert ck["x_col"][0].item() == 100.0
    assert ck["ints"].dtype == jtorch.int64 and ck["ints"].tolist() == [1, -2, 3]
    assert ck["half"].dtype == jtorch.float16 and ck["half"].tolist() == [0.5, 1.5]
    assert ck["bf16"].dtype == jtorch.bfloat16 and ck["bf16"].float().tolist() == [1.0, 2.0]
    assert ck["cplx"].dtype == jtorch.complex64 and ck["cplx"].tolist() == [1 + 2j, -3j]
    assert ck["mask"].tolist() == [True, False]
    # one SGD step (lr 0.1) on sum(W @ 1 + b): every gradient is 1
    w = np.arange(6, dtype=np.float32).reshape(2, 3) / 10 - 0.1
    np.testing.assert_allclose(ck["model"]["weight"].numpy(), w, rtol=1e-6)
    np.testing.assert_allclose(ck["model"]["bias"].numpy(), [0.4, -0.6], rtol=1e-6)
    assert list(ck["model"].keys()) == ["weight", "bias"]
    opt = ck["optimizer"]
    assert opt["param_groups"][0]["params"] == [0, 1] and opt["param_groups"][0]["lr"] == 0.1
    assert opt["state"][0]["momentum_buffer"].tolist() == [[1.0] * 3] * 2
    assert ck["epoch"] == 7 and ck["name"] == "tiny" and ck["nested"]["a"] == [1.5, (2, 3)]


def test_round_trip_keeps_values_dtypes_and_sharing(tmp_path):
    x = jtorch.arange(6.0).reshape(2, 3)
    lin = jtorch.nn.Linear(3, 2)
    obj = {"x": x, "col": x[:, 1], "t": x.t(), "model": lin.state_dict(), "p": lin.weight,
           "i": jtorch.tensor([1, 2], dtype=jtorch.int32), "dt": jtorch.float16, "n": 3}
    path = tmp_path / "ck.pt"
    jtorch.save(obj, path)
    back = jtorch.load(path)
    assert back["x"].tolist() == x.tolist() and back["col"].tolist() == [1.0, 4.0]
    assert back["t"].stride() == (1, 3) and back["col"].stride() == (3,)
    assert back["x"].untyped_storage() == back["col"].untyped_storage()
    assert isinstance(back["p"], jtorch.nn.Parameter) and back["p"].requires_grad
    assert back["i"].dtype == jtorch.int32 and back["dt"] is jtorch.float16 and back["n"] == 3
    assert list(back["model"].keys()) == ["weight", "bias"]
    np.testing.assert_array_equal(back["model"]["weight"].numpy(), lin.weight.detach().numpy())
    fresh = jtorch.nn.Linear(3, 2)
    fresh.load_state_dict(back["model"])
    np.testing.assert_array_equal(fresh.bias.detach().numpy(), lin.bias.detach().numpy())


def test_file_objects_and_map_location():
    buf = io.BytesIO()
    jtorch.save({"a": jtorch.ones(2)}, buf)
    buf.seek(0)
    out = jtorch.load(buf, map_location="cpu")
    assert out["a"].tolist() == [1.0, 1.0] and out["a"].device.type == "cpu"
    buf.seek(0)
    out = jtorch.load(buf, map_location=lambda storage, loc: storage)
    assert out["a"].tolist() == [1.0, 1.0]


class _NotAllowed:
    pass


def test_weights_only_refuses_arbitrary_globals_until_allowed():
    buf = io.BytesIO()
    jtorch.save({"obj": _NotAllowed()}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        jtorch.load(buf)
    buf.seek(0)
    with jtorch.serialization.safe_globals([_NotAllowed]):
        assert isinstance(jtorch.load(buf)["obj"], _NotAllowed)
    buf.seek(0)
    assert isinstance(jtorch.load(buf, weights_only=False)["obj"], _NotAllowed)


def test_pytorch_file_reader_reads_records(tmp_path):
    path = str(tmp_path / "x.pt")
    jtorch.save({"a": jtorch.arange(3.0)}, path)
    r = jtorch.PyTorchFileReader(path)
    assert r.has_record("data.pkl") and not r.has_record("nope")
    assert "data/0" in r.get_all_records()
    t = r.get_storage_from_record("data/0", 3, jtorch.float32)
    assert t.tolist() == [0.0, 1.0, 2.0]
    assert r.get_storage_from_record("data/0", 12, jtorch.uint8).numel() == 12
    with pytest.raises(RuntimeError, match="failed locating file nope"):
        r.get_record("nope")
    with open(path, "rb") as f:
        f.seek(r.get_record_offset("data/0"))
        assert np.frombuffer(f.read(12), np.float32).tolist() == [0.0, 1.0, 2.0]


def test_rebuild_from_type_v2_restores_subclass_state():
    class Tagged(jtorch.Tensor):
        pass
    t = jtorch._tensor._rebuild_from_type_v2(lambda: jtorch.ones(2), Tagged, (), {"tag": "x"})
    assert type(t) is Tagged and t.tag == "x" and t.tolist() == [1.0, 1.0]
    t = jtorch._tensor._rebuild_from_type_v2(jtorch.zeros, Tagged, (1,), ({"a": 1}, {"b": 2}))
    assert (t.a, t.b) == (1, 2)
