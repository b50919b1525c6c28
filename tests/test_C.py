"""`torch._C`: the names libraries read (PyTorch's CPU-build answers, documented behaviour)."""

import pytest

import jtorch as torch
from jtorch import _C


def test_types_are_jtorch_types():
    assert _C.Generator is torch.Generator and _C.default_generator is torch.default_generator
    assert _C.Size is torch.Size and _C.dtype is torch.dtype and _C.device is torch.device
    assert isinstance(torch.ones(1), _C.TensorBase) and isinstance(torch.Tensor, _C._TensorMeta)
    assert _C.ScriptModule is torch.ScriptModule
    assert _C.ScriptFunction is torch.jit.ScriptFunction


def test_no_accelerator_answers():
    if torch.cuda.is_available():
        pytest.skip("answers of a CPU-only build")
    assert _C._get_accelerator() == torch.device("cpu")
    assert not hasattr(_C, "_cuda_getDeviceCount") and _C._has_cuda is False
    with pytest.raises(AttributeError):
        getattr(_C, "_cuda_isInBadFork")  # noqa: B009


def test_switches():
    _C._set_grad_enabled(False)
    try:
        assert not torch.is_grad_enabled()
    finally:
        _C._set_grad_enabled(True)
    with pytest.raises(TypeError, match="must be bool"):
        _C._set_grad_enabled(1)
    assert _C._get_cudnn_enabled() is torch.backends.cudnn.enabled
    assert _C._get_default_device() == "cpu"
    assert _C._get_tracing_state() is None
    assert _C._log_api_usage_once("x") is None
    with pytest.raises(TypeError):
        _C._log_api_usage_once(3)


def test_parse_to():
    x = torch.zeros(2, dtype=torch.float64)
    assert _C._nn._parse_to(x) == (x.device, torch.float64, False, None)
    assert _C._nn._parse_to("cpu", torch.float16, True) == (
        torch.device("cpu"),
        torch.float16,
        True,
        None,
    )
    assert _C._nn._parse_to(memory_format=torch.channels_last)[3] is torch.channels_last
    with pytest.raises(RuntimeError, match="copy"):
        _C._nn._parse_to("cpu", copy=True)
    with pytest.raises(TypeError):
        _C._nn._parse_to("cpu", "x")


def test_ir_classes_say_there_is_no_ir():
    with pytest.raises(RuntimeError, match="no TorchScript IR"):
        _C.Graph()
    with pytest.raises(TypeError, match="No constructor"):
        _C.Value()


def test_nn_kernels_are_functional():
    assert _C._nn.gelu is torch.nn.functional.gelu
    with pytest.raises(AttributeError):
        getattr(_C._nn, "mse_loss")  # noqa: B009 - PyTorch's takes reduction as an enum int: not offered
