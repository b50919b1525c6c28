"""`torch.distributed.distributed_c10d`: the default process group, groups and collectives.

`init_process_group` joins the job's processes into JAX's multi-controller runtime
(`_runtime`, DESIGN 14): `env://` reads `MASTER_ADDR`/`MASTER_PORT`/`RANK`/`WORLD_SIZE` as set
by `torchrun`, `tcp://host:port` names the rendezvous, and `file://` or a `store` carry rank
0's coordinator address to the others. A world of one process needs no runtime and joins
none. Every collective on a group of several ranks is one XLA program over the group's
devices (`_xla`), run to completion: gloo on CPU, NCCL on GPU, ICI on TPU. A collective
writes its result into its tensors (through views, as PyTorch's do) and leaves autograd out.

Object collectives live in `_object_collectives`, point-to-point messages in `_p2p`; both are
exported here as PyTorch exports them.
"""

from __future__ import annotations

import socket
import urllib.parse
import warnings

import jax
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from . import _comm_debug, _runtime, _xla
from ._process_group import NOT_INITIALIZED as _NOT_INITIALIZED  # noqa: F401 (PyTorch's names, exported here)
from ._process_group import (
    REDUCE_OP_NAMES,
    Backend,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    Work,
    _pg_map,
    _World,
    default_group,
    group,
    not_in_group,
    resolve,
)
from ._process_group import done as _done
from ._process_group import env_int as _env_int
from ._process_group import group_root as _root
from ._store import FileStore, HashStore, PrefixStore, Store
from .constants import default_pg_timeout

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_gather_single",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "is_ucc_available",
    "isend",
    "monitored_barrier",
    "new_group",
    "new_subgroups",
    "P2POp",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_single",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
    "get_default_backend_for_device",
    "is_backend_available",
    "is_xccl_available",
    "FileStore",
    "HashStore",
    "PrefixStore",
    "Store",
]

reduce_op = ReduceOp


def is_available() -> bool:
    return True


def is_gloo_available() -> bool:
    return True


def is_nccl_available() -> bool:
    """True where jax has NVIDIA GPUs (XLA's NCCL carries their collectives)."""
    from .. import _device

    return any(d.platform == "gpu" for d in _device.accelerators("cuda"))


def is_mpi_available() -> bool:
    return False


def is_ucc_available() -> bool:
    return False


def is_xccl_available() -> bool:
    return False


def is_backend_available(backend: str) -> bool:
    return str(backend).lower() in ("gloo", "nccl") and (
        str(backend).lower() == "gloo" or is_nccl_available()
    )


def is_torchelastic_launched() -> bool:
    """Matches PyTorch: True when launched by torchrun (TORCHELASTIC_RUN_ID is set)."""
    import os

    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_default_backend_for_device(device) -> str:
    """Matches `torch.distributed.get_default_backend_for_device`."""
    kind = str(device).partition(":")[0]
    if kind not in Backend.default_device_backend_map:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return Backend.default_device_backend_map[kind]


def _get_default_group() -> ProcessGroup:
    """Matches `torch.distributed.distributed_c10d._get_default_group`."""
    return default_group()


