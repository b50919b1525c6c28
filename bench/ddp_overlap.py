"""Eager DDP: all-reduces overlapped with backward against waiting for each bucket.

    python bench/ddp_overlap.py [--width 512] [--batch 64] [--bucket-cap-mb MB] [--steps 40]

Two processes (jtorch's torchrun, gloo, pinned to two CPUs with `taskset`) each train two
identical DDP models in alternating steps: one as DDP runs by default (each bucket's
all-reduce queued and waited for once at the end of backward), one with PyTorch's
`allreduce_hook` registered (jtorch's hook path waits for each bucket's all-reduce before
backward goes on: the behaviour before the overlap). Alternating steps in one job lets both
see the same machine load. Buckets: DDP's default (after the first step, a first bucket of
1 MiB in gradient order, then 25 MB) unless `--bucket-cap-mb` is given. Both must end with
the same parameters. Reported: rank 0's median step time (forward, backward, SGD, `.item()`),
warm-up steps left out.
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from ddp import child_env  # (bench/ddp.py, beside this script)

_CHILD = r"""
import statistics, sys, time
import numpy as np
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.set_num_threads(1)
width, batch, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[4])
cap = None if sys.argv[3] == "None" else float(sys.argv[3])


def make():
    rng = np.random.default_rng(0)
    layers = [m for _ in range(4) for m in (torch.nn.Linear(width, width), torch.nn.ReLU())]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 10))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.05))
    return model


overlapped = DDP(make(), bucket_cap_mb=cap)
waiting = DDP(make(), bucket_cap_mb=cap)
waiting.register_comm_hook(None, allreduce_hook)
rng = np.random.default_rng(rank)
x = torch.tensor(rng.standard_normal((batch, width)).astype(np.float32))
y = torch.tensor(rng.integers(0, 10, batch))
runs = [(net, torch.optim.SGD(net.parameters(), lr=0.01), []) for net in (overlapped, waiting)]
for i in range(6 + steps):
    for net, opt, times in runs if i % 2 else runs[::-1]:
        t0 = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        net.module[0].weight.sum().item()
        times.append(time.perf_counter() - t0)
for p, q in zip(overlapped.parameters(), waiting.parameters()):
    assert torch.allclose(p, q, atol=1e-6)
if rank == 0:
    a, b = (1e3 * statistics.median(t[6:]) for _, _, t in runs)
    print(f"overlapped {a:.2f} ms, waiting per bucket {b:.2f} ms")
dist.destroy_process_group()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--bucket-cap-mb", type=float, default=None)
    p.add_argument("--steps", type=int, default=40)
    args = p.parse_args()
    env = child_env()
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "overlap.py")
        with open(script, "w") as f:
            f.write(_CHILD)
        cmd = [sys.executable, "-m", "jtorch", "-m", "torch.distributed.run"]
        cmd += ["--nproc-per-node", "2", "--master-port", str(_free_port()), script]
        cmd += [str(a) for a in (args.width, args.batch, args.bucket_cap_mb, args.steps)]
        if shutil.which("taskset"):
            cmd = ["taskset", "-c", "0,1"] + cmd
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
        if out.returncode:
            raise RuntimeError(out.stderr[-3000:])
    print(
        f"MLP 4x{args.width} + 10, batch {args.batch} per rank, DDP bucket_cap_mb="
        f"{args.bucket_cap_mb}, 2 processes: {out.stdout.strip().splitlines()[-1]}"
    )


if __name__ == "__main__":
    main()
