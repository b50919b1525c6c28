"""The workers of one node: started together, watched together, stopped together.

Each worker is a process of its own session (its own process group), so stopping a worker
stops whatever it started too. When one worker fails, the others are sent SIGTERM, given a
few seconds, then SIGKILL: a job whose rank died ends promptly instead of waiting in a
collective for a peer that will never come.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import time

__all__ = ["WorkerGroup"]


def _run_function(fn, args, env: dict, queue, index: int) -> None:
    """A callable entrypoint's process: its environment, then `fn(*args)` (recorded)."""
    os.environ.update(env)
    from ..elastic.multiprocessing.errors import record

    queue.put((index, record(fn)(*args)))


class _FunctionProcess:
    """A callable entrypoint run in a multiprocessing process, with Popen's interface."""

    def __init__(self, ctx, fn, args, env: dict, queue, index: int):
        self._proc = ctx.Process(target=_run_function, args=(fn, tuple(args), env, queue, index))
        self._proc.start()
        self.pid = self._proc.pid

    def poll(self):
        return self._proc.exitcode

    def send_signal(self, sig) -> None:
        if self._proc.exitcode is None:
            os.kill(self.pid, sig)


class WorkerGroup:
    """The node's workers of one attempt.

    Args:
        entrypoint: a program (str) run with `args`, or a callable run as `fn(*args)`.
        envs: one environment (the variables to add) per local rank.
        start_method: multiprocessing's start method for a callable entrypoint.
    """

    def __init__(self, entrypoint, args: list, envs: list, start_method: str = "spawn"):
        self.procs: list = []
        self.results: dict = {}
        self._queue = None
        if callable(entrypoint):
            ctx = multiprocessing.get_context(start_method)
            self._queue = ctx.SimpleQueue()
            for i, env in enumerate(envs):
                self.procs.append(_FunctionProcess(ctx, entrypoint, args, env, self._queue, i))
        else:
            for env in envs:
                self.procs.append(
                    subprocess.Popen(
                        [entrypoint, *map(str, args)],
                        env={**os.environ, **env},
                        start_new_session=True,
                    )
                )

    def poll(self) -> tuple[list, bool]:
        """([(local rank, exit code)] of the failed workers, whether all have finished)."""
        codes = [p.poll() for p in self.procs]
        self._drain()
        failed = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
        return failed, all(c is not None for c in codes)

    def _drain(self) -> None:
        while self._queue is not None and not self._queue.empty():
            index, value = self._queue.get()
            self.results[index] = value

    def wait(self, interval: float) -> tuple[list, bool]:
        """Polls until a worker fails or all have finished."""
        while True:
            failed, finished = self.poll()
            if failed or finished:
                return failed, finished
            time.sleep(interval)

    def _signal(self, proc, sig) -> None:
        try:
            if isinstance(proc, subprocess.Popen):
                os.killpg(proc.pid, sig)  # the worker's session: it and its children
            else:
                proc.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM to the workers still running, then SIGKILL after `grace` seconds."""
        live = [p for p in self.procs if p.poll() is None]
        for p in live:
            self._signal(p, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(p.poll() is None for p in live) and time.monotonic() < deadline:
            time.sleep(0.05)
        for p in live:
            if p.poll() is None:
                self._signal(p, signal.SIGKILL)
        for p in self.procs:
            if isinstance(p, subprocess.Popen):
                p.wait()
                self._signal(p, signal.SIGKILL)  # what the worker left in its session
            else:
                p._proc.join()
        self._drain()