# -- joining the world ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _rendezvous(init_method, store, rank: int, world_size: int, timeout) -> tuple:
    """(rank, world size, coordinator "host:port") from the init method or store."""
    import os

    if store is not None or (init_method or "").startswith("file://"):
        if store is None:
            store = FileStore(urllib.parse.urlparse(init_method).path, world_size)
        if rank == -1 or world_size == -1:
            raise ValueError("rank and world_size must be given with a store or file:// init")
        if world_size > 1:
            # Rank 0 hosts the coordinator on a free port and tells the others through the
            # store; a later job on the same file gets a fresh key.
            key = "jtorch/coordinator"
            if rank == 0:
                store.set(key, f"{socket.gethostname()}:{_free_port()}")
            store.wait([key], timeout)
            return rank, world_size, store.get(key).decode()
        return rank, world_size, None
    url = urllib.parse.urlparse(init_method)
    query = dict(urllib.parse.parse_qsl(url.query))
    if url.scheme == "env":
        rank = _env_int("RANK") if rank == -1 else rank
        world_size = _env_int("WORLD_SIZE") if world_size == -1 else world_size
        host = os.environ.get("MASTER_ADDR")
        port = os.environ.get("MASTER_PORT")
        if world_size > 1 and host is None:
            _env_int("MASTER_ADDR")
        if world_size > 1 and port is None:
            _env_int("MASTER_PORT")
        return rank, world_size, f"{host}:{port}"
    if url.scheme == "tcp":
        rank = int(query.get("rank", rank))
        world_size = int(query.get("world_size", world_size))
        if rank == -1 or world_size == -1:
            raise ValueError("rank and world_size must be given with a tcp:// init method")
        return rank, world_size, url.netloc
    raise ValueError(
        f"Unsupported init_method {init_method!r}: jtorch supports env://, tcp:// and file://"
    )


def init_process_group(
    backend=None,
    init_method=None,
    timeout=None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Matches `torch.distributed.init_process_group` (see the module doc)."""
    import os

    if _World.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if init_method is None and store is None:
        init_method = "env://"
    if init_method is not None and store is not None:
        raise ValueError("Cannot specify both init_method and store.")
    timeout = timeout or default_pg_timeout
    rank, world_size, coordinator = _rendezvous(init_method, store, rank, world_size, timeout)
    if world_size < 1:
        raise ValueError(f"world_size must be positive, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(
            f"Invalid rank {rank}, rank should be in the interval [0, {world_size - 1}]"
        )
    if world_size > 1:
        local_rank = os.environ.get("LOCAL_RANK")
        local_size = os.environ.get("LOCAL_WORLD_SIZE")
        _runtime.join(
            coordinator,
            world_size,
            rank,
            timeout,
            None if local_rank is None else int(local_rank),
            None if local_size is None else int(local_size),
        )
    name = "gloo" if backend is None else str(backend).lower()
    _World.WORLD = ProcessGroup(name, list(range(world_size)), rank, "0", timeout)
    _pg_map[_World.WORLD] = (Backend(name), store)
    _GROUPS.clear()
    if world_size > 1:
        barrier()  # as PyTorch: init returns once every rank has joined


def destroy_process_group(group=None) -> None:
    """Destroys `group` (None: all groups). The processes stay in JAX's runtime, which a
    later `init_process_group` of the same world reuses."""
    if _World.WORLD is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is _World.WORLD:
        _World.WORLD = None
        _pg_map.clear()
        _GROUPS.clear()
    else:
        _pg_map.pop(group, None)


def is_initialized() -> bool:
    return _World.WORLD is not None


def get_rank(group=None) -> int:
    """This process's rank in `group` (-1 outside it, as in PyTorch)."""
    world = default_group()
    if group is not None and group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return world.rank() if group is None else group.rank()


def get_world_size(group=None) -> int:
    default_group()
    if group is not None and group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).size()


def get_backend(group=None) -> str:
    return Backend(resolve(group)._backend)


def get_process_group_ranks(group) -> list:
    return resolve(group).ranks


def _registered(group) -> None:
    if group not in _pg_map:
        raise ValueError(
            f"Group {group} is not registered, please create group with "
            f"torch.distributed.new_group API"
        )


def get_global_rank(group, group_rank: int) -> int:
    if group is GroupMember.WORLD:
        return group_rank
    _registered(group)
    if not 0 <= group_rank < group.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return group.ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    if group is GroupMember.WORLD:
        return global_rank
    _registered(group)
    if global_rank not in group.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return group.ranks.index(global_rank)


_GROUPS: dict = {}  # sorted ranks -> the group (one object per set of ranks)


