"""`torch.cuda.streams`: `Stream` and `Event` (see `torch.cuda`)."""

from . import Event, Stream  # noqa: F401
