"""jtorch.save / jtorch.load without torch: PyTorch's checkpoint format both ways."""

import io
import os
import pickle
import struct
import zipfile

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
    assert ck["x"].untyped_storage() == ck["x_col"].untyped_storage()  # sharing survives
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
    obj = {
        "x": x,
        "col": x[:, 1],
        "t": x.t(),
        "model": lin.state_dict(),
        "p": lin.weight,
        "i": jtorch.tensor([1, 2], dtype=jtorch.int32),
        "dt": jtorch.float16,
        "n": 3,
    }
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


ALLOWED = os.path.join(os.path.dirname(__file__), "data", "torch_allowed_globals.pt")


def test_loads_every_kind_pytorchs_weights_only_unpickler_allows():
    # Written by tests/data/make_torch_allowed_globals.py; values follow from its formulas.
    import collections

    ck = jtorch.load(ALLOWED)
    assert ck["set"] == {1, 2, 3} and ck["empty_set"] == set()  # `__builtin__.set`
    assert ck["complex"] == 1.5 - 2j
    assert ck["bytearray"] == bytearray(b"\x00\xffjt") and ck["bytes"] == b"\x00\x01ab"
    assert ck["counter"] == collections.Counter("abca")
    assert type(ck["ordered"]) is collections.OrderedDict
    assert list(ck["ordered"].items()) == [("b", 2), ("a", 1)]
    assert ck["size"] == jtorch.Size([2, 3]) and isinstance(ck["size"], jtorch.Size)
    assert ck["device"] == jtorch.device("cuda", 1) and ck["cpu"] == jtorch.device("cpu")
    assert ck["dtypes"] == [
        jtorch.float32,
        jtorch.bfloat16,
        jtorch.uint16,
        jtorch.float8_e5m2,
        jtorch.bool,
        jtorch.complex128,
    ]
    assert ck["layout"] is jtorch.strided
    assert ck["uint16"].dtype == jtorch.uint16 and ck["uint16"].tolist() == [1, 65535]
    assert ck["uint32"].dtype == jtorch.uint32 and ck["uint32"].tolist() == [7, 2**32 - 1]
    assert ck["uint64"].dtype == jtorch.uint64 and ck["uint64"].tolist() == [2**63 + 5]
    assert ck["float8_e4m3fn"].dtype == jtorch.float8_e4m3fn
    assert ck["float8_e4m3fn"].float().tolist() == [0.5, -2.0]
    assert ck["float8_e5m2"].float().tolist() == [0.25, 3.0]
    assert ck["complex32"].tolist() == [1 + 1j, -0.5j]  # kept as complex64 by jtorch
    assert ck["meta"].device.type == "meta" and ck["meta"].shape == (2, 3)
    assert isinstance(ck["param"], jtorch.nn.Parameter) and ck["param"].requires_grad
    assert ck["param"].tolist() == [1.0, 1.0]
    assert isinstance(ck["frozen_param"], jtorch.nn.Parameter)
    assert not ck["frozen_param"].requires_grad
    assert ck["param_with_state"].tag == 7 and ck["param_with_state"].tolist() == [0.5, 0.5]
    assert ck["tensor_with_attr"].note == "kept"
    assert ck["tensor_with_attr"].tolist() == [0.0, 1.0, 2.0]
    assert ck["requires_grad"].requires_grad and ck["requires_grad"].is_leaf
    assert ck["big_int"] == 2**70 and ck["negative"] == -(2**40) and ck["float"] == 0.25
    assert ck["none"] is None and ck["bools"] == (True, False)
    assert ck["nested"] == [(1, "two"), {3: [4.5]}]
    assert ck["typed_storage"].dtype == jtorch.float64
    assert ck["typed_storage"].tolist() == [0.0, 1.0, 2.0]
    # an untyped storage loads as bytes: int16 [1, 2], little-endian
    assert ck["untyped_storage"].dtype == jtorch.uint8
    assert ck["untyped_storage"].tolist() == [1, 0, 2, 0]


def test_weights_only_refuses_what_pytorch_refuses():
    for obj in (frozenset({1}), slice(1, 2), b"", range(2)):
        buf = io.BytesIO()
        jtorch.save({"v": obj}, buf)
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            jtorch.load(buf)
        buf.seek(0)
        assert jtorch.load(buf, weights_only=False)["v"] == obj


def test_weights_only_refuses_calls_and_blocked_modules():
    import os as os_module

    buf = io.BytesIO()
    jtorch.save({"f": os_module.getcwd}, buf)
    buf.seek(0)
    with jtorch.serialization.safe_globals([os_module.getcwd]):
        with pytest.raises(pickle.UnpicklingError, match="whose module posix is blocked"):
            jtorch.load(buf)


def test_pickle_protocol_other_than_2_warns_and_fails_as_in_pytorch():
    buf = io.BytesIO()
    jtorch.save({"a": 1}, buf, pickle_protocol=4)
    buf.seek(0)
    with pytest.warns(UserWarning, match="Detected pickle protocol 4"):
        with pytest.raises(pickle.UnpicklingError, match="Unsupported operand 149"):
            jtorch.load(buf)
    buf.seek(0)
    assert jtorch.load(buf, weights_only=False) == {"a": 1}


