"""`torch.distributed.run` (torchrun): launching a training script's workers.

`python -m jtorch -m torch.distributed.run [options] script.py [args]` (or `jtorchrun`)
parses torchrun's options, then runs the script (or module, or program with `--no-python`)
as the node's `--nproc-per-node` workers through `launcher.api.launch_agent`, with
torchrun's environment. The options are torchrun's, accepted with dashes or underscores.
Several nodes meet at `--master-addr:--master-port` (or `--rdzv-endpoint`), each launched
with its `--node-rank`: jtorch's rendezvous is static, whatever `--rdzv-backend` says.
"""

from __future__ import annotations

import os
import runpy
import sys
import uuid
from argparse import REMAINDER, ArgumentParser

from .elastic.multiprocessing.errors import record
from .launcher.api import LaunchConfig, elastic_launch

__all__ = ["config_from_args", "get_args_parser", "main", "parse_args", "run"]


def _flag(parser, name: str, **kwargs) -> None:
    names = [f"--{name}"] + ([f"--{name.replace('-', '_')}"] if "-" in name else [])
    parser.add_argument(*names, **kwargs)


def get_args_parser() -> ArgumentParser:
    """torchrun's argument parser."""
    p = ArgumentParser(description="Torch Distributed Elastic Training Launcher")
    _flag(p, "nnodes", type=str, default="1:1")
    _flag(p, "nproc-per-node", type=str, default="1")
    _flag(p, "rdzv-backend", type=str, default="static")
    _flag(p, "rdzv-endpoint", type=str, default="")
    _flag(p, "rdzv-id", type=str, default="none")
    _flag(p, "rdzv-conf", type=str, default="")
    p.add_argument("--standalone", action="store_true")
    _flag(p, "max-restarts", type=int, default=0)
    _flag(p, "monitor-interval", type=float, default=0.1)
    _flag(p, "start-method", type=str, default="spawn", choices=["spawn", "fork", "forkserver"])
    _flag(p, "event-log-handler", type=str, default="null")
    p.add_argument("--role", type=str, default="default")
    p.add_argument("-m", "--module", action="store_true")
    _flag(p, "no-python", action="store_true")
    _flag(p, "run-path", action="store_true")
    _flag(p, "log-dir", type=str, default=None)
    p.add_argument("-r", "--redirects", type=str, default="0")
    p.add_argument("-t", "--tee", type=str, default="0")
    _flag(p, "local-ranks-filter", type=str, default="")
    _flag(p, "node-rank", type=int, default=0)
    _flag(p, "master-addr", type=str, default="127.0.0.1")
    _flag(p, "master-port", type=int, default=29500)
    _flag(p, "local-addr", type=str, default=None)
    _flag(p, "logs-specs", type=str, default=None)
    _flag(p, "local-rank", type=int, default=0)
    _flag(p, "numa-binding", type=str, default=None)
    _flag(p, "signals-to-handle", type=str, default="SIGTERM,SIGINT,SIGHUP,SIGQUIT")
    _flag(p, "shutdown-timeout", type=int, default=None)
    _flag(p, "virtual-local-rank", action="store_true")
    _flag(p, "duplicate-stdout-filters", type=str, default=None)
    _flag(p, "duplicate-stderr-filters", type=str, default=None)
    p.add_argument("training_script", type=str)
    p.add_argument("training_script_args", nargs=REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _min_max_nnodes(nnodes: str) -> tuple:
    parts = nnodes.split(":")
    if len(parts) == 1:
        return int(parts[0]), int(parts[0])
    if len(parts) == 2:
        return int(parts[0]), int(parts[1])
    raise RuntimeError(f'nnodes={nnodes} is not in "MIN:MAX" format')


def _nproc_per_node(value: str) -> int:
    if value in ("cpu", "auto"):
        from .. import cuda

        return cuda.device_count() or (os.cpu_count() if value == "cpu" else 1)
    if value == "gpu":
        from .. import cuda

        if not cuda.is_available():
            raise ValueError("Cuda is not available.")
        return cuda.device_count()
    return int(value)


def _run_script_path(training_script: str, *training_script_args) -> None:
    sys.argv = [training_script, *training_script_args]
    runpy.run_path(sys.argv[0], run_name="__main__")


def config_from_args(args) -> tuple:
    """(LaunchConfig, entrypoint, its arguments), as torchrun builds them."""
    if args.standalone:
        args.rdzv_backend, args.rdzv_endpoint = "c10d", "localhost:0"
        args.rdzv_id = str(uuid.uuid4())
    min_nodes, max_nodes = _min_max_nnodes(args.nnodes)
    endpoint = args.rdzv_endpoint or (
        f"{args.master_addr}:{args.master_port}" if args.rdzv_backend == "static" else ""
    )
    if endpoint.endswith(":0"):
        endpoint = endpoint.rpartition(":")[0] + ":"
    config = LaunchConfig(
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        nproc_per_node=_nproc_per_node(args.nproc_per_node),
        run_id=args.rdzv_id,
        role=args.role,
        rdzv_endpoint=endpoint,
        rdzv_backend=args.rdzv_backend,
        max_restarts=args.max_restarts,
        monitor_interval=args.monitor_interval,
        start_method=args.start_method,
        local_addr=args.local_addr,
        event_log_handler=args.event_log_handler,
        signals_to_handle=args.signals_to_handle,
        shutdown_timeout=args.shutdown_timeout,
        virtual_local_rank=args.virtual_local_rank,
        rdzv_configs={"rank": args.node_rank},
    )
    if args.run_path:
        return config, _run_script_path, [args.training_script, *args.training_script_args]
    if args.no_python:
        if args.module:
            raise ValueError(
                "Don't use both the '--no-python' flag and the '--module' flag at the same time."
            )
        return config, args.training_script, list(args.training_script_args)
    cmd_args = ["-u"] + (["-m"] if args.module else []) + [args.training_script]
    return (
        config,
        os.getenv("PYTHON_EXEC", sys.executable),
        cmd_args + list(args.training_script_args),
    )


def run(args) -> None:
    config, cmd, cmd_args = config_from_args(args)
    elastic_launch(config=config, entrypoint=cmd)(*cmd_args)


@record
def main(args=None) -> None:
    run(parse_args(args))


if __name__ == "__main__":
    main()
