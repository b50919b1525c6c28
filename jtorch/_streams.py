"""`torch.Stream` and `torch.Event`: device-agnostic streams and events.

jtorch runs each device's work in order (jax dispatches asynchronously on one stream per
device): a CPU stream or event behaves as PyTorch's CPU ones (no events to record); on an
accelerator they are `torch.cuda.Stream` / `torch.cuda.Event`'s behaviour.
"""

from __future__ import annotations

from . import _device

__all__ = ["Stream", "Event"]

_NO_EVENTS = "{kind} backend doesn't support events."


def _resolve(device) -> _device.device:
    if device is None:
        return _device.device("cpu")
    return device if isinstance(device, _device.device) else _device.device(device)


class Stream:
    """Matches `torch.Stream`: a stream of a device (the CPU has one, id 0)."""

    def __init__(self, device=None, *, priority: int = 0, **kwargs):
        self.device = _resolve(device)
        self.priority = priority
        self.stream_id = 0

    @property
    def device_type(self) -> int:
        return 0 if self.device.type == "cpu" else 1

    @property
    def device_index(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        if self.device.type != "cpu":
            from . import cuda

            cuda.synchronize()

    def wait_event(self, event) -> None:
        event.wait(self)

    def wait_stream(self, stream) -> None:
        stream.synchronize()

    def record_event(self, event=None):
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Stream)
            and other.device == self.device
            and (other.stream_id == self.stream_id)
        )

    def __hash__(self) -> int:
        return hash((self.device, self.stream_id))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self) -> str:
        return (
            f"torch.Stream device_type={self.device.type}, device_index="
            f"{self.device_index}, stream_id={self.stream_id}"
        )


class Event:
    """Matches `torch.Event`: a marker in a device's stream (CPU streams have none to
    record)."""

    def __init__(
        self,
        device=None,
        *,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
    ):
        self.device = _resolve(device)
        self.enable_timing, self.blocking = enable_timing, blocking
        self._recorded = False

    def record(self, stream=None) -> None:
        if self.device.type == "cpu":
            raise RuntimeError(_NO_EVENTS.format(kind="cpu"))
        self._recorded = True

    def query(self) -> bool:
        return True

    def wait(self, stream=None) -> None:
        pass

    def synchronize(self) -> None:
        if self._recorded:
            from . import cuda

            cuda.synchronize()

    def elapsed_time(self, end_event) -> float:
        raise RuntimeError(
            _NO_EVENTS.format(kind=self.device.type)
            if self.device.type == "cpu"
            else "Events were not created with enable_timing=True"
            if not self.enable_timing
            else "jtorch events carry no timestamps (time with jax's profiler)"
        )

    def __repr__(self) -> str:
        index = -1 if self.device.type == "cpu" else (self.device.index or 0)
        return (
            f"torch.Event device_type={self.device.type}, device_index={index}, "
            "event_flag=0, event_id=0"
        )
