"""A script's error looks the same under PyTorch and under `python -m jtorch`: the same
frames of the script, the same last line, no jax note; anomaly mode's warning names the same
forward call."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SCRIPTS = {
    "matmul": """
        import torch
        a = torch.ones(2, 3)
        b = a @ torch.ones(4, 5)
    """,
    "linear": """
        import torch

        def run(model, x):
            return model(x)

        run(torch.nn.Linear(4, 2), torch.ones(2, 3))
    """,
    "view": """
        import torch
        x = torch.arange(6.0).reshape(2, 3)
        y = x.t().view(6)
    """,
    "index": """
        import torch
        x = torch.zeros(5)
        x.index_put_((torch.tensor([1, 10]),), torch.ones(2))
    """,
    "conv": """
        import torch
        conv = torch.nn.Conv2d(4, 2, 3)
        conv(torch.ones(1, 3, 8, 8))
    """,
    "anomaly": """
        import torch

        def model(x):
            y = x * 2
            z = torch.sqrt(y - 10)
            return z.sum()

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            loss = model(x)
            loss.backward()
    """,
}


def _run(script: str, jtorch: bool) -> str:
    env = dict(os.environ, PYTHONPATH=_ROOT, PYTHONWARNINGS="default")
    cmd = [sys.executable] + (["-m", "jtorch"] if jtorch else []) + [script]
    out = subprocess.run(
        cmd, capture_output=True, text=True, env=env, timeout=300, cwd=os.path.dirname(script)
    )
    assert out.returncode == 1, out.stderr
    return out.stderr


def _script_frames(text: str, script: str) -> list:
    return re.findall(rf'File "{re.escape(script)}", line (\d+), in (\S+)', text)


@pytest.mark.parametrize("name", sorted(_SCRIPTS))
def test_script_errors_read_as_under_pytorch(name, tmp_path):
    script = str(tmp_path / f"{name}.py")
    with open(script, "w") as f:
        f.write(textwrap.dedent(_SCRIPTS[name]))
    t, j = _run(script, False), _run(script, True)
    t_tb, j_tb = (
        t[t.index("Traceback (most recent call last)") :],
        j[j.index("Traceback (most recent call last)") :],
    )
    assert _script_frames(j_tb, script) == _script_frames(t_tb, script)
    assert j_tb.rstrip().splitlines()[-1] == t_tb.rstrip().splitlines()[-1]
    assert "JAX" not in j
    if name == "anomaly":
        marker = "Traceback of forward call that caused the error:"
        t_warn = t[t.index(marker) : t.index("Traceback (most recent call last)")]
        j_warn = j[j.index(marker) : j.index("Traceback (most recent call last)")]
        assert _script_frames(j_warn, script) == _script_frames(t_warn, script)
        assert "Error detected in SqrtBackward0." in j
