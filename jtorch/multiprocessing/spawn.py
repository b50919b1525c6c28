"""`torch.multiprocessing.spawn` / `start_processes`: run `fn(i, *args)` in `nprocs` children.

A child that raises has its traceback written to a per-child error file; the parent's
`ProcessContext.join()` then stops the other children and raises `ProcessRaisedException`
with that traceback, or `ProcessExitedException` for a child that died without one, as
PyTorch does.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import traceback
import warnings

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"


class ProcessException(Exception):
    """A child process failed: `error_index` is its index, `error_pid` its pid."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """Matches `torch.multiprocessing.ProcessRaisedException`: the child raised."""


class ProcessExitedException(ProcessException):
    """Matches `torch.multiprocessing.ProcessExitedException`: exit code or signal."""

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (
            self.msg,
            self.error_index,
            self.error_pid,
            self.exit_code,
            self.signal_name,
        )


def _child_main(fn, i: int, args: tuple, error_file: str) -> None:
    """The child's entry point: `fn(i, *args)`; an exception's traceback goes to the file."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped us
    except Exception:
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        if "jtorch.distributed._runtime" in sys.modules:
            # A failed worker leaves without waiting for its peers at exit.
            sys.modules["jtorch.distributed._runtime"].mark_failed()
        sys.exit(1)


class ProcessContext:
    """Matches `torch.multiprocessing.ProcessContext`: the children of one `start_processes`."""

    def __init__(self, processes, error_files):
        self.processes, self.error_files = processes, error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list:
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout: float) -> None:
        for p in self.processes:
            p.join(timeout)

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Waits for a child to finish; True once all have, raising on the first failure.

        On a failure the other children are terminated (after `grace_period` seconds) and
        the failure is raised: `ProcessRaisedException` carrying the child's traceback, or
        `ProcessExitedException` with its exit code or signal.
        """
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()
        self._raise(failed)

    def _raise(self, index: int):
        proc = self.processes[index]
        path = self.error_files[index]
        if not os.access(path, os.R_OK):
            code = proc.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(
                    f"process {index:d} terminated with signal {name}",
                    error_index=index,
                    error_pid=proc.pid,
                    exit_code=code,
                    signal_name=name,
                )
            raise ProcessExitedException(
                f"process {index:d} terminated with exit code {code:d}",
                error_index=index,
                error_pid=proc.pid,
                exit_code=code,
            )
        with open(path, "rb") as f:
            trace = pickle.load(f)
        os.unlink(path)
        msg = f"\n\n-- Process {index:d} terminated with the following error:\n" + trace
        raise ProcessRaisedException(msg, index, proc.pid)


class SpawnContext(ProcessContext):
    """The pre-1.4 name of `ProcessContext`."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def _alias_for_children() -> None:
    """Children import `torch` as jtorch when this process runs with the `torch` alias."""
    torch = sys.modules.get("torch")
    if torch is not None and torch is sys.modules.get("jtorch"):
        from .._alias import install_in_children

        install_in_children()


def start_processes(
    fn,
    args=(),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """Matches `torch.multiprocessing.start_processes`: None when joined, else the context.

    JAX is not fork-safe: with start_method='fork' a child that calls jtorch ops hangs.
    """
    _alias_for_children()
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="pytorch-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(path)  # the child creates it only if it fails
        p = ctx.Process(target=_child_main, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(
    fn,
    args=(),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """Matches `torch.multiprocessing.spawn`: `fn(i, *args)` for i in range(nprocs)."""
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " torch.multiprocessing.start_processes(...)",
            FutureWarning,
            stacklevel=2,
        )
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
