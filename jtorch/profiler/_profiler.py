"""`torch.profiler.profile`: PyTorch's step schedule over jtorch's wall-clock ranges.

The schedule, the actions taken between steps (`prepare`/`start`/`stop` a trace, call
`on_trace_ready`) and the `ProfilerStep#N` ranges follow PyTorch. What is recorded is what
`torch.autograd.profiler` records: `record_function` ranges in host wall time (see there).
"""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings

from ..autograd import profiler as _legacy


class ProfilerActivity(enum.Enum):
    """Matches `torch.profiler.ProfilerActivity`."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """Matches `torch.profiler.ProfilerAction`: what the profiler does during a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities() -> set:
    """Matches `torch.profiler.supported_activities`: CPU, and CUDA where jtorch has it."""
    from .. import cuda

    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if cuda.is_available() else set())


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
):
    """Matches `torch.profiler.schedule`: step number -> `ProfilerAction`.

    After `skip_first` steps, cycles of `wait` idle, `warmup` and `active` recording steps
    (the last one RECORD_AND_SAVE), `repeat` times (0: forever). `skip_first_wait` drops the
    first cycle's wait.
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step >= repeat * cycle:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
):
    """Matches `torch.profiler.tensorboard_trace_handler`: each trace to a file in `dir_name`.

    Files are named `<worker>.<time ns>.pt.trace.json` (`.gz` with `use_gzip`), the worker
    defaulting to `<hostname>_<pid>`, as PyTorch names them.
    """

    def handler_fn(prof) -> None:
        nonlocal worker_name
        try:
            os.makedirs(dir_name, exist_ok=True)
        except Exception as e:
            raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker_name}.{time.time_ns()}.pt.trace.json")
        prof.export_chrome_trace(path + ".gz" if use_gzip else path)

    return handler_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    """The schedule of a `profile` made without one: record every step (PyTorch's)."""
    return ProfilerAction.RECORD


class profile:
    """Matches `torch.profiler.profile`: a context manager with `step()` and a schedule.

    Without a schedule it records from entry to exit. `key_averages()`, `events()` and
    `export_chrome_trace()` give the last finished recording.
    """

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
    ):
        if activities is not None:
            acts = set()
            for item in activities:
                acts |= set(item) if isinstance(item, dict) else {item}
        else:
            acts = supported_activities()
        if use_cuda is not None:
            warnings.warn(
                "`use_cuda` is deprecated, use `activities` argument instead",
                FutureWarning,
                stacklevel=2,
            )
            acts = acts | {ProfilerActivity.CUDA} if use_cuda else acts - {ProfilerActivity.CUDA}
        if not acts:
            raise AssertionError("No valid profiler activities found")
        self.activities = acts
        self.record_shapes, self.profile_memory, self.with_stack = (
            record_shapes,
            profile_memory,
            with_stack,
        )
        self.with_flops, self.with_modules, self.acc_events = with_flops, with_modules, acc_events
        self.record_steps = schedule is not None
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        self.profiler = None  # the legacy profiler of the current or last recording
        self.current_action = self._checked(self.schedule(0))

    @staticmethod
    def _checked(action):
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError(
                "ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                "and must not be returned by a user-provided schedule"
            )
        return action

    # -- the trace lifecycle -------------------------------------------------

    def prepare_trace(self) -> None:
        # Nothing to warm up; a new recording replaces the last unless events accumulate.
        previous = self.profiler
        self.profiler = _legacy.profile(
            record_shapes=self.record_shapes,
            profile_memory=self.profile_memory,
            with_stack=self.with_stack,
            acc_events=self.acc_events,
        )
        if self.acc_events and previous is not None:
            self.profiler.function_events = previous.function_events

    def start_trace(self) -> None:
        if self.profiler is None:
            self.prepare_trace()
        self.profiler._start()

    def stop_trace(self) -> None:
        if self.profiler is not None:
            self.profiler._stop()

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit(self, prev, cur) -> None:
        """PyTorch's action table between two steps' actions (`cur` None: the profiler stops)."""
        A = ProfilerAction
        none, warm, rec, save = A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE
        recording = (rec, save)
        steps = []
        if prev == none and cur in (warm,) + recording:
            steps = [self.prepare_trace] + ([self.start_trace] if cur in recording else [])
        elif prev == warm and cur in recording:
            steps = [self.start_trace]
        elif prev == warm and cur in (none, None):
            if cur == none:
                warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
            steps = [self.start_trace, self.stop_trace]
        elif prev == rec and cur in (none, warm):
            warnings.warn(f"Incorrect schedule: RECORD followed by {cur.name}", stacklevel=3)
            steps = [self.stop_trace]
        elif prev in recording and cur is None:
            steps = [self.stop_trace, self._trace_ready]
        elif prev == save:
            steps = [self.stop_trace, self._trace_ready]
            if cur in (warm,) + recording:
                steps.append(self.prepare_trace)
            if cur in recording:
                steps.append(self.start_trace)
        for fn in steps:
            fn()

    # -- the public API --------------------------------------------------------

    def start(self) -> None:
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self) -> None:
        self._close_step()
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Matches `torch.profiler.profile.step`: the next step begins."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self._checked(self.schedule(self.step_num))
        self._transit(prev, self.current_action)
        self._open_step()

    def _open_step(self) -> None:
        if self.record_steps:
            self.step_rec_fn = _legacy.record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _close_step(self) -> None:
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _initialized(self, what: str):
        if self.profiler is None:
            raise AssertionError(f"Profiler must be initialized before {what}")
        return self.profiler

    def events(self):
        """The recorded ranges of the last finished recording (`FunctionEvent`s)."""
        return self._initialized("accessing events").events()

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ):
        """Per-name sums of the last finished recording: rows with `.key`, `.count`, times."""
        return self._initialized("getting key averages").key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def export_chrome_trace(self, path: str) -> None:
        """Writes the last recording as Chrome-trace JSON (gzip-compressed for `*.gz`)."""
        events = self._initialized("exporting chrome trace").events()
        if path.endswith(".gz"):
            import gzip

            tmp = path[:-3] + ".tmp"
            events.export_chrome_trace(tmp)
            with open(tmp, "rb") as src, gzip.open(path, "wb") as dst:
                dst.write(src.read())
            os.remove(tmp)
        else:
            events.export_chrome_trace(path)
