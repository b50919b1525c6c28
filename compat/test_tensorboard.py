"""`torch.utils.tensorboard.SummaryWriter` parity: the same logging calls under PyTorch and
jtorch, each into its own directory, read back with TensorBoard's own EventAccumulator; the
runs, tags, steps and values (scalars, histogram buckets, PNG bytes, text, tensors, hparams
plugin data) must be the same."""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")
pytest.importorskip("PIL")

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

import jtorch  # noqa: E402


def _log(lib, log_dir):
    from importlib import import_module

    tb = import_module(("torch" if lib is torch else "jtorch") + ".utils.tensorboard")
    rng = np.random.default_rng(0)
    weights = rng.normal(0, 1, (64, 8)).astype(np.float32)
    with tb.SummaryWriter(log_dir=log_dir) as w:
        for step in range(4):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.add_scalar("acc", lib.tensor(0.25 * step), step, new_style=True)
            w.add_scalar("lr/double", 0.1 * step, step, new_style=True, double_precision=True)
            w.add_scalars("run", {"a": step * 2.0, "b": lib.tensor(-1.5 * step)}, step)
            w.add_histogram("weights", lib.tensor(weights * (step + 1)), step)
            w.add_histogram("np_weights", weights[:, 0] + step, step, bins="auto")
            w.add_histogram("few_bins", lib.tensor(weights), step, max_bins=7)
        w.add_image("chw", lib.tensor(rng.random((3, 5, 4)).astype(np.float32)), 0)
        w.add_image("hw_uint8", (rng.random((6, 3)) * 255).astype(np.uint8), 1, dataformats="HW")
        w.add_image(
            "hwc", lib.tensor(rng.random((4, 4, 1)).astype(np.float32)), 2, dataformats="HWC"
        )
        w.add_images("batch", lib.tensor(rng.random((10, 3, 4, 4)).astype(np.float32)), 3)
        w.add_text("notes", "hello *tensorboard*", 0)
        w.add_tensor("t", lib.tensor([[1.0, 2.0], [3.0, 4.0]]), 0)
        w.add_hparams(
            {"lr": 0.1, "bsize": 16, "opt": "sgd", "flag": True},
            {"hparam/accuracy": 0.9},
            run_name="hp",
        )


def _read(log_dir):
    """Every run under `log_dir` (relative path) with its summaries as plain data."""
    out = {}
    for root, _dirs, files in sorted(os.walk(log_dir)):
        if not any(f.startswith("events.out.tfevents") for f in files):
            continue
        acc = EventAccumulator(
            root, size_guidance={"images": 0, "histograms": 0, "scalars": 0, "tensors": 0}
        )
        acc.Reload()
        run = {}
        for tag in acc.Tags()["scalars"]:
            run[("scalar", tag)] = [(e.step, round(e.value, 6)) for e in acc.Scalars(tag)]
        for tag in acc.Tags()["histograms"]:
            run[("histogram", tag)] = [
                (
                    e.step,
                    round(e.histogram_value.min, 5),
                    round(e.histogram_value.max, 5),
                    e.histogram_value.num,
                    round(e.histogram_value.sum, 3),
                    round(e.histogram_value.sum_squares, 2),
                    [round(x, 6) for x in e.histogram_value.bucket_limit],
                    list(e.histogram_value.bucket),
                )
                for e in acc.Histograms(tag)
            ]
        for tag in acc.Tags()["images"]:
            run[("image", tag)] = [
                (e.step, e.width, e.height, e.encoded_image_string) for e in acc.Images(tag)
            ]
        for tag in acc.Tags()["tensors"]:
            run[("tensor", tag)] = [
                (e.step, e.tensor_proto.SerializeToString()) for e in acc.Tensors(tag)
            ]
        meta = {}
        for tag in acc.Tags()["tensors"]:
            try:
                meta[tag] = acc.SummaryMetadata(tag).plugin_data.content
            except KeyError:  # a plain tensor summary has no plugin metadata
                meta[tag] = None
        run["plugin_content"] = meta
        out[os.path.relpath(root, log_dir)] = run
    return out


def test_summary_writer_matches_pytorch(tmp_path):
    t_dir, j_dir = str(tmp_path / "torch"), str(tmp_path / "jtorch")
    _log(torch, t_dir)
    _log(jtorch, j_dir)
    t, j = _read(t_dir), _read(j_dir)
    assert sorted(j) == sorted(t)
    for run in t:
        assert sorted(j[run], key=str) == sorted(t[run], key=str), run
        for key in t[run]:
            assert j[run][key] == t[run][key], (run, key)


def test_default_log_dir_and_purge_step(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from jtorch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(comment="_exp")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    w.close()
    w = SummaryWriter(log_dir=str(tmp_path / "purge"), purge_step=5)
    w.add_scalar("x", 1.0, 5)
    w.close()
    acc = EventAccumulator(str(tmp_path / "purge"))
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("x")] == [(5, 1.0)]


def test_unsupported_calls_say_so(tmp_path):
    from jtorch.utils.tensorboard import SummaryWriter

    with SummaryWriter(log_dir=str(tmp_path)) as w:
        with pytest.raises(NotImplementedError, match="torch.jit.trace"):
            w.add_graph(jtorch.nn.Linear(2, 2), jtorch.ones(1, 2))
        with pytest.raises(NotImplementedError, match="add_video"):
            w.add_video("v", jtorch.ones(1, 2, 3, 4, 4))
