"""`torch.utils.tensorboard.SummaryWriter` without PyTorch: what it writes, read back with
TensorBoard's EventAccumulator (skipped where the `tensorboard` package is missing)."""

import subprocess
import sys

import numpy as np
import pytest

import jtorch

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from jtorch.utils.tensorboard import SummaryWriter  # noqa: E402


def _acc(path):
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_scalars_histogram_text(tmp_path):
    values = np.array([-1.0, 0.5, 0.5, 2.0], np.float32)
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        for step in range(3):
            w.add_scalar("loss", jtorch.tensor(1.0 / (step + 1)), step)
        w.add_histogram("h", jtorch.tensor(values), 7)
        w.add_text("note", "hi", 1)
    acc = _acc(tmp_path)
    assert [(e.step, round(e.value, 6)) for e in acc.Scalars("loss")] == [
        (0, 1.0),
        (1, 0.5),
        (2, 0.333333),
    ]
    h = acc.Histograms("h")[0]
    assert h.step == 7
    hv = h.histogram_value
    assert (hv.min, hv.max, hv.num, hv.sum, hv.sum_squares) == (-1.0, 2.0, 4, 2.0, 5.5)
    assert sum(hv.bucket) == 4
    assert acc.Tensors("note/text_summary")[0].tensor_proto.string_val == [b"hi"]


def test_add_scalars_writes_one_run_per_entry(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        w.add_scalars("m/x", {"a": 1.0, "b": 2.0}, 0)
    for name, v in [("a", 1.0), ("b", 2.0)]:
        acc = _acc(tmp_path / f"m_x_{name}")
        assert [e.value for e in acc.Scalars("m/x")] == [v]


def test_missing_tensorboard_raises_pytorchs_error():
    code = (
        "import sys; sys.modules['tensorboard'] = None\n"
        "import jtorch\n"
        "try:\n    import jtorch.utils.tensorboard\n"
        "except ImportError as e:\n    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "ModuleNotFoundError" in out.stdout or "ImportError" in out.stdout, out.stderr
    assert "tensorboard" in out.stdout
