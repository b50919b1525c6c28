"""`torch.distributed.distributed_c10d`: process groups and collectives in a world of one process.

Training scripts import `torch.distributed` and call it on every path: `init_process_group`
with `world_size=1` (a one-GPU `torchrun`, or a script that always initialises), the rank
and world-size queries, collectives, `DistributedDataParallel`. In a world of one process
every collective leaves its tensors as they are (a sum, mean, min or max over one rank is
the rank's own value), which is what PyTorch computes there. A world of more than one
process is refused with a clear error: processes are to be `jax.distributed` (DESIGN 14),
which this module does not start yet; for several devices in one process, shard with JAX.
"""

from __future__ import annotations

import copy
import enum
import os
import warnings

from .._tensor import Tensor
from .constants import default_pg_timeout  # noqa: F401 (PyTorch exports it here)
from ._store import FileStore, HashStore, PrefixStore, Store

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_gather_single", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "broadcast", "broadcast_object_list",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_global_rank",
    "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_available", "is_gloo_available", "is_initialized",
    "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "is_ucc_available",
    "isend", "monitored_barrier", "new_group", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_single", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
    "get_default_backend_for_device", "is_backend_available", "is_xccl_available",
    "FileStore", "HashStore", "PrefixStore", "Store",
]

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


def is_available() -> bool:
    """True: the single-process world below is always available."""
    return True


def is_gloo_available() -> bool:
    return True


def is_nccl_available() -> bool:
    return False


def is_mpi_available() -> bool:
    return False


def is_ucc_available() -> bool:
    return False


def is_backend_available(backend: str) -> bool:
    return str(backend).lower() == "gloo"


def is_torchelastic_launched() -> bool:
    """Matches PyTorch: True when launched by torchrun (TORCHELASTIC_RUN_ID is set)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


class Backend(str):
    """Matches `torch.distributed.Backend`: a lower-case backend name."""

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
    backend_capability = {GLOO: ["cpu", "cuda"], NCCL: ["cuda"], XCCL: ["xpu"],
                          UCC: ["cpu", "cuda"], MPI: ["cpu", "cuda"],
                          FAKE: ["cpu", "cuda", "hpu", "xpu"]}

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        return str.__new__(cls, name.lower())

    @classmethod
    def register_backend(cls, name, func, extended_api=False, devices=None) -> None:
        raise RuntimeError(f"jtorch.distributed cannot register the third-party backend "
                           f"{name!r}: collectives run on JAX's runtime")


def get_default_backend_for_device(device) -> str:
    """Matches `torch.distributed.get_default_backend_for_device`."""
    kind = str(device).partition(":")[0]
    if kind not in Backend.default_device_backend_map:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return Backend.default_device_backend_map[kind]


def is_xccl_available() -> bool:
    return False


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


reduce_op = ReduceOp


class ProcessGroup:
    """A group of the single process."""

    def __init__(self, backend: str, group_name: str = "0"):
        self._backend = backend
        self.group_name = group_name
        self.group_desc = "default_pg" if group_name == "0" else "undefined"
        self.bound_device_id = None

    def rank(self) -> int:
        return 0

    def size(self) -> int:
        return 1

    def name(self) -> str:
        return self._backend

    def _get_backend_name(self) -> str:
        return self._backend


class _World:
    WORLD = None        # the default group once init_process_group ran
    NON_GROUP_MEMBER = object()


group = GroupMember = _World

# PyTorch's registry of live groups (group -> (backend, store)); Lightning reads it to tell
# whether groups other than the default one are left.
_pg_map: dict = {}


def _get_default_group() -> ProcessGroup:
    """Matches `torch.distributed.distributed_c10d._get_default_group`."""
    if _World.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    return _World.WORLD


class Work:
    """What an `async_op=True` collective returns: already complete, holding its tensors."""

    def __init__(self, result: list | None = None):
        self._result = list(result or [])

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True

    def exception(self):
        return None

    def result(self) -> list:
        return self._result

    def get_future(self):
        """A completed `torch.futures.Future` whose value is the collective's tensors."""
        from ..futures import Future
        fut = Future()
        fut.set_result(self._result)
        return fut

    def synchronize(self) -> None:
        return None


def _world():
    if _World.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    return _World.WORLD


def _env_int(name: str) -> int:
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return int(value)


