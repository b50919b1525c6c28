"""The processes of a job: JAX's multi-controller runtime (`jax.distributed`), DESIGN 14.

A world of several processes is `jax.distributed`: rank 0 hosts the coordination service at
the rendezvous address (`MASTER_ADDR:MASTER_PORT`, or a `tcp://` init method) and every
process connects to it as the process of its rank. Each process then sees every process's
devices (`jax.devices()`), computes on its own (`jax.local_devices()`), and a `jax.jit`
program over devices of several processes runs its collectives across them: gloo on CPU
(set here before the CPU backend starts), NCCL on GPU, ICI/DCN on TPU.

`jax.distributed.initialize` must run before jax's backends start. jtorch's import starts
none, so a script that calls `init_process_group` first joins the normal way. A script that
computed something before (seeded, built its model) has running backends: then the runtime
is joined through jax's own state object and the backends are restarted, which keeps the
arrays made before usable (jax moves them when they meet the new devices).

The coordination service is also the job's key-value store (`coordination_store`), and each
process's transfer server (`jax.experimental.transfer`) carries point-to-point messages
(`transfer_server`, `connect`).
"""

from __future__ import annotations

import atexit
import datetime
import functools
import os
import sys

import jax

__all__ = [
    "coordination_client",
    "is_joined",
    "join",
    "local_device",
    "rank_device",
    "transfer_address",
    "transfer_connection",
    "transfer_server",
    "world",
]

_STATE: dict = {}  # rank, world_size, coordinator once joined


def is_joined() -> bool:
    """Whether this process has joined a world of several processes."""
    return bool(_STATE)


def world() -> tuple[int, int]:
    """(rank, world size) of the joined world."""
    return _STATE["rank"], _STATE["world_size"]


def _backends_started() -> bool:
    from jax._src import xla_bridge

    return xla_bridge.backends_are_initialized()


