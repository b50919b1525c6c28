"""`torch.utils.tensorboard`: `SummaryWriter` writing TensorBoard event files.

It needs the `tensorboard` package, as PyTorch's does: without it, importing this module
raises the same ModuleNotFoundError (`No module named 'tensorboard'`), and a TensorBoard
older than 1.15 raises PyTorch's ImportError.
"""

import tensorboard

if tuple(
    int(p) for p in (getattr(tensorboard, "__version__", "0").split(".") + ["0"])[:2] if p.isdigit()
) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from ._writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