def init_process_group(backend=None, init_method=None, timeout=None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Matches `torch.distributed.init_process_group` for `world_size=1` (see the module doc)."""
    if _World.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if init_method is None and store is None:
        init_method = "env://"
    if init_method is not None and init_method.startswith("env://"):
        if rank == -1:
            rank = _env_int("RANK")
        if world_size == -1:
            world_size = _env_int("WORLD_SIZE")
    world_size = 1 if world_size == -1 else world_size
    rank = 0 if rank == -1 else rank
    if world_size != 1:
        raise RuntimeError(f"jtorch.distributed runs a single process (world_size=1), but "
                           f"world_size={world_size} was asked for: multi-process training is "
                           f"not supported (for several devices, shard with JAX)")
    if rank != 0:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, 0]")
    name = "gloo" if backend is None or str(backend).lower() in ("gloo", "cpu:gloo") else \
        str(backend).lower()
    _World.WORLD = ProcessGroup(name)
    _pg_map[_World.WORLD] = (Backend(name), store)


def destroy_process_group(group=None) -> None:
    if _World.WORLD is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is _World.WORLD:
        _World.WORLD = None
        _pg_map.clear()
    else:
        _pg_map.pop(group, None)


def is_initialized() -> bool:
    return _World.WORLD is not None


def get_rank(group=None) -> int:
    _world()
    return 0


def get_world_size(group=None) -> int:
    _world()
    return 1


def get_backend(group=None) -> str:
    return Backend((group or _world())._backend)


def get_process_group_ranks(group) -> list:
    _world()
    return [0]


def get_global_rank(group, group_rank: int) -> int:
    _check_rank(group_rank, "group rank")
    return 0


def get_group_rank(group, global_rank: int) -> int:
    _check_rank(global_rank, "global rank")
    return 0


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None) -> ProcessGroup:
    world = _world()
    if ranks is not None and len(ranks) > 1:
        raise ValueError("the new group's world size should be less or equal to the world size "
                         "set by init_process_group")
    for r in ranks or [0]:
        _check_rank(r, "rank")
    pg = ProcessGroup(backend or world._backend, str(len(_pg_map)))
    _pg_map[pg] = (Backend(pg._backend), None)
    return pg


def _check_rank(r: int, what: str = "rank") -> None:
    if r != 0:
        raise ValueError(f"Invalid {what} {r}: the world has one process (rank 0)")


def _done(async_op: bool, *tensors):
    return Work(list(tensors)) if async_op else None


def _broadcast_coalesced(process_group, tensors: list, buffer_size: int, src: int = 0) -> None:
    """Broadcasts `tensors` from `src` in buckets (PyTorch's private helper): one rank holds
    them already."""
    _world()
    _check_root(src, "broadcast")
    for t in tensors:
        _tensor(t)


def barrier(group=None, async_op: bool = False, device_ids=None):
    _world()
    return _done(async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False) -> None:
    _world()


def _tensor(t, what="tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{what}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")
    return t


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Over one rank every reduction (sum, mean, product, min, max, bitwise) is the identity."""
    _tensor(tensor)
    _world()
    _check_op(op)
    return _done(async_op, tensor)


def _check_op(op) -> None:
    if op == ReduceOp.PREMUL_SUM:
        raise TypeError("ReduceOp.PREMUL_SUM needs a premul-sum op (PyTorch makes one with "
                        "_make_nccl_premul_sum, for NCCL only)")


def _check_root(rank: int, collective: str) -> None:
    if rank != 0:
        raise RuntimeError(f"ProcessGroupGloo::{collective}: invalid root rank: {rank}")


def reduce(tensor, dst: int = 0, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst=None):
    _tensor(tensor)
    _world()
    _check_op(op)
    _check_root(dst if group_dst is None else group_dst, "reduce")
    return _done(async_op, tensor)


def broadcast(tensor, src: int = 0, group=None, async_op: bool = False, group_src=None):
    _tensor(tensor)
    _world()
    _check_root(src if group_src is None else group_src, "broadcast")
    return _done(async_op, tensor)


def _copy_into(out: Tensor, src: Tensor) -> None:
    if out.numel() != src.numel():
        raise RuntimeError(f"output tensor has {out.numel()} elements, expected {src.numel()} "
                           f"(world size 1)")
    out.copy_(src.reshape(out.shape))


def _one(lst, what: str) -> None:
    if len(lst) != 1:
        raise ValueError(f"{what} must have exactly one element per rank (world size 1), got "
                         f"{len(lst)}")


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    _world()
    if len(tensor_list) != 1:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 "
                           f"(expected length 1, got {len(tensor_list)})")
    _copy_into(tensor_list[0], _tensor(tensor))
    return _done(async_op)


def all_gather_single(output_tensor, input_tensor, group=None, async_op: bool = False):
    _world()
    _copy_into(_tensor(output_tensor, "output_tensor"), _tensor(input_tensor, "input_tensor"))
    return _done(async_op, output_tensor)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    warnings.warn("`torch.distributed.all_gather_into_tensor` is deprecated. Please use "
                  "`torch.distributed.all_gather_single` instead.", FutureWarning, stacklevel=2)
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    _world()
    _one(input_list, "input_list")
    _copy_into(_tensor(output, "output"), input_list[0])
    return _done(async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    _world()
    _check_op(op)
    _copy_into(_tensor(output, "output"), _tensor(input, "input"))
    return _done(async_op, output)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    warnings.warn("`torch.distributed.reduce_scatter_tensor` is deprecated. Please use "
                  "`torch.distributed.reduce_scatter_single` instead.", FutureWarning,
                  stacklevel=2)
    return reduce_scatter_single(output, input, op, group, async_op)


def gather(tensor, gather_list=None, dst: int = 0, group=None, async_op: bool = False,
           group_dst=None):
    _world()
    if (dst if group_dst is None else group_dst) != 0:
        if gather_list is not None:
            raise ValueError("Argument ``gather_list`` must NOT be specified on "
                             "non-destination ranks.")
        _check_root(dst if group_dst is None else group_dst, "gather")
    if gather_list is not None:
        _one(gather_list, "gather_list")
        _copy_into(gather_list[0], _tensor(tensor))
    return _done(async_op)


def scatter(tensor, scatter_list=None, src: int = 0, group=None, async_op: bool = False,
            group_src=None):
    _world()
    if (src if group_src is None else group_src) != 0:
        if scatter_list is not None:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        _check_root(src if group_src is None else group_src, "scatter")
    if scatter_list is not None:
        _one(scatter_list, "scatter_list")
        _copy_into(_tensor(tensor), scatter_list[0])
    return _done(async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    _world()
    _one(output_tensor_list, "output_tensor_list")
    _one(input_tensor_list, "input_tensor_list")
    _copy_into(output_tensor_list[0], input_tensor_list[0])
    return _done(async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op: bool = False):
    _world()
    _copy_into(_tensor(output, "output"), _tensor(input, "input"))
    return _done(async_op, output)


def all_gather_object(object_list, obj, group=None) -> None:
    _world()
    _one(object_list, "object_list")
    object_list[0] = copy.deepcopy(obj)     # PyTorch's pickles round trip: a copy


def broadcast_object_list(object_list, src: int = 0, group=None, device=None,
                          group_src=None) -> None:
    _world()
    _check_rank(src if group_src is None else group_src, "source rank")


def gather_object(obj, object_gather_list=None, dst: int = 0, group=None,
                  group_dst=None) -> None:
    _world()
    _check_rank(dst if group_dst is None else group_dst, "destination rank")
    if object_gather_list is not None:
        _one(object_gather_list, "object_gather_list")
        object_gather_list[0] = copy.deepcopy(obj)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None,
                        src: int = 0, group=None, group_src=None) -> None:
    _world()
    _check_rank(src if group_src is None else group_src, "source rank")
    if scatter_object_input_list is not None:
        _one(scatter_object_input_list, "scatter_object_input_list")
        scatter_object_output_list[0] = copy.deepcopy(scatter_object_input_list[0])


def _no_peer(kind: str, name: str):
    def call(tensor, peer=None, group=None, tag: int = 0, **kwargs):
        _world()
        peer = kwargs.get(name, kwargs.get("group_" + name, peer))
        if peer in (None, 0):
            raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the "
                             "rank of the current process.")
        _check_rank(peer, f"{kind} rank")
    return call


send = isend = _no_peer("destination", "dst")
recv = irecv = _no_peer("source", "src")
