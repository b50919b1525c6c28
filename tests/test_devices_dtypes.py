"""The meta device, `with torch.device(...)`, `view(dtype)` across element sizes, float8
dtypes and `torch.asarray` (expected values from PyTorch's documented behaviour and from
the IEEE/OCP bit layouts)."""

import numpy as np
import pytest

import jtorch as torch


def test_meta_tensors_have_shapes_and_no_data():
    x = torch.ones(2, 3, device="meta")
    assert x.is_meta and x.device == torch.device("meta")
    y = (x @ torch.ones(3, 4, device="meta")).sum(0)
    assert y.is_meta and y.shape == (4,) and y.dtype == torch.float32
    assert repr(x.long()) == "tensor(..., device='meta', size=(2, 3), dtype=torch.int64)"
    assert x[:, 1:].stride() == (3, 1) and x.t().shape == (3, 2)
    with pytest.raises(NotImplementedError, match="no data"):
        x.tolist()
    with pytest.raises(NotImplementedError, match="no data"):
        x.cpu()
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        x[0, 0].item()
    with pytest.raises(RuntimeError, match="not on the expected device meta"):
        torch.cat([x, torch.ones(2, 3)])
    with pytest.raises(NotImplementedError):
        x.nonzero()  # data-dependent output shape


def test_meta_in_place_ops_keep_meta():
    x = torch.empty(4, 4, device="meta")
    x.normal_()
    x[1:].mul_(2)
    x.copy_(torch.ones(4))  # copying into meta only checks shapes
    assert x.is_meta and x.shape == (4, 4)
    with pytest.raises(NotImplementedError, match="no data"):
        torch.zeros(4, 4).copy_(x)


def test_device_context_builds_modules_on_meta():
    with torch.device("meta"):
        lin = torch.nn.Linear(8, 4)
        assert torch.get_default_device() == torch.device("meta")
        with torch.device("cpu"):
            real = torch.ones(2)
    assert lin.weight.is_meta and lin.weight.requires_grad and not real.is_meta
    assert torch.get_default_device() == torch.device("cpu") and not torch.ones(1).is_meta
    lin.to_empty(device="cpu")
    assert not lin.weight.is_meta and lin.weight.shape == (4, 8)
    torch.nn.init.ones_(lin.weight)
    assert lin(torch.ones(1, 8)).sum().item() == pytest.approx(32 + lin.bias.sum().item())


def test_device_equality_is_between_devices():
    assert torch.device("cpu") != "cpu"  # as in PyTorch: no string comparison
    assert torch.device("xpu").type == "xpu"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        torch.device("npu")


def test_view_dtype_across_element_sizes():
    x = torch.tensor([[1.0, 2.0], [0.5, -2.0]])
    b = x.view(torch.uint8)
    assert b.shape == (2, 8) and b.dtype == torch.uint8
    # IEEE 754: 1.0f is 0x3F800000, stored little-endian.
    assert b[0, :4].tolist() == [0, 0, 128, 63]
    assert torch.equal(b.view(torch.float32), x)
    d = x.view(torch.float64)
    assert d.shape == (2, 1) and d.stride() == (1, 1)
    assert np.array_equal(d.numpy(), x.numpy().view(np.float64))
    b[0, :4] = torch.tensor([0, 0, 0, 64], dtype=torch.uint8)  # 2.0f
    assert x[0, 0].item() == 2.0
    with pytest.raises(RuntimeError, match="self.size\\(-1\\) must be divisible by 2"):
        x[:, :1].view(torch.float64)
    with pytest.raises(RuntimeError, match="self.stride\\(-1\\) must be 1"):
        x.t().view(torch.uint8)
    assert x.requires_grad_().view(torch.float16).grad_fn is None


def test_float8_conversions():
    v = torch.tensor([1.0, 2.5, 300.0, 500.0, float("inf"), -1e6])
    e4 = v.to(torch.float8_e4m3fn)
    # e4m3fn: 3 mantissa bits, max 448; PyTorch saturates what is beyond it.
    assert e4.float().tolist() == [1.0, 2.5, 288.0, 448.0, 448.0, -448.0]
    assert e4.element_size() == 1 and e4.view(torch.uint8)[0].item() == 0x38
    e5 = v.to(torch.float8_e5m2)
    assert e5.float().tolist() == [1.0, 2.5, 320.0, 512.0, float("inf"), float("-inf")]
    e8 = torch.tensor([0.0, 3.0, -3.0]).to(torch.float8_e8m0fnu)
    assert e8.float().tolist() == [2.0**-127, 4.0, 4.0]
    assert torch.finfo(torch.float8_e4m3fn).max == 448.0
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported"):
        torch.promote_types(torch.float8_e4m3fn, torch.float32)


def test_asarray():
    t = torch.arange(3.0)
    assert torch.asarray(t) is t
    assert torch.asarray(t, copy=True) is not t
    assert torch.asarray(t, dtype=torch.float64).dtype == torch.float64
    with pytest.raises(ValueError, match="can't alias tensor"):
        torch.asarray(t, dtype=torch.float64, copy=False)
    assert torch.asarray([1, 2]).dtype == torch.int64
    assert torch.asarray(np.arange(2.0)).dtype == torch.float64
    assert torch.asarray(bytearray(b"ab"), dtype=torch.uint8).tolist() == [97, 98]
    assert torch.asarray(t.untyped_storage(), dtype=torch.float32).tolist() == [0.0, 1.0, 2.0]
    assert torch.asarray(t, device="meta").is_meta