def join(
    coordinator: str,
    world_size: int,
    rank: int,
    timeout: datetime.timedelta,
    local_rank: int | None = None,
    local_world_size: int | None = None,
) -> None:
    """Joins (or checks this process already joined) the world of `world_size` processes.

    Args:
        coordinator: "host:port" where rank 0 hosts the coordination service.
        world_size: the number of processes.
        rank: this process's rank (jax's process id).
        timeout: how long to wait for the other processes.
        local_rank, local_world_size: this process's place on its host; with several
            processes on a host each is given its own accelerator (the `local_rank`-th).
    """
    if _STATE:
        if (_STATE["rank"], _STATE["world_size"]) != (rank, world_size):
            raise RuntimeError(
                f"this process already joined JAX's runtime as rank {_STATE['rank']} of "
                f"{_STATE['world_size']}; it cannot join again as rank {rank} of {world_size}"
            )
        return
    # Gloo carries CPU collectives between processes; it must be chosen before the CPU
    # backend starts (MPI, if a user chose it, is left alone).
    if jax.config.jax_cpu_collectives_implementation in (None, "", "none"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    kwargs = dict(
        coordinator_address=coordinator,
        num_processes=world_size,
        process_id=rank,
        initialization_timeout=max(int(timeout.total_seconds()), 1),
    )
    if local_rank is not None and (local_world_size or 1) > 1:
        gpus = _visible_gpus()
        if gpus is None or gpus >= local_world_size:
            kwargs["local_device_ids"] = [local_rank]  # one GPU per process (none on CPU)
        else:
            # More processes than GPUs on this host (gloo ranks, as PyTorch runs them on a
            # one-GPU machine): jax would give the process of local rank k the k-th GPU and
            # fail where there is none, so each process computes on its CPU.
            jax.config.update("jax_platforms", "cpu")
            kwargs["cluster_detection_method"] = "deactivate"
    else:
        kwargs["cluster_detection_method"] = "deactivate"
    # jax's preemption service would catch the SIGTERM a launcher stops workers with.
    jax.config.update("jax_enable_preemption_service", False)
    started = _backends_started()
    if not started:
        jax.distributed.initialize(**kwargs)
    else:
        from jax._src import api, distributed

        kwargs.pop("cluster_detection_method", None)
        distributed.global_state.initialize(**kwargs)
        api.clear_backends()
    from .. import _device

    _device.reset_caches()
    _STATE.update(rank=rank, world_size=world_size, coordinator=coordinator)
    _watch_failures()


def _visible_gpus() -> int | None:
    """How many NVIDIA GPUs this process may use, read without starting jax's backends (None
    where no NVIDIA driver is seen: then nothing is known)."""
    try:
        found = len(os.listdir("/proc/driver/nvidia/gpus"))
    except OSError:
        found = sum(1 for n in _dev_names() if n.startswith("nvidia") and n[6:].isdigit())
        if not found:
            return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return found
    ids = [v.strip() for v in visible.split(",") if v.strip()]
    ids = ids[: ids.index("-1")] if "-1" in ids else ids  # (CUDA stops at an invalid id)
    return min(len(ids), found)


def _dev_names() -> list:
    try:
        return os.listdir("/dev")
    except OSError:
        return []


# -- leaving: a failed process must not wait for the others --------------------------------

_FAILED: list = []


def mark_failed() -> None:
    """Records that this process is ending with an error (see `_watch_failures`)."""
    _FAILED.append(True)


def _watch_failures() -> None:
    """At exit, jax waits in a barrier until every process of the job shuts down. A process
    ending with an uncaught exception must not: its peers may be blocked in a collective
    waiting for it, and the launcher learns of the failure only when the process is gone. So
    an uncaught exception is noted, and such a process leaves without the barrier (the exit
    handler registered here runs before jax's)."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        if not issubclass(kind, SystemExit):
            mark_failed()
        previous(kind, value, tb)

    sys.excepthook = hook
    atexit.register(_leave)


def _leave() -> None:
    if _FAILED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - leaving anyway
                pass
        os._exit(1)


def coordination_client():
    """The client of the job's coordination service (its key-value store and barriers)."""
    from jax._src import distributed

    client = distributed.global_state.client
    if client is None:
        raise RuntimeError("this process has not joined a world of several processes")
    return client


@functools.lru_cache(maxsize=None)
def rank_device(rank: int, platform: str):
    """The `platform` device that process `rank` computes on: its first one."""
    devices = [d for d in jax.devices(platform) if d.process_index == rank]
    if not devices:
        raise RuntimeError(f"process {rank} has no {platform} device")
    return min(devices, key=lambda d: d.id)


def local_device(platform: str):
    """This process's first `platform` device."""
    return jax.local_devices(backend=platform)[0]


# -- point-to-point: each process's transfer server ----------------------------------------


@functools.lru_cache(maxsize=None)
def transfer_server():
    """This process's transfer server, started on first use and published in the store.

    A sender offers an array under a message id (`await_pull`, which returns at once); the
    receiver pulls it from the sender's server. Messages wait on the sender's side until
    pulled, so sends never block and any order of sends and receives completes.
    """
    from jax.experimental import transfer

    host = os.environ.get("JTORCH_TRANSFER_HOST") or _host_address()
    server = transfer.start_transfer_server(local_device("cpu").client, f"{host}:0", [f"{host}:0"])
    rank, _ = world()
    coordination_client().key_value_set(f"jtorch/transfer/{rank}", server.address())
    return server


def transfer_address(rank: int, timeout: datetime.timedelta) -> str:
    return coordination_client().blocking_key_value_get(
        f"jtorch/transfer/{rank}", int(timeout.total_seconds() * 1000)
    )


@functools.lru_cache(maxsize=None)
def transfer_connection(rank: int, timeout_s: float):
    """A connection from this process's transfer server to process `rank`'s."""
    address = transfer_address(rank, datetime.timedelta(seconds=timeout_s))
    return transfer_server().connect(address)


def _host_address() -> str:
    """The address other hosts reach this one at: the loopback when the job is local."""
    host = _STATE["coordinator"].rpartition(":")[0].strip("[]")
    if host in ("127.0.0.1", "localhost", "::1"):
        return "127.0.0.1"
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((host, 1))  # no packet is sent: this picks the outgoing interface
        return s.getsockname()[0]
