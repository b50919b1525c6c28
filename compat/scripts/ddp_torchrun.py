# compat: rtol=0.4 atol=0.01
"""A training script meant for `torchrun --nproc_per_node=N`, here launched as one process.

Launched without torchrun it acts as a one-process torchrun: it fills in the environment
torchrun would set (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and goes on.
"""
import os
import socket
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setup():
    if "RANK" not in os.environ:    # plain `python script.py`: a world of one
        os.environ.setdefault("RANK", "0")
        os.environ.setdefault("LOCAL_RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(free_port()))
    rank = int(os.environ.get("RANK", 0))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    ddp = int(os.environ.get("RANK", -1)) != -1
    if ddp:
        dist.init_process_group("gloo")
    return ddp, rank, local_rank, world_size


def make_dataset(n, rng):
    x = rng.uniform(-1.0, 1.0, size=(n, 4)).astype(np.float32)
    w = np.array([[1.0], [-1.0], [0.5], [0.0]], dtype=np.float32)
    y = np.sin(x @ w) + 0.2 * x[:, :1] ** 2 + 0.01 * rng.standard_normal((n, 1)).astype(np.float32)
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(y.astype(np.float32)))


def main():
    ddp, rank, local_rank, world_size = setup()
    master = rank == 0
    if master:
        print(f"ddp={ddp} rank={rank} local_rank={local_rank} world_size={world_size}")
        print("initialized:", dist.is_initialized(), "backend:", dist.get_backend(),
              "get_rank/get_world_size:", dist.get_rank(), dist.get_world_size())
    device = torch.device("cpu")

    rng = np.random.default_rng(0)
    train_set = make_dataset(512, rng)
    val_set = make_dataset(128, rng)
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True,
                                 seed=0)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    if master:
        print("samples per rank:", len(sampler), "batches per epoch:", len(loader))
    sampler.set_epoch(0)
    epoch0 = list(sampler)
    sampler.set_epoch(1)
    print("epoch orders differ:", epoch0 != list(sampler),
          "and cover the data:", sorted(epoch0) == list(range(512)))
    plain = DistributedSampler(val_set, shuffle=False)
    print("unshuffled:", list(plain)[:6], len(plain))

    torch.manual_seed(1234 + rank)
    model = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                          nn.Linear(32, 1)).to(device)
    model = DDP(model) if ddp else model
    raw_model = model.module if ddp else model
    print("wrapped:", type(model).__name__, "->", type(raw_model).__name__)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.MSELoss()

    for epoch in range(16):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(2)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += torch.stack([loss.detach() * x.shape[0], torch.tensor(float(x.shape[0]))])
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        if master and epoch % 5 == 0 or epoch == 15:
            print(f"epoch {epoch} train mse {(total[0] / total[1]).item():.4f} "
                  f"over {int(total[1].item())} samples")

    model.eval()
    with torch.no_grad():
        xv, yv = val_set.tensors
        val = loss_fn(model(xv), yv)
    val = val.reshape(1)
    dist.all_reduce(val, op=dist.ReduceOp.SUM)
    val /= world_size
    if master:
        print(f"val mse {val.item():.4f} (below 0.01: {val.item() < 0.01})")

    gathered = [torch.zeros(1) for _ in range(world_size)]
    dist.all_gather(gathered, val)
    objs = [None] * world_size
    dist.all_gather_object(objs, {"rank": rank, "n": len(sampler)})
    flag = torch.tensor([rank + 1])
    dist.broadcast(flag, src=0)
    if master:
        print("all_gather:", len(gathered), gathered[0].shape, "objects:", objs,
              "broadcast:", flag.item())

    dist.barrier()
    if master:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ckpt.pt")
            torch.save({"model": raw_model.state_dict(), "epoch": 16}, path)
            ckpt = torch.load(path)
        print("checkpoint keys:", list(ckpt["model"])[:2], "epoch", ckpt["epoch"])
        print("ddp state_dict keys:", list(model.state_dict())[:2])
    if ddp:
        dist.destroy_process_group()
    print("initialized after destroy:", dist.is_initialized())


if __name__ == "__main__":
    main()
