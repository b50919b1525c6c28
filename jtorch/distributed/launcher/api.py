"""`torch.distributed.launcher.api`: `LaunchConfig`, `elastic_launch`, `launch_agent`.

The launcher starts the workers of this node with torchrun's environment (`RANK`,
`LOCAL_RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`, `TORCHELASTIC_*`), waits for them,
and turns a failed worker into `ChildFailedError` with the worker's recorded exception. A
callable entrypoint runs in a spawned process (its return value comes back per rank); a
string entrypoint is a program run with `args`. jtorch's processes are a world of one: a
launch of more than one process, or of several nodes, is refused.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import socket
import subprocess
import tempfile
import uuid

from ..elastic.multiprocessing.errors import ChildFailedError, ProcessFailure, record

__all__ = ["LaunchConfig", "elastic_launch", "launch_agent"]


@dataclasses.dataclass
class LaunchConfig:
    """Matches `torch.distributed.launcher.api.LaunchConfig`."""

    min_nodes: int
    max_nodes: int
    nproc_per_node: int
    logs_specs: object = None
    run_id: str = ""
    role: str = "default_role"
    rdzv_endpoint: str = ""
    rdzv_backend: str = "etcd"
    rdzv_configs: dict = dataclasses.field(default_factory=dict)
    rdzv_timeout: int = -1
    max_restarts: int = 3
    monitor_interval: float = 0.1
    start_method: str = "spawn"
    log_line_prefix_template: str | None = None
    metrics_cfg: dict = dataclasses.field(default_factory=dict)
    local_addr: str | None = None
    event_log_handler: str = "null"
    numa_options: object = None
    signals_to_handle: str = "SIGTERM,SIGINT,SIGHUP,SIGQUIT"
    duplicate_stdout_filters: list | None = None
    duplicate_stderr_filters: list | None = None
    virtual_local_rank: bool = False
    shutdown_timeout: int | None = None

    def __post_init__(self):
        default_timeout = 900
        if self.rdzv_timeout != -1:
            self.rdzv_configs["timeout"] = self.rdzv_timeout
        elif "timeout" not in self.rdzv_configs:
            self.rdzv_configs["timeout"] = default_timeout
        self.rdzv_configs.setdefault("join_timeout", default_timeout)


class elastic_launch:  # noqa: N801 - PyTorch's name
    """Matches `elastic_launch`: `elastic_launch(config, entrypoint)(*args)`."""

    def __init__(self, config: LaunchConfig, entrypoint, health_check_server=None):
        self._config = config
        self._entrypoint = entrypoint

    def __call__(self, *args):
        return launch_agent(self._config, self._entrypoint, list(args))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker_env(config: LaunchConfig, error_file: str) -> dict:
    host, _, port = config.rdzv_endpoint.partition(":")
    return {
        "LOCAL_RANK": "0", "RANK": "0", "GROUP_RANK": "0", "ROLE_RANK": "0",
        "ROLE_NAME": config.role, "LOCAL_WORLD_SIZE": "1", "WORLD_SIZE": "1",
        "GROUP_WORLD_SIZE": "1", "ROLE_WORLD_SIZE": "1",
        "MASTER_ADDR": host or "127.0.0.1", "MASTER_PORT": port or str(_free_port()),
        "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": str(config.max_restarts),
        "TORCHELASTIC_RUN_ID": config.run_id or str(uuid.uuid4()),
        "TORCHELASTIC_USE_AGENT_STORE": "False", "TORCHELASTIC_ERROR_FILE": error_file,
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING",
                                                          "1"),
    }


def _run_function(fn, args, env: dict, queue) -> None:
    os.environ.update(env)
    queue.put(record(fn)(*args))


def launch_agent(config: LaunchConfig, entrypoint, args: list,
                 health_check_server=None) -> dict:
    """Runs the node's workers and returns `{rank: return value}` (see the module doc)."""
    if config.max_nodes != 1 or config.min_nodes != 1 or config.nproc_per_node != 1:
        raise RuntimeError(
            f"jtorch.distributed runs a single process: a launch of "
            f"{config.nproc_per_node} process(es) per node on {config.min_nodes}:"
            f"{config.max_nodes} node(s) is not supported")
    from ... import _alias
    _alias.install_in_children()            # workers import jtorch for `torch`
    with tempfile.TemporaryDirectory() as tmp:
        error_file = os.path.join(tmp, "error.json")
        env = _worker_env(config, error_file)
        if callable(entrypoint):
            ctx = multiprocessing.get_context(config.start_method)
            queue = ctx.SimpleQueue()
            proc = ctx.Process(target=_run_function, args=(entrypoint, tuple(args), env, queue))
            proc.start()
            proc.join()
            name, pid, code = getattr(entrypoint, "__qualname__", str(entrypoint)), proc.pid, \
                proc.exitcode
            result = queue.get() if code == 0 and not queue.empty() else None
        else:
            proc = subprocess.Popen([entrypoint, *map(str, args)], env={**os.environ, **env})
            # PyTorch names a program's failure by its first non-option argument (the script).
            name = next((str(a) for a in args if not str(a).startswith("-")), str(entrypoint))
            code, pid, result = proc.wait(), proc.pid, None
        if code != 0:
            raise ChildFailedError(name=name, failures={0: ProcessFailure(
                local_rank=0, pid=pid, exitcode=code, error_file=error_file)})
        return {0: result}
