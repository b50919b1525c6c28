"""`SummaryWriter` and `FileWriter`: event files written by TensorBoard's own
`EventFileWriter`, with the summaries PyTorch's writer produces (`_summary.py`)."""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import _summary

__all__ = ["FileWriter", "SummaryWriter"]

_NO_GRAPH = (
    "SummaryWriter.add_graph is not available in jtorch: PyTorch builds the graph "
    "with torch.jit.trace, which jtorch does not have. jtorch.interop.functional "
    "gives the model as a jax function, whose jaxpr describes the same graph."
)


class FileWriter:
    """Matches `torch.utils.tensorboard.writer.FileWriter`: one event file in `log_dir`."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix="") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None) -> None:
        raise NotImplementedError(_NO_GRAPH)

    def add_onnx_graph(self, graph, walltime=None) -> None:
        raise NotImplementedError(_NO_GRAPH)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


class SummaryWriter:
    """Matches `torch.utils.tensorboard.SummaryWriter`: scalars, histograms, images, text,
    tensors and hyperparameters, in event files TensorBoard reads."""

    def __init__(
        self,
        log_dir=None,
        comment="",
        purge_step=None,
        max_queue=10,
        flush_secs=120,
        filename_suffix="",
    ) -> None:
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _summary.default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The run's writer, (re)created after `close()`; a `purge_step` is written first, so
        that TensorBoard hides the events of a crashed run from that step on."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START))
                )
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(
        self,
        tag,
        scalar_value,
        global_step=None,
        walltime=None,
        new_style=False,
        double_precision=False,
    ) -> None:
        self._get_file_writer().add_summary(
            _summary.scalar(tag, scalar_value, new_style, double_precision), global_step, walltime
        )

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None) -> None:
        """Each entry goes to a run of its own, `<log_dir>/<main_tag>_<tag>`, under main_tag."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run = root + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(run)
            if writer is None:
                writer = self.all_writers[run] = FileWriter(
                    run, self.max_queue, self.flush_secs, self.filename_suffix
                )
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None) -> None:
        self._get_file_writer().add_summary(_summary.tensor(tag, tensor), global_step, walltime)

    def add_histogram(
        self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None
    ) -> None:
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            _summary.histogram(tag, values, bins, max_bins), global_step, walltime
        )

    def add_image(
        self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"
    ) -> None:
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats), global_step, walltime
        )

    def add_images(
        self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"
    ) -> None:
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats), global_step, walltime
        )

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None) -> None:
        """Matches `SummaryWriter.add_figure`: matplotlib figure(s) rendered to images."""
        import numpy as np
        from matplotlib.backends import backend_agg

        def rgb(fig):
            canvas = backend_agg.FigureCanvasAgg(fig)
            canvas.draw()
            w, h = fig.canvas.get_width_height()
            chw = np.frombuffer(canvas.buffer_rgba(), np.uint8).reshape(h, w, 4)[:, :, :3]
            if close:
                import matplotlib.pyplot as plt

                plt.close(fig)
            return np.moveaxis(chw, 2, 0)

        if isinstance(figure, list):
            self.add_image(
                tag, np.stack([rgb(f) for f in figure]), global_step, walltime, dataformats="NCHW"
            )
        else:
            self.add_image(tag, rgb(figure), global_step, walltime, dataformats="CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None) -> None:
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def add_hparams(
        self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None
    ) -> None:
        """Matches `SummaryWriter.add_hparams`: a run of its own (`<log_dir>/<run_name>`,
        by default the current time) holding the hparams summaries and the metrics."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, start, end = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run) as w:
            for summary in (exp, start, end):
                w.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True) -> None:
        raise NotImplementedError(_NO_GRAPH)

    def add_onnx_graph(self, prototxt) -> None:
        raise NotImplementedError(_NO_GRAPH)

    def _unsupported(self, what: str):
        raise NotImplementedError(
            f"SummaryWriter.{what} is not supported by jtorch "
            "(scalars, histograms, images, figures, text, tensors and "
            "hparams are)"
        )

    def add_video(self, *args, **kwargs):
        self._unsupported("add_video")

    def add_audio(self, *args, **kwargs):
        self._unsupported("add_audio")

    def add_embedding(self, *args, **kwargs):
        self._unsupported("add_embedding")

    def add_pr_curve(self, *args, **kwargs):
        self._unsupported("add_pr_curve")

    def add_mesh(self, *args, **kwargs):
        self._unsupported("add_mesh")

    def add_custom_scalars(self, *args, **kwargs):
        self._unsupported("add_custom_scalars")

    def add_image_with_boxes(self, *args, **kwargs):
        self._unsupported("add_image_with_boxes")

    def flush(self) -> None:
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
