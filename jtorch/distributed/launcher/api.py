"""`torch.distributed.launcher.api`: `LaunchConfig`, `elastic_launch`, `launch_agent`.

The launcher of one node starts its `nproc_per_node` workers with torchrun's environment
(`RANK`, `LOCAL_RANK`, `WORLD_SIZE`, `LOCAL_WORLD_SIZE`, `GROUP_RANK`, `MASTER_ADDR`,
`MASTER_PORT`, `TORCHELASTIC_*`), watches them, and when one fails stops the others and
raises `ChildFailedError` with the failed workers' recorded exceptions (after restarting
the group up to `max_restarts` times, as torchrun does). A callable entrypoint runs in
spawned processes (its return values come back by rank); a string entrypoint is a program
run with `args`.

Rendezvous is static: node `rdzv_configs["rank"]` of `max_nodes` nodes, all with the same
number of workers, rank 0 at the endpoint (`MASTER_ADDR:MASTER_PORT`), where the first worker
hosts the coordination service of JAX's runtime. A single node may leave the port out (a
free one is picked). An elastic range of nodes (`--nnodes=1:4`) is not supported.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import socket
import sys
import tempfile
import uuid

from ..elastic.multiprocessing.errors import ChildFailedError, ProcessFailure
from ._workers import WorkerGroup

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
        s.bind(("", 0))
        return s.getsockname()[1]


def _endpoint(config: LaunchConfig) -> tuple[str, str]:
    host, _, port = (
        config.rdzv_endpoint.rpartition(":")
        if ":" in config.rdzv_endpoint
        else (config.rdzv_endpoint, "", "")
    )
    host = host or "127.0.0.1"
    if not port or port == "0":
        if config.max_nodes > 1:
            raise ValueError(
                f"a launch of {config.max_nodes} nodes needs the rendezvous "
                f"port (--master-port or --rdzv-endpoint=host:port)"
            )
        port = str(_free_port())
    return host, port


def _worker_envs(
    config: LaunchConfig,
    node_rank: int,
    host: str,
    port: str,
    run_id: str,
    restart: int,
    error_dir: str,
) -> list:
    n = config.nproc_per_node
    world = n * config.max_nodes
    envs = []
    for local_rank in range(n):
        rank = node_rank * n + local_rank
        error_file = os.path.join(error_dir, f"attempt_{restart}", str(local_rank), "error.json")
        os.makedirs(os.path.dirname(error_file), exist_ok=True)
        env = {
            "LOCAL_RANK": str(local_rank),
            "RANK": str(rank),
            "GROUP_RANK": str(node_rank),
            "ROLE_RANK": str(rank),
            "ROLE_NAME": config.role,
            "LOCAL_WORLD_SIZE": str(n),
            "WORLD_SIZE": str(world),
            "GROUP_WORLD_SIZE": str(config.max_nodes),
            "ROLE_WORLD_SIZE": str(world),
            "MASTER_ADDR": host,
            "MASTER_PORT": port,
            "TORCHELASTIC_RESTART_COUNT": str(restart),
            "TORCHELASTIC_MAX_RESTARTS": str(config.max_restarts),
            "TORCHELASTIC_RUN_ID": run_id,
            "TORCHELASTIC_USE_AGENT_STORE": "False",
            "TORCHELASTIC_ERROR_FILE": error_file,
            "TORCH_NCCL_ASYNC_ERROR_HANDLING": os.environ.get(
                "TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"
            ),
        }
        if n > 1 and "OMP_NUM_THREADS" not in os.environ:
            env["OMP_NUM_THREADS"] = "1"
        envs.append(env)
    return envs


def _omp_note() -> None:
    line = "*" * 41
    print(
        f"{line}\nSetting OMP_NUM_THREADS environment variable for each process to be 1 in "
        f"default, to avoid your system being overloaded, please further tune the variable "
        f"for optimal performance in your application as needed. \n{line}",
        file=sys.stderr,
    )


class _Stopped(Exception):
    def __init__(self, sig: int):
        super().__init__(f"Process {os.getpid()} got signal: {sig}")
        self.sig = sig


def launch_agent(config: LaunchConfig, entrypoint, args: list, health_check_server=None) -> dict:
    """Runs the node's workers and returns `{global rank: return value}` (see the module
    doc); raises `ChildFailedError` when a worker fails."""
    if config.min_nodes != config.max_nodes:
        raise RuntimeError(
            f"jtorch's launcher has static rendezvous: an elastic number of "
            f"nodes ({config.min_nodes}:{config.max_nodes}) is not supported"
        )
    node_rank = int(config.rdzv_configs.get("rank", 0))
    if not 0 <= node_rank < config.max_nodes:
        raise ValueError(f"node rank {node_rank} is not in [0, {config.max_nodes})")
    if config.nproc_per_node > 1 and "OMP_NUM_THREADS" not in os.environ:
        _omp_note()
    from ... import _alias

    _alias.install_in_children()  # workers import jtorch for `torch`
    host, port = _endpoint(config)
    run_id = config.run_id or str(uuid.uuid4())
    if callable(entrypoint):
        name = getattr(entrypoint, "__qualname__", str(entrypoint))
    else:  # PyTorch names a program's failure by its first non-option argument (the script)
        name = next((str(a) for a in args if not str(a).startswith("-")), str(entrypoint))

    def on_signal(sig, frame):
        raise _Stopped(sig)

    handled = [
        getattr(signal, s.strip())
        for s in config.signals_to_handle.split(",")
        if hasattr(signal, s.strip())
    ]
    previous = {s: signal.signal(s, on_signal) for s in handled}
    # Like torchrun's, the error files outlive the launch when a worker failed (the failure
    # report reads them); a launch that succeeded removes them.
    error_dir = tempfile.mkdtemp(prefix="torchelastic_")
    try:
        for restart in range(config.max_restarts + 1):
            envs = _worker_envs(config, node_rank, host, port, run_id, restart, error_dir)
            group = WorkerGroup(entrypoint, args, envs, config.start_method)
            try:
                failed, _ = group.wait(config.monitor_interval)
            except _Stopped:
                group.stop()
                raise
            if not failed:
                shutil.rmtree(error_dir, ignore_errors=True)
                n = config.nproc_per_node
                return {node_rank * n + i: group.results.get(i) for i in range(n)}
            group.stop(config.shutdown_timeout or 5.0)
            if restart < config.max_restarts:
                continue
            failures = {
                node_rank * config.nproc_per_node + i: ProcessFailure(
                    local_rank=i,
                    pid=group.procs[i].pid,
                    exitcode=code,
                    error_file=envs[i]["TORCHELASTIC_ERROR_FILE"],
                )
                for i, code in failed
            }
            raise ChildFailedError(name=name, failures=failures)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    raise AssertionError("unreachable")