def new_group(
    ranks=None,
    timeout=None,
    backend=None,
    pg_options=None,
    use_local_synchronization=False,
    group_desc=None,
    device_id=None,
):
    """Matches `torch.distributed.new_group`: the group of `ranks` (all ranks when None), or
    `GroupMember.NON_GROUP_MEMBER` on a process outside it."""
    world = default_group()
    ranks = sorted(range(world.size()) if ranks is None else {int(r) for r in ranks})
    if len(ranks) > world.size():
        raise ValueError(
            "the new group's world size should be less or equal to the world size "
            "set by init_process_group"
        )
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(
                f"The new group's rank should be within the world_size set by "
                f"init_process_group, but got rank {r} with world size "
                f"{world.size()}"
            )
    if world._my_rank not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(
        backend or world._backend,
        ranks,
        world._my_rank,
        str(len(_pg_map)),
        timeout or world._timeout,
    )
    if group_desc is not None:
        pg.group_desc = group_desc
    _pg_map[pg] = (Backend(pg._backend), None)
    return pg


def new_subgroups(
    group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None
) -> tuple:
    """Matches `torch.distributed.new_subgroups`: consecutive groups of `group_size` ranks;
    returns (this rank's subgroup, all subgroups)."""
    world = default_group()
    group_size = group_size or 1
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if world.size() % group_size != 0:
        raise ValueError(
            f"The world size ({world.size()}) must be divisible by 'group_size={group_size}'"
        )
    subgroups, mine = [], None
    for start in range(0, world.size(), group_size):
        pg = new_group(list(range(start, start + group_size)), timeout, backend)
        subgroups.append(pg)
        if start <= world._my_rank < start + group_size:
            mine = pg
    return mine, subgroups


# -- checks -------------------------------------------------------------------------------


def _check_rank(r: int, what: str = "rank") -> None:
    size = default_group().size()
    if not 0 <= r < size:
        raise ValueError(
            f"Invalid {what} {r}: the world has {size} process(es) (ranks 0 to {size - 1})"
        )


def _check_root(rank: int, collective: str, pg: ProcessGroup | None = None) -> None:
    pg = pg or default_group()
    if not 0 <= rank < pg.size():
        raise RuntimeError(f"ProcessGroupGloo::{collective}: invalid root rank: {rank}")


def _check_op(op, tensor: Tensor | None = None, name: str = "all_reduce") -> None:
    # PyTorch's options object takes only a ReduceOp (a plain 3 is refused, although
    # RedOpType is an IntEnum here)
    if not isinstance(op, (ReduceOp, ReduceOp.RedOpType)):
        raise TypeError(
            f"{name}: incompatible function arguments: op must be a torch.distributed.ReduceOp, "
            f"got {op!r}"
        )
    if op == ReduceOp.PREMUL_SUM:
        raise TypeError(
            "ReduceOp.PREMUL_SUM needs a premul-sum op (PyTorch makes one with "
            "_make_nccl_premul_sum, for NCCL only)"
        )
    if tensor is None:
        return
    if tensor.is_complex() and op in (
        ReduceOp.MAX,
        ReduceOp.MIN,
        ReduceOp.PRODUCT,
        ReduceOp.BAND,
        ReduceOp.BOR,
        ReduceOp.BXOR,
    ):
        raise ValueError(f"{name} does not support {op} on complex tensors")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and tensor.is_floating_point():
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op == ReduceOp.AVG and not (tensor.is_floating_point() or tensor.is_complex()):
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type "
            f"{_dtype.c10_name(tensor.dtype)}"
        )


def _tensor(t, what="tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{what}` of type "
            f"torch.Tensor\n             but got {type(t)} instead."
        )
    return t


# -- running a collective -----------------------------------------------------------------


_run = _xla.run_on_group


def _platform(arr) -> str:
    return _xla.platform_of(arr)


def _store(t: Tensor, arr) -> None:
    """Writes a collective's result into `t` (through a view into its base)."""
    t._write(arr.reshape(t._array.shape))


