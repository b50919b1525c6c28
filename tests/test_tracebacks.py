"""Errors raised in ops show the caller's frames and PyTorch's message, without jtorch's
machinery or jax's note; anomaly mode points at the forward call (PyTorch's documented
behaviour: its ops' internals are C++ and never appear in a Python traceback)."""

import os
import subprocess
import sys
import textwrap
import traceback
import warnings

import pytest

import jtorch
from jtorch import _tracebacks

_HERE = os.path.abspath(__file__)


def _frames(e):
    return [(f.filename, f.name) for f in traceback.extract_tb(e.__traceback__)]


def _internal_frames(e):
    return [f for f, _ in _frames(e) if _tracebacks.internal(f)]


@pytest.mark.parametrize(
    "call",
    [
        lambda: jtorch.ones(2, 3) @ jtorch.ones(4, 5),  # a registry op
        lambda: jtorch.cat([jtorch.ones(2, 3), jtorch.ones(2, 4)]),  # checked in the kernel
        lambda: jtorch.ones(2, 3).view(4),  # a composite
        lambda: jtorch.ones(2, 3).gather(1, jtorch.tensor([[5]])),
        lambda: jtorch.ones(2, 3)[jtorch.tensor([7])],
    ],
)
def test_op_errors_end_at_the_callers_line(call):
    with pytest.raises((RuntimeError, IndexError)) as info:
        call()
    e = info.value
    assert _internal_frames(e) == []
    assert _frames(e)[-1] == (_HERE, "<lambda>")
    assert not any("JAX" in n for n in getattr(e, "__notes__", ()))


def test_filtering_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("JTORCH_TRACEBACK_FILTERING", "off")
    with pytest.raises(RuntimeError) as info:
        jtorch.ones(2, 3) @ jtorch.ones(4, 5)
    assert _internal_frames(info.value)  # the registry's frames are back
    assert not any("JAX" in n for n in getattr(info.value, "__notes__", ()))


def test_errors_in_user_callbacks_keep_the_users_frames():
    def f(x):
        raise ValueError("from the user's function")

    with pytest.raises(ValueError) as info:
        jtorch.func.vmap(f)(jtorch.ones(3))
    assert (_HERE, "f") in _frames(info.value)


def test_bug_like_exceptions_keep_every_frame():
    def inner():
        raise KeyError("an internal bug")

    try:
        inner()
    except KeyError as e:
        before = _frames(e)
        _tracebacks.clean(e)
        assert _frames(e) == before


def test_runner_prints_the_users_frames_only(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text(
        textwrap.dedent("""
        import torch

        def model(x):
            return x.reshape(5)

        model(torch.ones(2, 3))
    """)
    )
    root = os.path.dirname(os.path.dirname(jtorch.__file__))
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run(
        [sys.executable, "-m", "jtorch", str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 1
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("  File ")]
    assert len(lines) == 2 and all(str(script) in ln for ln in lines), out.stderr
    assert out.stderr.rstrip().endswith("RuntimeError: shape '[5]' is invalid for input of size 6")
    assert "JAX" not in out.stderr


def _sqrt_model(x):
    y = x * 2
    return jtorch.sqrt(y - 10).sum()  # nan gradient for these inputs


def test_anomaly_mode_warns_with_the_forward_traceback_then_raises():
    x = jtorch.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with jtorch.autograd.detect_anomaly():
            loss = _sqrt_model(x)
            with pytest.raises(
                RuntimeError,
                match="Function 'SqrtBackward0' returned nan values in its 0th output.",
            ):
                loss.backward()
    msgs = [str(w.message) for w in caught if "Error detected" in str(w.message)]
    assert len(msgs) == 1
    msg = msgs[0]
    assert msg.startswith(
        "Error detected in SqrtBackward0. Traceback of forward call that caused the error:\n"
    )
    files = [ln for ln in msg.splitlines() if ln.startswith("  File ")]
    assert files[-1].endswith(", in _sqrt_model") and _HERE in files[-1]
    assert "jtorch.sqrt(y - 10)" in msg
    assert not any(_tracebacks.internal(ln.split('"')[1]) for ln in files)


def test_anomaly_mode_reports_errors_raised_by_a_backward():
    class Bad(jtorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    x = jtorch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with jtorch.autograd.set_detect_anomaly(True):
            y = Bad.apply(x).sum()
            with pytest.raises(ValueError, match="broken backward"):
                y.backward()
    assert any(
        "Error detected in BadBackward" in str(w.message) and "Bad.apply(x)" in str(w.message)
        for w in caught
    )


def test_without_anomaly_mode_nothing_is_recorded_or_checked():
    x = jtorch.tensor([1.0, 2.0], requires_grad=True)
    loss = _sqrt_model(x)
    assert loss.grad_fn._trace is None
    loss.backward()
    assert all(v != v for v in x.grad.tolist())  # nan, not an error


def test_op_errors_are_clean_while_a_torch_function_mode_is_active():
    from jtorch.overrides import TorchFunctionMode

    class Passthrough(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Passthrough():
        with pytest.raises(RuntimeError) as info:
            jtorch.ones(2, 3) @ jtorch.ones(4, 5)
    assert _internal_frames(info.value) == []
    names = [name for _, name in _frames(info.value)]
    assert names[0] == "test_op_errors_are_clean_while_a_torch_function_mode_is_active"
    assert "__torch_function__" in names  # the user's mode stays in the traceback
