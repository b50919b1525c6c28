"""`torch.autograd.profiler`: host wall-clock ranges, their averages, tables and traces.

What is recorded: every `record_function(name)` range (and `torch.profiler`'s
`ProfilerStep#N` ranges) entered while a profiler records, and every registered op call
(`aten::<op>`, through the registry's `profile_hook`), timed with `time.perf_counter_ns`.
No device time is measured: JAX dispatches work asynchronously, so an op's time is its host
dispatch, and device time shows up in the range where the host waits for a result
(`.item()`, `.cpu()`, printing). Memory and FLOP columns are therefore absent.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import OrderedDict

from .._ops import _registry

_recording: list = []  # the event lists of the profilers now recording (usually 0 or 1)
_lock = threading.Lock()


def _profiler_enabled() -> bool:
    """Matches `torch.autograd._profiler_enabled`: whether a profiler is recording now."""
    return bool(_recording)


def _disable_profiler() -> EventList:
    """Matches `torch.autograd._disable_profiler`: stops every recording profiler and gives
    the events recorded so far (their profilers then hold no open recording)."""
    with _lock:
        ranges = [r for rs in _recording for r in rs]
        _recording.clear()
        _registry.set_profile_hook(None)
    return _build_events(ranges)


def kineto_available() -> bool:
    """Matches `torch.autograd.profiler.kineto_available`: jtorch has no Kineto."""
    return False


def _format_time(us: float) -> str:
    """PyTorch's time format in tables: 3 decimals, in s, ms or us."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class Interval:
    """A time range in microseconds."""

    def __init__(self, start: float, end: float):
        self.start, self.end = start, end

    def elapsed_us(self) -> float:
        return self.end - self.start


class _TimeStrings:
    """The `*_str` properties shared by events and averages."""

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)

    @property
    def device_time_str(self) -> str:
        return _format_time(self.device_time)

    @property
    def device_time_total_str(self) -> str:
        return _format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self) -> str:
        return _format_time(self.self_device_time_total)

    # No device time is measured (module docstring); CUDA names are PyTorch's old aliases.
    device_time = device_time_total = self_device_time_total = 0.0
    cuda_time = cuda_time_total = self_cuda_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0
    flops = 0


class FunctionEvent(_TimeStrings):
    """One recorded range: name, thread, start/end (us), its parent and children ranges."""

    def __init__(
        self,
        id: int,
        name: str,
        thread: int,
        start_us: float,
        end_us: float,
        input_shapes=None,
        stack=None,
    ):
        # PyTorch names step ranges "ProfilerStep*" so that they average together; the
        # trace keeps "ProfilerStep#N".
        self.trace_name = name
        if name.startswith("ProfilerStep#"):
            name = "ProfilerStep*"
        self.id, self.name, self.key, self.thread = id, name, name, thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes or []
        self.stack = stack or []
        self.cpu_children: list = []
        self.cpu_parent = None
        self.count = 1
        self.is_user_annotation = name != "ProfilerStep*"

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
            f"cpu_time={self.cpu_time_str} start_us={self.time_range.start:.3f} "
            f"end_us={self.time_range.end:.3f} "
            f"cpu_children={[c.id for c in self.cpu_children]}>"
        )


class FunctionEventAvg(_TimeStrings):
    """Events sharing a key, summed: `count`, `cpu_time_total`, `self_cpu_time_total`, ..."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = None
        self.stack = None
        self.cpu_children = None
        self.cpu_parent = None
        self.is_user_annotation = False

    def add(self, other) -> FunctionEventAvg:
        if self.key is None:
            self.key, self.input_shapes = other.key, other.input_shapes
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_total_str} count={self.count}>"
        )


class EventList(list):
    """Matches `torch.autograd.profiler_util.EventList`: a list of events with summaries."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """One `FunctionEventAvg` per key (and input shapes), in order of first appearance."""
        rows: OrderedDict = OrderedDict()
        for e in self:
            key = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            if group_by_stack_n > 0:
                key = (key, tuple(e.stack[:group_by_stack_n]))
            rows.setdefault(key, FunctionEventAvg()).add(e)
        return EventList(rows.values())

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        """The summary table PyTorch prints, CPU columns only (no device time is measured)."""
        return _table(
            self, sort_by, row_limit, max_name_column_width, header, top_level_events_only
        )

    def export_chrome_trace(self, path: str) -> None:
        """Writes the ranges as a Chrome trace (`chrome://tracing`, Perfetto, TensorBoard)."""
        pid = os.getpid()
        events = [
            {
                "ph": "X",
                "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                "name": e.trace_name,
                "pid": pid,
                "tid": e.thread,
                "ts": e.time_range.start,
                "dur": e.cpu_time_total,
                "args": {},
            }
            for e in self
        ]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


def _table(events, sort_by, row_limit, max_name_width, header, top_level_only) -> str:
    if top_level_only:
        events = [e for e in events if e.cpu_parent is None]
    if not events:
        return ""
    if sort_by is not None:
        # PyTorch's CUDA names are aliases of the device times (0 here).
        key = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, key), reverse=True)
    # PyTorch's percentages and total count every row, also those past `row_limit`.
    total = sum(e.self_cpu_time_total for e in events) or 1.0
    if row_limit > 0:
        events = events[:row_limit]
    name_width = min(max(len(e.key) for e in events) + 4, max_name_width)
    headers = [
        "Name",
        "Self CPU %",
        "Self CPU",
        "CPU total %",
        "CPU total",
        "CPU time avg",
        "# of Calls",
    ]
    widths = [name_width] + [12] * (len(headers) - 1)
    fmt = "".join("{:>" + str(w) + "}  " for w in widths)
    line = "".join("-" * w + "  " for w in widths)
    out = [] if header is None else ["=" * len(line), header]
    out += [line, fmt.format(*headers), line]
    for e in events:
        name = e.key if len(e.key) <= name_width else e.key[: name_width - 3] + "..."
        out.append(
            fmt.format(
                name,
                f"{e.self_cpu_time_total / total * 100:.2f}%",
                _format_time(e.self_cpu_time_total),
                f"{e.cpu_time_total / total * 100:.2f}%",
                _format_time(e.cpu_time_total),
                _format_time(e.cpu_time),
                e.count,
            )
        )
    out += [line, f"Self CPU time total: {_format_time(total)}", ""]
    return "\n".join(out)


class _Range:
    __slots__ = ("name", "thread", "start", "end")

    def __init__(self, name: str):
        self.name, self.thread = name, threading.get_ident()
        self.start, self.end = time.perf_counter_ns(), None


def _op_range(name: str) -> _Range:
    """The registry's `profile_hook`: a range for one op call, closed by the dispatcher."""
    r = _Range("aten::" + name)
    with _lock:
        for ranges in _recording:
            ranges.append(r)
    return r