def _reduced(arr, op, pg: ProcessGroup):
    return _run("all_reduce", pg, arr, REDUCE_OP_NAMES[op])


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Matches `torch.distributed.barrier`: returns once every rank of the group called it."""
    if not_in_group(group, "barrier"):
        return None
    pg = resolve(group)
    if pg.size() > 1:
        _run(
            "all_reduce",
            pg,
            jax.device_put(jnp.zeros((1,), jnp.int32), _runtime.local_device("cpu")),
            "sum",
        )
    return _done(async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False) -> None:
    """Matches `torch.distributed.monitored_barrier`: a barrier of the coordination service
    that raises when a rank does not arrive within `timeout`."""
    if not_in_group(group, "monitored_barrier"):
        return
    pg = resolve(group)
    if pg.size() == 1:
        return
    timeout = timeout or pg._timeout
    monitored_barrier._count = getattr(monitored_barrier, "_count", 0) + 1
    name = f"jtorch/monitored_barrier/{pg.group_name}/{monitored_barrier._count}"
    try:
        _runtime.coordination_client().wait_at_barrier(
            name, int(timeout.total_seconds() * 1000), None if pg is _World.WORLD else pg.ranks
        )
    except Exception as e:
        raise RuntimeError(
            f"Rank {pg.rank()} timed out in monitoredBarrier after "
            f"{int(timeout.total_seconds() * 1000)} ms: {e}"
        ) from None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Matches `torch.distributed.all_reduce`: every rank gets the reduction of all ranks'."""
    _tensor(tensor)
    if not_in_group(group, "all_reduce"):
        return None
    pg = resolve(group)
    _check_op(op, tensor)
    if pg.size() > 1 and async_op:
        # Queued, not waited for: the work's wait() waits (DDP's buckets overlap backward).
        result = _run("all_reduce", pg, tensor._array, REDUCE_OP_NAMES[op], wait=False)
        _store(tensor, result)
        _comm_debug.note("c10d", "allreduce_")
        if isinstance(result, jax.core.Tracer):  # inside a compiled step's program
            return _done(async_op, tensor)
        return Work([tensor], wait=lambda timeout=None: result.block_until_ready())
    if pg.size() > 1:
        _store(tensor, _reduced(tensor._array, op, pg))
    _comm_debug.note("c10d", "allreduce_")
    return _done(async_op, tensor)


def reduce(
    tensor,
    dst: int | None = None,
    op=ReduceOp.SUM,
    group=None,
    async_op: bool = False,
    group_dst=None,
):
    """Matches `torch.distributed.reduce`. Like PyTorch's gloo, every rank's tensor ends up
    holding the reduction (PyTorch documents only the destination's)."""
    _tensor(tensor)
    if not_in_group(group, "reduce"):
        return None
    pg = resolve(group)
    _check_op(op, tensor, "reduce")
    _check_root(_root(group_dst, dst, pg), "reduce", pg)
    if pg.size() > 1:
        _store(tensor, _reduced(tensor._array, op, pg))
    _comm_debug.note("c10d", "reduce_")
    return _done(async_op, tensor)


def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False, group_src=None):
    """Matches `torch.distributed.broadcast`: the source rank's tensor, bit for bit."""
    _tensor(tensor)
    if not_in_group(group, "broadcast"):
        return None
    pg = resolve(group)
    root = _root(group_src, src, pg)
    _check_root(root, "broadcast", pg)
    if pg.size() > 1:
        _store(tensor, _run("broadcast", pg, tensor._array, root))
    _comm_debug.note("c10d", "broadcast_")
    return _done(async_op, tensor)


def _broadcast_coalesced(process_group, tensors: list, buffer_size: int, src: int = 0) -> None:
    """Broadcasts `tensors` from group rank `src` (PyTorch's private helper): the tensors of
    one dtype and device travel flattened into one buffer, by one program."""
    pg = resolve(process_group)
    _check_root(src, "broadcast", pg)
    groups: dict = {}
    for t in tensors:
        arr = _tensor(t)._array
        groups.setdefault((str(arr.dtype), _platform(arr)), []).append(t)
    if pg.size() == 1:
        return
    for ts in groups.values():
        flat = _run("broadcast", pg, jnp.concatenate([t._array.reshape(-1) for t in ts]), src)
        start = 0
        for t in ts:
            _store(t, flat[start : start + t.numel()])
            start += t.numel()


