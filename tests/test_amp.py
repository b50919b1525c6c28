"""Autocast, GradScaler, and the knobs scripts touch (version, backends, cuda on CPU)."""

import threading
import warnings

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from jtorch._ops import _dispatch
from jtorch.amp import _policy

X = torch.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
W = torch.from_numpy(np.ones((2, 4), dtype=np.float32))


def test_lists_name_registry_ops():
    assert _policy.missing("cuda") == []
    # Kept for PyTorch parity; jtorch has no kernel of that name (yet).
    assert set(_policy.missing("cpu")) <= {
        "quantile",
        "nanquantile",
        "nn.functional.max_pool3d_with_indices",
        "nn.functional.fractional_max_pool2d",
        "nn.functional.fractional_max_pool3d",
        "nn.functional.ctc_loss",
    }


def test_autocast_casts_lower_and_fp32_lists_and_hook_is_off_outside():
    assert _dispatch.autocast_hook is None
    with torch.autocast("cpu"):
        assert _dispatch.autocast_hook is not None
        assert torch.is_autocast_enabled("cpu") and not torch.is_autocast_enabled()
        assert torch.get_autocast_dtype("cpu") is torch.bfloat16
        y = F.linear(X, W)
        assert y.dtype is torch.bfloat16
        assert (X @ X.T).dtype is torch.bfloat16
        assert torch.mm(X.double(), X.T.double()).dtype is torch.float64  # float64 untouched
        assert (X + 1).dtype is torch.float32  # not listed
        assert F.mse_loss(y, y).dtype is torch.float32  # fp32 list
        # bf16 rounding of 0.1 * k, then exact products of small sums: compare to numpy.
        xb = X.numpy().astype(np.float32)
        np.testing.assert_allclose(
            y.float().numpy(), xb.sum(1, keepdims=True).repeat(2, 1), rtol=1e-2
        )
    assert _dispatch.autocast_hook is None
    assert not torch.is_autocast_enabled("cpu")
    assert F.linear(X, W).dtype is torch.float32


def test_nesting_disable_dtype_and_decorator():
    with torch.autocast("cpu", dtype=torch.float16):
        assert torch.mm(X, X.T).dtype is torch.float16
        with torch.autocast("cpu", enabled=False):
            assert torch.mm(X, X.T).dtype is torch.float32
            with torch.amp.autocast("cpu"):  # dtype=None: the current autocast dtype
                assert torch.mm(X, X.T).dtype is torch.float16
            assert not torch.is_autocast_enabled("cpu")
        assert torch.get_autocast_dtype("cpu") is torch.float16
    assert torch.get_autocast_dtype("cpu") is torch.bfloat16

    @torch.autocast("cpu", cache_enabled=False)
    def f(a):
        return torch.mm(a, a.T)

    assert f(X).dtype is torch.bfloat16
    assert torch.mm(X, X.T).dtype is torch.float32
    if not torch.cuda.is_available():  # (PyTorch's CPU build; tests/test_cuda.py has the GPU)
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ctx = torch.autocast("cuda")
        with ctx:
            assert not torch.is_autocast_enabled("cuda")
    with pytest.raises(ValueError, match="device_type"):
        torch.autocast(torch.device("cpu"))


def test_autocast_is_thread_local():
    seen = []
    with torch.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append(torch.mm(X, X.T).dtype))
        t.start()
        t.join()
    assert seen == [torch.float32]


def test_autocast_grads_flow_back_in_float32():
    w = W.clone().requires_grad_()
    with torch.autocast("cpu"):
        loss = F.linear(X, w).float().sum()
        loss2 = F.linear(X, w).sum()  # the weight's cast is cached and reused
    (loss + loss2).backward()
    assert w.grad.dtype is torch.float32
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.tile(X.numpy().sum(0), (2, 1)), rtol=1e-2)


