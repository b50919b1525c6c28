"""`torch.distributed.elastic.multiprocessing.errors`: how a worker's failure reaches its
launcher.

A worker's main function wrapped in `@record` writes an exception it raises into the JSON
error file named by `TORCHELASTIC_ERROR_FILE` (set by the launcher), then re-raises it; the
launcher reads the files of failed workers into `ProcessFailure`s and raises
`ChildFailedError`, whose message shows the root cause (the first failure). The file format
and messages are PyTorch's.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import functools
import json
import os
import signal
import socket
import time
import traceback
import warnings
from datetime import datetime
from string import Template

__all__ = ["ChildFailedError", "ErrorHandler", "ProcessFailure", "get_error_handler", "record"]

_NOT_AVAILABLE = "<N/A>"
_EMPTY_ERROR_DATA = {"message": "<NONE>"}


@dataclasses.dataclass
class ProcessFailure:
    """Matches PyTorch's `ProcessFailure`: a failed worker, from its exit and error file."""

    local_rank: int
    pid: int
    exitcode: int
    error_file: str
    error_file_data: dict = dataclasses.field(init=False)
    message: object = dataclasses.field(init=False)
    timestamp: int = dataclasses.field(init=False)

    def __post_init__(self):
        self.error_file_data = dict(_EMPTY_ERROR_DATA)
        if os.path.isfile(self.error_file):
            with open(self.error_file) as fp:
                self.error_file_data = json.load(fp)
            message = self.error_file_data["message"]
            self.message = message
            self.timestamp = int(
                self.error_file_data.get("timestamp", 0)
                if isinstance(message, str)
                else message["extraInfo"]["timestamp"]
            )
        else:
            self.error_file, self.message, self.timestamp = _NOT_AVAILABLE, "", int(time.time())
        if not self.message:
            if self.exitcode < 0:
                self.message = (
                    f"Signal {-self.exitcode} ({self.signal_name()}) received by PID {self.pid}"
                )
            else:
                self.error_file_data["errorTraits"] = {
                    "category": "system_terminated_error",
                    "retryability": "False",
                }
                self.message = (
                    "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
                )

    def signal_name(self) -> str:
        if self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                return _NOT_AVAILABLE
        return _NOT_AVAILABLE

    def timestamp_isoformat(self) -> str:
        return datetime.fromtimestamp(self.timestamp).isoformat(sep="_")


_FAILURE_FORMAT = """[${idx}]:
  time      : ${time}
  host      : ${hostname}
  rank      : ${rank} (local_rank: ${local_rank})
  exitcode  : ${exitcode} (pid: ${pid}) ${signal_name}
  error_file: ${error_file}
  traceback : ${message}"""

_MSG_FORMAT = """
${boarder}
${title}
${section}
Failures:
${other_failures}
${section}
Root Cause (first observed failure):
${root_failure}
${boarder}"""


class ChildFailedError(Exception):
    """Matches PyTorch's `ChildFailedError`: `name` failed; `failures` by global rank."""

    def __init__(self, name: str, failures: dict):
        self.name = name
        self.failures = failures
        if not self.failures:
            raise AssertionError
        super().__init__(self.format_msg())

    def get_first_failure(self) -> tuple:
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim: str = "=", section_delim: str = "-") -> str:
        title = f"{self.name} FAILED"
        root_rank, _ = self.get_first_failure()
        root, others, width = "", [], len(title)
        for idx, (rank, failure) in enumerate(self.failures.items()):
            fmt, w = self._format_failure(idx, rank, failure)
            width = max(width, w)
            if rank == root_rank:
                root = fmt
            else:
                others.append(fmt)
        width = min(width, 60)
        return Template(_MSG_FORMAT).substitute(
            boarder=boarder_delim * width,
            title=title,
            section=section_delim * width,
            root_failure=root,
            other_failures="\n".join(others or ["  <NO_OTHER_FAILURES>"]),
        )

    def _format_failure(self, idx: int, rank: int, failure: ProcessFailure) -> tuple:
        msg = failure.message
        if isinstance(msg, dict):
            msg = msg.get("extraInfo", {}).get("py_callstack", msg.get("message", "<N/A>"))
            msg = msg.replace("\n", "\n  ")
        name = failure.signal_name()
        fmt = Template(_FAILURE_FORMAT).substitute(
            idx=idx,
            time=failure.timestamp_isoformat(),
            hostname=socket.getfqdn(),
            rank=rank,
            local_rank=failure.local_rank,
            exitcode=failure.exitcode,
            pid=failure.pid,
            signal_name=f" ({name})" if name != _NOT_AVAILABLE else "",
            error_file=failure.error_file,
            message=msg,
        )
        width = max((len(line) for line in fmt.split("\n")), default=0)
        return fmt, width


class ErrorHandler:
    """Matches PyTorch's `ErrorHandler`: writes a worker's exception to its error file."""

    def _get_error_file_path(self) -> str | None:
        return os.environ.get("TORCHELASTIC_ERROR_FILE", None)

    def initialize(self) -> None:
        try:
            faulthandler.enable(all_threads=True)
        except Exception as e:  # noqa: BLE001 - PyTorch warns and goes on
            warnings.warn(f"Unable to enable fault handler. {type(e).__name__}: {e}", stacklevel=2)

    def record_exception(self, e: BaseException) -> None:
        file = self._get_error_file_path()
        if file:
            data = {
                "message": {
                    "message": f"{type(e).__name__}: {e}",
                    "extraInfo": {
                        "py_callstack": traceback.format_exc(),
                        "timestamp": str(int(time.time())),
                    },
                }
            }
            with open(file, "w") as fp:
                json.dump(data, fp)

    def dump_error_file(self, rootcause_error_file: str, error_code: int = 0) -> None:
        """Copies a child's error file (its error code set) to this process's error file."""
        with open(rootcause_error_file) as fp:
            rootcause = json.load(fp)
        if error_code and isinstance(rootcause.get("message"), dict):
            rootcause["message"]["errorCode"] = error_code
        file = self._get_error_file_path()
        if file:
            with open(file, "w") as fp:
                json.dump(rootcause, fp)


def _mark_failed() -> None:
    """A worker of several processes leaves without waiting for its peers (see
    `jtorch.distributed._runtime`)."""
    from .... import _runtime

    _runtime.mark_failed()


def get_error_handler() -> ErrorHandler:
    return ErrorHandler()


def record(fn=None, error_handler: ErrorHandler | None = None):
    """Matches `torch.distributed.elastic.multiprocessing.errors.record` (see the module doc)."""
    if not error_handler:
        error_handler = get_error_handler()

    def wrap(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            error_handler.initialize()
            try:
                return f(*args, **kwargs)
            except SystemExit as se:
                if se.code in (0, None):  # a clean exit: nothing to record
                    return None
                _mark_failed()
                raise
            except ChildFailedError as e:
                rank, failure = e.get_first_failure()
                if failure.error_file != _NOT_AVAILABLE:
                    error_handler.dump_error_file(failure.error_file, failure.exitcode)
                raise
            except Exception as e:
                error_handler.record_exception(e)
                _mark_failed()
                raise

        return wrapper

    return wrap(fn) if fn is not None else wrap