def _build_events(ranges) -> EventList:
    """Finished ranges as `FunctionEvent`s, children linked by nesting within each thread."""
    done = sorted((r for r in ranges if r.end is not None), key=lambda r: (r.start, -r.end))
    threads: dict = {}
    events = EventList()
    for i, r in enumerate(done):
        tid = threads.setdefault(r.thread, len(threads) + 1)
        e = FunctionEvent(i + 1, r.name, tid, r.start / 1e3, r.end / 1e3)
        events.append(e)
    stacks: dict = {}
    for e in events:
        stack = stacks.setdefault(e.thread, [])
        while stack and stack[-1].time_range.end <= e.time_range.start:
            stack.pop()
        if stack and e.time_range.end <= stack[-1].time_range.end:
            e.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(e)
        stack.append(e)
    return events


class record_function(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """Matches `torch.autograd.profiler.record_function`: a named range, as context or decorator.

    Costs nothing when no profiler records.
    """

    def __init__(self, name: str, args: str | None = None):
        self.name, self.args = name, args
        self._range = None

    def __enter__(self):
        if _recording:
            r = _Range(self.name)
            with _lock:
                for ranges in _recording:
                    ranges.append(r)
            self._range = r
        return self

    def __exit__(self, *exc):
        if self._range is not None:
            self._range.end = time.perf_counter_ns()
            self._range = None
        return False


class profile:
    """Matches `torch.autograd.profiler.profile` (the legacy profiler), CPU wall time only."""

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device=None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config=None,
        acc_events: bool = False,
        custom_trace_id_callback=None,
    ):
        self.enabled = enabled
        self.record_shapes, self.profile_memory, self.with_stack = (
            record_shapes,
            profile_memory,
            with_stack,
        )
        self.acc_events = acc_events
        self.function_events = None
        self._ranges = None
        self.entered = False

    def _start(self) -> None:
        if self._ranges is not None:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._ranges = []
        with _lock:
            _recording.append(self._ranges)
            _registry.set_profile_hook(_op_range)

    def _stop(self) -> None:
        if self._ranges is None:
            return
        with _lock:
            _recording[:] = [r for r in _recording if r is not self._ranges]
            if not _recording:
                _registry.set_profile_hook(None)
        events = _build_events(self._ranges)
        if self.acc_events and self.function_events:
            events = EventList(list(self.function_events) + list(events))
        self.function_events, self._ranges = events, None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop()
        return False

    def _check_finish(self) -> None:
        # PyTorch answers with no events before (or while) the profiler runs.
        if self.function_events is None:
            self.function_events = EventList()

    def events(self) -> EventList:
        self._check_finish()
        return self.function_events

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        self._check_finish()
        return self.function_events.key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def total_average(self) -> FunctionEventAvg:
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self) -> float:
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def table(
        self,
        sort_by=None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header=None,
        top_level_events_only: bool = False,
    ) -> str:
        self._check_finish()
        return self.function_events.table(
            sort_by,
            row_limit,
            max_src_column_width,
            max_name_column_width,
            max_shapes_column_width,
            header,
            top_level_events_only,
        )

    def export_chrome_trace(self, path: str) -> None:
        self._check_finish()
        self.function_events.export_chrome_trace(path)

    def __str__(self) -> str:
        self._check_finish()
        return self.table()


@contextlib.contextmanager
def _nothing(*args, **kwargs):
    yield


def emit_nvtx(enabled: bool = True, record_shapes: bool = False):
    """Matches `torch.autograd.profiler.emit_nvtx`: jtorch emits no NVTX ranges (no-op)."""
    return _nothing()


def emit_itt(enabled: bool = True, record_shapes: bool = False):
    """Matches `torch.autograd.profiler.emit_itt`: jtorch emits no ITT ranges (no-op)."""
    return _nothing()