def _run_scaler(grads, **kw):
    p = torch.zeros(2, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    scaler = torch.amp.GradScaler("cpu", **kw)
    scales, params = [], []
    for g in grads:
        opt.zero_grad()
        scaler.scale((p * torch.tensor(g)).sum()).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        params.append(p.detach().numpy().tolist())
    return scaler, scales, params


def test_grad_scaler_skips_nonfinite_steps_and_adjusts_scale():
    inf, nan = float("inf"), float("nan")
    scaler, scales, params = _run_scaler(
        [[1.0, 1.0], [inf, 1.0], [1.0, 2.0], [1.0, 1.0], [nan, 0.0], [1.0, 1.0]],
        init_scale=4.0,
        growth_interval=2,
    )
    # 4 -> clean(1/2) -> inf: back off to 2 -> clean -> clean: grow to 4 -> nan: 2 -> clean.
    assert scales == [4.0, 2.0, 2.0, 4.0, 2.0, 2.0]
    # SGD with lr 1 subtracts the unscaled gradient only on clean steps.
    assert params == [[-1, -1], [-1, -1], [-2, -3], [-3, -4], [-3, -4], [-4, -5]]
    assert scaler.state_dict() == {
        "scale": 2.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2,
        "_growth_tracker": 1,
    }
    other = torch.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.get_scale() == 2.0 and other.state_dict() == scaler.state_dict()


def test_grad_scaler_unscale_then_step_and_errors():
    p = torch.zeros(2, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=8.0)
    with pytest.raises(AssertionError, match="_scale is None"):
        scaler.step(opt)
    out = scaler.scale([p.sum(), (p * 2).sum()])
    assert isinstance(out, list) and len(out) == 2
    out[0].backward()
    assert p.grad.tolist() == [8.0, 8.0]
    scaler.unscale_(opt)
    assert p.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)  # does not unscale again
    assert p.detach().tolist() == [-1.0, -1.0]
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()


@pytest.mark.skipif(torch.cuda.is_available(), reason="GradScaler's CUDA default is enabled")
def test_grad_scaler_disabled_passes_through():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = torch.amp.GradScaler()  # device "cuda" by default
    assert not scaler.is_enabled()
    p = torch.ones(1, requires_grad=True)
    loss = (p * 3).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    opt = torch.optim.SGD([p], lr=1.0)
    scaler.step(opt)
    scaler.update()
    assert p.detach().tolist() == [-2.0]
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not torch.cuda.amp.GradScaler().is_enabled()
        assert torch.cpu.amp.GradScaler().is_enabled()
        with torch.cpu.amp.autocast():
            assert torch.mm(X, X.T).dtype is torch.bfloat16


def test_version_and_knobs():
    v = torch.__version__
    assert isinstance(v, str) and v == "2.13.0"
    assert v >= "1.8" and v >= (2, 0) and v < (2, 14) and v > "2.13.0rc1" and v == (2, 13)
    assert not v < "2.13"
    assert torch.version.__version__ == v and torch.version.hip is None
    if not torch.cuda.is_available():  # (None as in PyTorch's CPU build)
        assert torch.version.cuda is None
    assert torch.backends.mps.is_available() is False
    torch.backends.cudnn.benchmark = True
    assert torch.backends.cudnn.benchmark is True
    torch.backends.cudnn.benchmark = False
    assert torch.backends.cuda.matmul.allow_tf32 is False
    torch.backends.cuda.matmul.allow_tf32 = True
    assert torch.get_float32_matmul_precision() == "high"
    torch.set_float32_matmul_precision("highest")
    assert torch.backends.cuda.matmul.allow_tf32 is False


def test_cuda_on_a_cpu_machine_behaves_as_cpu_build():
    if torch.cuda.is_available():
        pytest.skip("an accelerator is present")
    assert torch.cuda.device_count() == 0
    torch.manual_seed(3)
    a = torch.rand(3)
    torch.manual_seed(3)
    torch.cuda.manual_seed_all(99)  # a no-op, as in PyTorch's CPU build
    assert torch.rand(3).tolist() == a.tolist()
    for f in (torch.cuda.synchronize, torch.cuda.current_device, torch.cuda.initial_seed):
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            f()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    end.record()
    assert start.elapsed_time(end) >= 0.0
    with torch.cuda.stream(torch.cuda.Stream()):
        pass
    assert torch.cuda.memory_allocated() == 0