def _gathered(arr, pg: ProcessGroup):
    """[n, *shape]: every rank's `arr`."""
    if pg.size() == 1:
        return arr[None]
    return _run("all_gather", pg, arr)


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Matches `torch.distributed.all_gather`: `tensor_list[i]` gets rank i's tensor."""
    _tensor(tensor)
    if not_in_group(group, "all_gather"):
        return None
    pg = resolve(group)
    if len(tensor_list) != pg.size():
        raise RuntimeError(
            f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 "
            f"(expected length {pg.size()}, got {len(tensor_list)})"
        )
    for i, out in enumerate(tensor_list):
        if out.dtype != tensor.dtype:
            raise ValueError(
                f"Invalid usage of tensors with different dtypesFound "
                f"{tensor.dtype} and  {out.dtype}"
            )
        if tuple(out.shape) != tuple(tensor.shape):
            raise RuntimeError(
                f"ProcessGroupGloo::allgather: invalid tensor size at index {i} "
                f"(expected {_size(tensor.shape)}, got {_size(out.shape)})"
            )
    gathered = _gathered(tensor._array, pg)
    for i, out in enumerate(tensor_list):
        _store(out, gathered[i])
    _comm_debug.note("c10d", "allgather_")
    return _done(async_op)


def _size(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def all_gather_single(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Matches `torch.distributed.all_gather_single`: the ranks' tensors concatenated along
    dimension 0 (a 0-d tensor per rank makes a 1-d result)."""
    out, inp = _tensor(output_tensor, "output_tensor"), _tensor(input_tensor, "input_tensor")
    if not_in_group(group, "all_gather_into_tensor"):
        return None
    pg = resolve(group)
    n = pg.size()
    chunk = tuple(out.shape)
    if chunk and chunk[0] % n == 0:
        chunk = (chunk[0] // n,) + chunk[1:]
    ok = (
        (tuple(out.shape) == (n,))
        if inp.dim() == 0
        else (out.dim() == inp.dim() and chunk == tuple(inp.shape) and out.shape[0] % n == 0)
    )
    if not ok:
        raise RuntimeError(
            f"ProcessGroupGloo::allgather: invalid tensor size at index 0 "
            f"(expected {_size(inp.shape)}, got {_size(chunk)})"
        )
    _store(out, _gathered(inp._array, pg))
    _comm_debug.note("c10d", "_allgather_base_")
    return _done(async_op, output_tensor)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    warnings.warn(
        "`torch.distributed.all_gather_into_tensor` is deprecated. Please use "
        "`torch.distributed.all_gather_single` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def _reduce_scattered(arr, op, pg: ProcessGroup):
    return _run("reduce_scatter", pg, arr, REDUCE_OP_NAMES[op])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Matches `torch.distributed.reduce_scatter`: rank i gets the reduction of the ranks'
    `input_list[i]`."""
    out = _tensor(output, "output")
    if not_in_group(group, "reduce_scatter"):
        return None
    pg = resolve(group)
    _check_op(op, out, "reduce_scatter")
    if len(input_list) != pg.size():
        raise ValueError(
            f"input_list must have one tensor per rank ({pg.size()}), got {len(input_list)}"
        )
    for t in input_list:
        if t.numel() != out.numel():
            raise RuntimeError(f"output tensor has {out.numel()} elements, expected {t.numel()}")
    stacked = jnp.stack([t._array.reshape(-1) for t in input_list])
    if pg.size() == 1:
        _store(out, stacked[0])
    else:
        _store(out, _reduce_scattered(stacked, op, pg))
    _comm_debug.note("c10d", "reduce_scatter_")
    return _done(async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Matches `torch.distributed.reduce_scatter_single`: `input`'s dimension 0 is split in
    group-size blocks; rank i gets block i reduced over the ranks."""
    out, inp = _tensor(output, "output"), _tensor(input, "input")
    if not_in_group(group, "reduce_scatter_tensor"):
        return None
    pg = resolve(group)
    _check_op(op, inp, "reduce_scatter_tensor")
    n = pg.size()
    out0 = out.shape[0] if out.dim() else 1
    in0 = inp.shape[0] if inp.dim() else 1
    if out0 * n != in0 or out.numel() * n != inp.numel():
        raise RuntimeError(
            f"Check failed: outputShape[0] * worldSize == inputShape[0] ({out0 * n} vs. {in0})."
        )
    arr = inp._array.reshape((in0,) + tuple(inp.shape[1:]))
    _store(out, arr if n == 1 else _reduce_scattered(arr, op, pg))
    _comm_debug.note("c10d", "_reduce_scatter_base_")
    return _done(async_op, output)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    warnings.warn(
        "`torch.distributed.reduce_scatter_tensor` is deprecated. Please use "
        "`torch.distributed.reduce_scatter_single` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return reduce_scatter_single(output, input, op, group, async_op)


def gather(
    tensor,
    gather_list=None,
    dst: int | None = None,
    group=None,
    async_op: bool = False,
    group_dst=None,
):
    """Matches `torch.distributed.gather`: the destination's `gather_list[i]` gets rank i's."""
    _tensor(tensor)
    if not_in_group(group, "gather"):
        return None
    pg = resolve(group)
    root = _root(group_dst, dst, pg)
    if pg.rank() != root and gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    _check_root(root, "gather", pg)
    if pg.rank() == root:
        if gather_list is None or len(gather_list) != pg.size():
            raise ValueError(
                f"Argument ``gather_list`` must be specified on destination rank "
                f"with one tensor per rank ({pg.size()})"
            )
        for out in gather_list:
            if out.numel() != tensor.numel():
                raise RuntimeError(
                    f"ProcessGroupGloo::gather: invalid tensor size (expected "
                    f"{_size(tensor.shape)}, got {_size(out.shape)})"
                )
    gathered = _gathered(tensor._array, pg)
    if pg.rank() == root:
        for i, out in enumerate(gather_list):
            _store(out, gathered[i])
    _comm_debug.note("c10d", "gather_")
    return _done(async_op)


def scatter(
    tensor,
    scatter_list=None,
    src: int | None = None,
    group=None,
    async_op: bool = False,
    group_src=None,
):
    """Matches `torch.distributed.scatter`: rank i gets the source's `scatter_list[i]`."""
    _tensor(tensor)
    if not_in_group(group, "scatter"):
        return None
    pg = resolve(group)
    root = _root(group_src, src, pg)
    if pg.rank() != root and scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    _check_root(root, "scatter", pg)
    n = pg.size()
    if pg.rank() == root:
        if scatter_list is None or len(scatter_list) != n:
            raise ValueError(
                f"Argument ``scatter_list`` must be specified on source rank with "
                f"one tensor per rank ({n})"
            )
        for t in scatter_list:
            if t.numel() != tensor.numel():
                raise RuntimeError(
                    f"ProcessGroupGloo::scatter: invalid tensor size (expected "
                    f"{_size(tensor.shape)}, got {_size(t.shape)})"
                )
        stacked = jnp.stack(
            [
                t._array.reshape(tensor._array.shape).astype(tensor._array.dtype)
                for t in scatter_list
            ]
        )
    else:
        stacked = jnp.zeros((n,) + tuple(tensor._array.shape), tensor._array.dtype)
    _store(tensor, stacked[0] if n == 1 else _run("scatter", pg, stacked, root))
    _comm_debug.note("c10d", "scatter_")
    return _done(async_op)


def _all_to_all_array(arr, pg: ProcessGroup):
    return arr if pg.size() == 1 else _run("all_to_all", pg, arr)


def all_to_all_single(
    output,
    input,
    output_split_sizes=None,
    input_split_sizes=None,
    group=None,
    async_op: bool = False,
):
    """Matches `torch.distributed.all_to_all_single`: rank i's block j (of dimension 0, split
    evenly or by the split sizes) becomes rank j's block i."""
    out, inp = _tensor(output, "output"), _tensor(input, "input")
    if not_in_group(group, "all_to_all_single"):
        return None
    pg = resolve(group)
    n = pg.size()
    if output_split_sizes is None and input_split_sizes is None:
        if inp.shape[0] % n or tuple(out.shape) != tuple(inp.shape):
            raise RuntimeError(
                f"ProcessGroupGloo::alltoall_base: tensor's dim 0 does not "
                f"divide equally across group size {n}"
            )
        _store(out, _all_to_all_array(inp._array, pg))
        _comm_debug.note("c10d", "alltoall_base_")
        return _done(async_op, output)
    _store(out, _uneven_all_to_all(out, inp, output_split_sizes, input_split_sizes, pg))
    _comm_debug.note("c10d", "alltoall_base_")
    return _done(async_op, output)


def _uneven_all_to_all(out: Tensor, inp: Tensor, out_splits, in_splits, pg: ProcessGroup):
    """An all-to-all of uneven blocks: each block is padded to the largest block of any rank
    (found by a max-reduction), exchanged evenly, and unpadded."""
    n = pg.size()
    rest = tuple(inp.shape[1:])
    in_splits = list(in_splits) if in_splits else [inp.shape[0] // n] * n
    out_splits = list(out_splits) if out_splits else [out.shape[0] // n] * n
    if (
        len(in_splits) != n
        or len(out_splits) != n
        or sum(in_splits) != inp.shape[0]
        or sum(out_splits) != out.shape[0]
    ):
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    local_max = jnp.asarray([max(in_splits + out_splits)], jnp.int64)
    width = (
        int(_reduced(jax.device_put(local_max, _runtime.local_device("cpu")), ReduceOp.MAX, pg)[0])
        if n > 1
        else int(local_max[0])
    )
    arr, blocks, start = inp._array, [], 0
    for s in in_splits:
        block = arr[start : start + s]
        blocks.append(jnp.pad(block, [(0, width - s)] + [(0, 0)] * len(rest)))
        start += s
    exchanged = _all_to_all_array(jnp.concatenate(blocks), pg)
    parts = [exchanged[i * width : i * width + s] for i, s in enumerate(out_splits)]
    return jnp.concatenate(parts)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """Matches `torch.distributed.all_to_all`: rank i's `input_tensor_list[j]` becomes rank
    j's `output_tensor_list[i]` (all of one shape, as gloo requires)."""
    if not_in_group(group, "all_to_all"):
        return None
    pg = resolve(group)
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise RuntimeError(
            f"ProcessGroupGloo::alltoall: expected {n} input and output "
            f"tensors, got {len(input_tensor_list)} and "
            f"{len(output_tensor_list)}"
        )
    shape = tuple(input_tensor_list[0].shape)
    for i, t in enumerate(list(input_tensor_list) + list(output_tensor_list)):
        if tuple(t.shape) != shape:
            raise RuntimeError(
                f"ProcessGroupGloo::alltoall: invalid tensor size at index "
                f"{i % n} (expected {_size(shape)}, got {_size(t.shape)})"
            )
    stacked = jnp.stack([t._array for t in input_tensor_list])
    exchanged = _all_to_all_array(stacked, pg)
    for i, out in enumerate(output_tensor_list):
        _store(out, exchanged[i])
    _comm_debug.note("c10d", "alltoall_")
    return _done(async_op)


from ._object_collectives import (  # noqa: E402,F401 (PyTorch exports them here)
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from ._p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send  # noqa: E402,F401
