"""Point-to-point messages: `send`, `recv`, `isend`, `irecv`, `P2POp`, `batch_isend_irecv`.

XLA's collectives are rendezvous of a whole group, which point-to-point code (a ring of
sends and receives, a pipeline) cannot be made of without deadlocks. JAX's runtime has a
transport for arrays between processes, `jax.experimental.transfer`: each process runs a
transfer server; a sender offers an array under a message id and returns at once (the
array waits on its server), and the receiver pulls it. jtorch uses it (`_runtime`):

- a message between two ranks is identified by (sender, receiver, tag, sequence number),
  numbered on both sides in program order, which is PyTorch's matching rule;
- the sender also leaves a note in the coordination service's store, naming the message's
  dtype and shape: a receive waits for the note (so it can time out with a message, check
  the buffer it was given, and answer `recv(src=None)` from whichever rank sent first),
  pulls the array and removes the note.

Messages travel through host memory (the servers are the CPU client's).
"""

from __future__ import annotations

import datetime
import hashlib
import time

import jax
import numpy as np

from .._tensor import Tensor
from . import _runtime
from ._process_group import Work, _World, default_group, not_in_group

__all__ = ["P2POp", "batch_isend_irecv", "irecv", "isend", "recv", "send"]

_SENT: dict = {}  # (dst, tag) -> messages sent
_RECEIVED: dict = {}  # (src, tag) -> messages received


def _message_id(src: int, dst: int, tag: int, seq: int) -> int:
    digest = hashlib.blake2b(f"{src},{dst},{tag},{seq}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 2


def _note_key(dst: int, src: int, tag: int, seq: int) -> str:
    return f"jtorch/p2p/{dst}/{src}/{tag}/{seq}"


def _peer(group, rank, group_rank, what: str) -> int:
    """The peer's global rank from a global `rank` or a `group_rank` of `group`."""
    world = default_group()
    pg = world if group is None else group
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return pg.ranks[group_rank]
    if rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    if rank not in pg.ranks:
        if pg is world:
            raise ValueError(
                f"Invalid {what} rank {rank}: the world has {world.size()} process(es)"
            )
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    return rank


def _not_self(peer: int, what: str) -> None:
    if peer == _World.WORLD._my_rank:
        raise ValueError(
            f"Invalid {what} rank: {what} rank should not be the same as the "
            f"rank of the current process."
        )


def _check_tensor(tensor) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `tensor` of type "
            f"torch.Tensor\n             but got {type(tensor)} instead."
        )


def _timeout() -> datetime.timedelta:
    return _World.WORLD._timeout


def _post(tensor: Tensor, dst: int, tag: int) -> None:
    """Offers `tensor`'s current value to rank `dst` (returns at once)."""
    me = _World.WORLD._my_rank
    seq = _SENT.get((dst, tag), 0)
    _SENT[(dst, tag)] = seq + 1
    arr = jax.device_put(tensor._array, _runtime.local_device("cpu"))
    _runtime.transfer_server().await_pull(_message_id(me, dst, tag, seq), [arr])
    note = f"{np.dtype(arr.dtype).str}|{','.join(str(s) for s in arr.shape)}"
    _runtime.coordination_client().key_value_set(_note_key(dst, me, tag, seq), note)


def _next_seq(src: int, tag: int) -> int:
    return _RECEIVED.get((src, tag), 0)


def _any_source(tag: int, deadline: float) -> int:
    """The sender of the first message to this rank with `tag` that is next in its order."""
    me = _World.WORLD._my_rank
    client = _runtime.coordination_client()
    while True:
        for key, _ in sorted(client.key_value_dir_get(f"jtorch/p2p/{me}/")):
            src, key_tag, seq = (int(x) for x in key.rsplit("/", 3)[1:])
            if key_tag == tag and seq == _next_seq(src, tag):
                return src
        if time.monotonic() > deadline:
            raise RuntimeError(f"recv from any source with tag {tag} timed out")
        time.sleep(0.005)


def _take(tensor: Tensor, src: int | None, tag: int) -> int:
    """Receives the next message with `tag` from `src` (None: any rank) into `tensor`."""
    timeout = _timeout()
    deadline = time.monotonic() + timeout.total_seconds()
    if src is None:
        src = _any_source(tag, deadline)
    me = _World.WORLD._my_rank
    seq = _next_seq(src, tag)
    key = _note_key(me, src, tag, seq)
    client = _runtime.coordination_client()
    try:
        note = client.blocking_key_value_get(key, int(timeout.total_seconds() * 1000))
    except Exception as e:
        raise RuntimeError(
            f"recv from rank {src} (tag {tag}) timed out after {timeout}: {e}"
        ) from None
    dtype, _, shape = note.partition("|")
    shape = tuple(int(s) for s in shape.split(",") if s)
    if np.dtype(dtype) != np.dtype(tensor._array.dtype) or shape != tuple(tensor.shape):
        raise RuntimeError(
            f"recv from rank {src}: the message is {np.dtype(dtype).name} of "
            f"shape {list(shape)}, but the receiving tensor is "
            f"{np.dtype(tensor._array.dtype).name} of shape "
            f"{list(tensor.shape)}"
        )
    _RECEIVED[(src, tag)] = seq + 1
    device = _runtime.local_device("cpu")
    spec = jax.ShapeDtypeStruct(
        shape, np.dtype(dtype), sharding=jax.sharding.SingleDeviceSharding(device)
    )
    conn = _runtime.transfer_connection(src, timeout.total_seconds())
    (arr,) = conn.pull(_message_id(src, me, tag, seq), [spec])
    client.key_value_delete(key)
    tensor._write(jax.device_put(arr, next(iter(tensor._array.devices()))))
    return src


