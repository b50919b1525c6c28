"""`torch.cuda.streams`: `Stream` and `Event`, and the stream context functions.

Streams and events are accepted everywhere: XLA orders work itself, so a stream is a no-op
context and an event records a host timestamp after waiting for queued work.
"""

from __future__ import annotations

import time

import jax


class Stream:
    """Matches `torch.cuda.Stream`; XLA orders the work, so waiting is all it does."""

    def __init__(self, device=None, priority: int = 0, **kwargs):
        self.device = device
        self.priority = priority

    def wait_event(self, event) -> None:
        pass

    def wait_stream(self, stream) -> None:
        pass

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _wait_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_default_stream = Stream()


def current_stream(device=None) -> Stream:
    return _default_stream


def default_stream(device=None) -> Stream:
    return _default_stream


class StreamContext:
    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)


def _wait_all() -> None:
    for arr in jax.live_arrays():
        arr.block_until_ready()


class Event:
    """Matches `torch.cuda.Event`: `record()` waits for queued work, then notes the time."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ):
        self.enable_timing = enable_timing
        self._time = None

    def record(self, stream=None) -> None:
        _wait_all()
        self._time = time.perf_counter()

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _wait_all()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and `end_event`, as PyTorch reports."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0