def test_mmap_load_reads_the_file_lazily_and_keeps_values(tmp_path):
    path = tmp_path / "ck.pt"
    x = jtorch.arange(24.0).reshape(4, 6)
    jtorch.save({"x": x, "col": x[:, 2], "i": jtorch.tensor([7, 8])}, path)
    out = jtorch.load(path, mmap=True)
    assert out["x"].tolist() == x.tolist() and out["col"].tolist() == x[:, 2].tolist()
    assert out["i"].tolist() == [7, 8]
    out["x"].add_(1.0)  # in-place ops work (the mapping is private, copy on write)
    assert out["col"].tolist() == (x[:, 2] + 1).tolist()
    assert jtorch.load(path)["x"].tolist() == x.tolist()  # the file is unchanged
    with pytest.raises(ValueError, match="f must be a file path"):
        jtorch.load(io.BytesIO(path.read_bytes()), mmap=True)


def test_storage_records_are_aligned_to_64_bytes(tmp_path):
    import zipfile

    path = tmp_path / "ck.pt"
    jtorch.save({f"t{i}": jtorch.ones(i + 1) for i in range(5)}, path)
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if "/data/" in info.filename:
                name_len, extra_len = struct.unpack(
                    "<HH", raw[info.header_offset + 26 : info.header_offset + 30]
                )
                assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0


def test_save_to_a_path_is_atomic(tmp_path):
    path = tmp_path / "ck.pt"
    jtorch.save({"a": jtorch.ones(3)}, path)
    before = path.read_bytes()

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("cannot pickle this")

    with pytest.raises(RuntimeError, match="cannot pickle"):
        jtorch.save({"a": jtorch.zeros(3), "b": Unpicklable()}, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ck.pt"]  # no temporary file left


def test_bare_storage_and_untyped_dtypes_round_trip():
    x = jtorch.tensor([1, 2, 3], dtype=jtorch.uint16)
    buf = io.BytesIO()
    jtorch.save({"x": x, "tail": x[1:], "f8": jtorch.ones(2).to(jtorch.float8_e5m2)}, buf)
    buf.seek(0)
    back = jtorch.load(buf)
    assert back["x"].dtype == jtorch.uint16 and back["tail"].tolist() == [2, 3]
    assert back["x"].untyped_storage() == back["tail"].untyped_storage()
    assert back["f8"].dtype == jtorch.float8_e5m2 and back["f8"].float().tolist() == [1.0, 1.0]


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


def test_map_location_meta_gives_shapes_without_reading_data():
    x = jtorch.arange(6.0).reshape(2, 3)
    buf = io.BytesIO()
    jtorch.save({"x": x, "tail": x.view(-1)[1:], "p": jtorch.nn.Parameter(jtorch.ones(2))}, buf)
    out = jtorch.load(io.BytesIO(buf.getvalue()), map_location="meta")
    assert out["x"].device.type == "meta" and out["x"].shape == (2, 3)
    assert out["tail"].shape == (5,) and out["tail"].storage_offset() == 1
    assert isinstance(out["p"], jtorch.nn.Parameter) and out["p"].is_meta


def test_file_objects_with_read_and_seek_only():
    class ReadSeek:
        def __init__(self, data):
            self._b = io.BytesIO(data)

        def read(self, n=-1):
            return self._b.read(n)

        def seek(self, *args):
            return self._b.seek(*args)

        def tell(self):
            return self._b.tell()

    buf = io.BytesIO()
    jtorch.save({"a": jtorch.arange(4.0)}, buf)
    assert jtorch.load(ReadSeek(buf.getvalue()))["a"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_every_public_function_pickles_as_itself():
    """pickle finds a function by `__module__` and name: F.gelu, linalg.norm, ... (a module
    containment that differs would make a whole-module `torch.save` fail)."""
    import pickle

    checked = 0
    for ns in (jtorch, jtorch.nn.functional, jtorch.linalg, jtorch.special, jtorch.fft):
        for name in dir(ns):
            fn = getattr(ns, name)
            if type(fn).__name__ == "function" and (fn.__module__ or "").startswith("jtorch"):
                assert pickle.loads(pickle.dumps(fn)) is fn, (ns.__name__, name)
                checked += 1
    assert checked > 500


def test_pickled_classes_and_functions_carry_pytorchs_names(tmp_path):
    """jtorch's classes and functions are written as `torch.*` (PyTorch can load the file),
    and read back as jtorch's own."""
    import pickletools

    path = tmp_path / "m.pt"
    jtorch.save({"module": jtorch.nn.Linear(2, 3), "fn": jtorch.nn.functional.gelu}, path)
    with zipfile.ZipFile(path) as z:
        pkl = z.read("m/data.pkl")
    names = [a for op, a, _ in pickletools.genops(pkl) if op.name == "GLOBAL"]
    assert "torch.nn.modules.linear Linear" in names and "torch.nn.functional gelu" in names
    assert not any(n.startswith("jtorch") for n in names), names
    back = jtorch.load(path, weights_only=False)
    assert type(back["module"]) is jtorch.nn.Linear and back["fn"] is jtorch.nn.functional.gelu
