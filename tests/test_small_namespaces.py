"""The small namespaces libraries touch (PyTorch's documented CPU-build answers)."""

import pytest

import jtorch as torch


def test_checks():
    torch._check(True)
    with pytest.raises(RuntimeError, match="Expected cond to be True"):
        torch._check(False)
    with pytest.raises(IndexError, match="at 3"):
        torch._check_index(False, lambda: "at 3")
    with pytest.raises(TypeError, match="cond must be a bool"):
        torch._check(torch.ones(1) > 0)
    with pytest.raises(RuntimeError):
        torch._check_tensor_all(torch.tensor([True, False]))
    with pytest.raises(AssertionError, match="boom"):
        torch._assert(False, "boom")


def test_absent_accelerators():
    for mod in (torch.xpu, torch.mps, torch.mtia):
        assert mod.is_available() is False and mod.device_count() == 0
    with pytest.raises(AssertionError, match="not compiled with XPU"):
        torch.xpu.synchronize()
    with pytest.raises(RuntimeError, match="without MPS backend"):
        torch.mps.synchronize()


def test_cpu_streams_and_events():
    s = torch.Stream()
    assert s.query() and s.device == torch.device("cpu") and s.device_index == -1
    e = torch.Event(device="cpu", blocking=True)
    assert e.query()
    with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
        e.record()


def test_export_and_onnx_point_at_interop():
    with pytest.raises(RuntimeError, match="jtorch.interop"):
        torch.export.export(torch.nn.Linear(1, 1), (torch.ones(1, 1),))
    with pytest.raises(RuntimeError, match="jtorch.interop"):
        torch.onnx.export(torch.nn.Linear(1, 1), (torch.ones(1, 1),), "m.onnx")
    assert torch.onnx.is_in_onnx_export() is False


def test_hub_reads_only_its_cache(tmp_path):
    torch.hub.set_dir(str(tmp_path))
    try:
        assert torch.hub.get_dir() == str(tmp_path)
        (tmp_path / "checkpoints").mkdir()
        torch.save({"w": torch.ones(2)}, str(tmp_path / "checkpoints" / "w.pt"))
        sd = torch.hub.load_state_dict_from_url("https://example.com/models/w.pt")
        assert sd["w"].tolist() == [1.0, 1.0]
        with pytest.raises(RuntimeError, match="does not download"):
            torch.hub.load_state_dict_from_url("https://example.com/models/missing.pt")
    finally:
        torch.hub._hub_dir[0] = None


def test_fx_and_symbolic_shape_answers():
    from jtorch.fx.experimental import symbolic_shapes as ss

    assert not isinstance(torch.ones(1), torch.fx.Proxy)
    assert torch.fx._symbolic_trace.is_fx_tracing() is False
    assert ss.guard_or_false(2 > 1) and not ss.guard_or_true(1 > 2)
    assert ss.free_unbacked_symbols(3) == set()
    with pytest.raises(RuntimeError, match="not available in jtorch"):
        torch.fx.symbolic_trace(torch.nn.Linear(1, 1))


def test_utils_and_return_types():
    assert torch._utils._get_device_index("cuda:1") == 1
    assert torch._utils._element_size(torch.bfloat16) == 2
    r = torch.max(torch.tensor([[1.0, 3.0]]), 1)
    assert isinstance(r, torch.return_types.max)
    assert torch.legacy_contiguous_format is torch.contiguous_format
