"""Process groups: `Backend`, `ReduceOp`, `ProcessGroup`, `Work` and the registry of groups.

A `ProcessGroup` is a list of global ranks. Its collectives are XLA programs over the mesh of
those ranks' devices (`_xla`); a group needs no rendezvous of its own, since jax programs
over any set of devices of the job can run once the job's processes have joined
(`_runtime`). A process outside a group holds `GroupMember.NON_GROUP_MEMBER` instead, as in
PyTorch, and collectives it calls on it do nothing but warn.
"""

from __future__ import annotations

import datetime
import enum
import os
import warnings

from .constants import default_pg_timeout

__all__ = ["Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "group"]

NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class Backend(str):
    """Matches `torch.distributed.Backend`: a lower-case backend name.

    Every name runs on JAX's runtime: gloo names CPU collectives (XLA's gloo), nccl GPU ones
    (XLA's NCCL); on TPU, collectives are XLA's whatever the name.
    """

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    XCCL = "xccl"
    UCC = "ucc"
    MPI = "mpi"
    FAKE = "fake"

    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    # PyTorch's tables: the backend a device type uses by default, the devices a backend serves.
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}
    backend_capability = {
        GLOO: ["cpu", "cuda"],
        NCCL: ["cuda"],
        XCCL: ["xpu"],
        UCC: ["cpu", "cuda"],
        MPI: ["cpu", "cuda"],
        FAKE: ["cpu", "cuda", "hpu", "xpu"],
    }

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(
                f"Backend constructor parameter must be string-ish, but got: {type(name)}"
            )
        return str.__new__(cls, name.lower())

    @classmethod
    def register_backend(cls, name, func, extended_api=False, devices=None) -> None:
        raise RuntimeError(
            f"jtorch.distributed cannot register the third-party backend "
            f"{name!r}: collectives run on JAX's runtime"
        )


class ReduceOp:
    """Matches `torch.distributed.ReduceOp` (`ReduceOp.SUM` is a `RedOpType`)."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

        def __str__(self):
            return f"RedOpType.{self.name}"

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


class ProcessGroup:
    """A group of global ranks (see the module doc); `rank()` is this process's place in it."""

    def __init__(
        self,
        backend: str,
        ranks: list,
        my_rank: int,
        group_name: str = "0",
        timeout: datetime.timedelta = default_pg_timeout,
    ):
        self._backend = backend
        self._ranks = list(ranks)
        self._my_rank = my_rank
        self._timeout = timeout
        self.group_name = group_name
        self.group_desc = "default_pg" if group_name == "0" else "undefined"
        self.bound_device_id = None

    def rank(self) -> int:
        return self._ranks.index(self._my_rank)

    def size(self) -> int:
        return len(self._ranks)

    def name(self) -> str:
        return self._backend

    def _get_backend_name(self) -> str:
        return self._backend

    @property
    def ranks(self) -> list:
        """The global ranks of the group, in group-rank order."""
        return list(self._ranks)

    def __repr__(self) -> str:
        return f"<jtorch.distributed.ProcessGroup {self.group_name} ranks={self._ranks}>"


class _World:
    WORLD = None  # the default group once init_process_group ran
    NON_GROUP_MEMBER = -100  # PyTorch's value: what new_group returns outside the group


group = GroupMember = _World

# PyTorch's registry of live groups (group -> (backend, store)); Lightning reads it to tell
# whether groups other than the default one are left.
_pg_map: dict = {}


def default_group() -> ProcessGroup:
    if _World.WORLD is None:
        raise ValueError(NOT_INITIALIZED)
    return _World.WORLD


def resolve(group) -> ProcessGroup:
    """The group a collective's `group=` names (None: the default group)."""
    world = default_group()
    return world if group is None else group


def not_in_group(group, op_name: str) -> bool:
    """PyTorch's check: a collective on a group this process is not in warns and does nothing."""
    default_group()
    if group is None or group != _World.NON_GROUP_MEMBER:
        return False
    warnings.warn(
        f"Running {op_name} on global rank {_World.WORLD.rank()} which does not "
        f"belong to the given group.",
        stacklevel=3,
    )
    return True


class Work:
    """What an `async_op=True` collective returns.

    jtorch's collectives finish before they return (see `_xla.run`), so a work handle is
    complete when made, except that of an all-reduce, which is queued and waited for by
    `wait()`; it holds the tensors the collective wrote, or the exception of a
    point-to-point receive that failed.
    """

    def __init__(self, result: list | None = None, wait=None):
        self._result = list(result or [])
        self._wait = wait
        self._exception = None

    def _finish(self, timeout=None) -> None:
        if self._wait is not None:
            wait, self._wait = self._wait, None
            try:
                wait(timeout)
            except Exception as e:
                self._exception = e
                raise

    def wait(self, timeout=None) -> bool:
        self._finish(timeout)
        return True

    def is_completed(self) -> bool:
        return self._wait is None

    def is_success(self) -> bool:
        return self._wait is None and self._exception is None

    def exception(self):
        return self._exception

    def result(self) -> list:
        self._finish()
        return self._result

    def get_future(self):
        """A completed `torch.futures.Future` whose value is the collective's tensors."""
        from ..futures import Future

        fut = Future()
        try:
            fut.set_result(self.result())
        except Exception as e:
            fut.set_exception(e)
        return fut

    def synchronize(self) -> None:
        self._finish()


def done(async_op: bool, *tensors):
    """A collective's return value: None, or a complete `Work` holding `tensors`."""
    return Work(list(tensors)) if async_op else None


def env_int(name: str) -> int:
    value = os.environ.get(name)
    if value is None:
        raise ValueError(
            f"Error initializing torch.distributed using env:// rendezvous: "
            f"environment variable {name} expected, but not set"
        )
    return int(value)


REDUCE_OP_NAMES = {
    ReduceOp.SUM: "sum",
    ReduceOp.AVG: "avg",
    ReduceOp.PRODUCT: "product",
    ReduceOp.MIN: "min",
    ReduceOp.MAX: "max",
    ReduceOp.BAND: "band",
    ReduceOp.BOR: "bor",
    ReduceOp.BXOR: "bxor",
}


def group_root(group: int | None, rank: int | None, pg, default: int = 0) -> int:
    """A root given as a group rank (`group_src`/`group_dst`) or a global rank."""
    if group is not None:
        return group
    rank = default if rank is None else rank
    if pg is _World.WORLD:
        return rank
    if rank not in pg.ranks:
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    return pg.ranks.index(rank)
