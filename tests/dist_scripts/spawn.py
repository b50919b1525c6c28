"""`torch.multiprocessing.spawn` of workers that join through a tcp:// init method."""

import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank: int, world: int, port: int, fail: bool) -> None:
    torch.manual_seed(rank)  # computing before init_process_group is allowed
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    if fail and rank == world - 1:
        raise RuntimeError(f"rank {rank} fails")
    t = torch.arange(3.0) * (rank + 1)
    dist.all_reduce(t)
    out = [None] * world
    dist.all_gather_object(out, t.tolist())
    if rank == 0:
        print("sum", out[0], "ranks agree", all(o == out[0] for o in out), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    world = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    fail = len(sys.argv) > 2 and sys.argv[2] == "fail"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        mp.spawn(worker, args=(world, port, fail), nprocs=world)
    except mp.ProcessRaisedException as e:
        print("failed:", str(e).strip().splitlines()[-1])