class _RecvWork(Work):
    """An `irecv`: the message is pulled when the work is waited on."""

    def __init__(self, tensor: Tensor, src: int | None, tag: int):
        super().__init__([tensor], wait=self._pull)
        self._tensor, self._src, self._tag = tensor, src, tag

    def _pull(self, timeout=None) -> None:
        self._src = _take(self._tensor, self._src, self._tag)

    def _source_rank(self) -> int:
        self._finish()
        return self._src


def isend(tensor, dst: int | None = None, group=None, tag: int = 0, group_dst=None):
    """Matches `torch.distributed.isend`: the message is on its way when this returns."""
    _check_tensor(tensor)
    if not_in_group(group, "isend"):
        return None
    dst = _peer(group, dst, group_dst, "destination")
    if default_group().size() == 1:
        raise RuntimeError("a world of one process has no other rank to send to")
    _post(tensor, dst, tag)
    return Work([tensor])


def irecv(tensor, src: int | None = None, group=None, tag: int = 0, group_src=None):
    """Matches `torch.distributed.irecv`: `wait()` on the result receives the message."""
    _check_tensor(tensor)
    if not_in_group(group, "irecv"):
        return None
    if src is not None or group_src is not None:
        src = _peer(group, src, group_src, "source")
    if default_group().size() == 1:
        raise RuntimeError("a world of one process has no other rank to receive from")
    return _RecvWork(tensor, src, tag)


def send(tensor, dst: int | None = None, group=None, tag: int = 0, group_dst=None) -> None:
    """Matches `torch.distributed.send` (the message waits on this rank until received)."""
    _check_tensor(tensor)
    if not_in_group(group, "send"):
        return None
    peer = _peer(group, dst, group_dst, "destination")
    _not_self(peer, "destination")
    isend(tensor, peer, tag=tag)
    return None


def recv(tensor, src: int | None = None, group=None, tag: int = 0, group_src=None) -> int:
    """Matches `torch.distributed.recv`: returns the sender's global rank (-1 outside the
    group)."""
    _check_tensor(tensor)
    if not_in_group(group, "recv"):
        return -1
    if src is not None or group_src is not None:
        src = _peer(group, src, group_src, "source")
        _not_self(src, "source")
    work = irecv(tensor, src, tag=tag)
    work.wait()
    return work._source_rank()


class P2POp:
    """Matches `torch.distributed.P2POp`: one send or receive for `batch_isend_irecv`."""

    def __init__(
        self,
        op,
        tensor,
        peer: int | None = None,
        group=None,
        tag: int = 0,
        group_peer: int | None = None,
    ):
        if op not in (isend, irecv):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type "
                "``torch.distributed.isend`` or ``torch.distributed.irecv``."
            )
        _check_tensor(tensor)
        self.op, self.tensor, self.tag = op, tensor, tag
        self.group = group if group is not None else default_group()
        self.peer = _peer(group, peer, group_peer, "peer")
        self.group_peer = self.group.ranks.index(self.peer)

    def __repr__(self) -> str:
        return (
            f"P2POp({self.op.__name__} pg={self.group.group_name}, "
            f"group_src={self.group.rank() if self.op is isend else self.group_peer}, "
            f"group_dst={self.group_peer if self.op is isend else self.group.rank()}, "
            f"{tuple(self.tensor.shape)}, {self.tensor.dtype})"
        )


def batch_isend_irecv(p2p_op_list: list) -> list:
    """Matches `torch.distributed.batch_isend_irecv`: every send is posted before any
    receive is waited on, so each rank's batch completes whatever the others' order."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError(
            "Invalid ``p2p_op_list``. Each op is expected to to be of type "
            "``torch.distributed.P2POp``."
        )
    group = p2p_op_list[0].group
    if not all(group == p.group for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    sends = [p.op(p.tensor, p.peer, tag=p.tag) for p in p2p_op_list if p.op is isend]
    sends = iter(sends)
    return [
        next(sends) if p.op is isend else irecv(p.tensor, p.peer, tag=p.tag) for p in p2p_op_list
    ]
