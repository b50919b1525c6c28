"""DDP step time: 2 processes each on half the batch against one process on the global batch.

    python bench/ddp.py [--steps 20] [--batch 64] [--width 512] [--bucket-cap-mb 25]

One training step of an MLP (forward, backward, SGD): one process without DDP on the
global batch, and `torchrun --nproc-per-node 2` with DDP (gloo), each rank on half of it,
so that both compute the same update. jtorch runs through `python -m jtorch`; PyTorch's
rows are left out when it is not installed. Each job is pinned with `taskset` (one CPU for
one process, two for two) so the processes do not share a core with each other. Reported:
the median and the best step time of `--steps` steps after three warm-up steps (rank 0's;
every step ends with `loss.item()`, so the collectives and the update are finished).
`--bucket-cap-mb` is DDP's bucket size (default: DDP's own, 25 MB after a first bucket of
1 MiB): a small one gives several all-reduces per backward, which overlap the rest of it.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, os, statistics, sys, time
import numpy as np
import torch

batch, width, steps = (int(a) for a in sys.argv[1:4])
cap = None if sys.argv[4] == "None" else float(sys.argv[4])
world = int(os.environ.get("WORLD_SIZE", "1"))
if world > 1:
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("gloo")
    rank = dist.get_rank()
else:
    rank = 0
torch.set_num_threads(1)
rng = np.random.default_rng(0)
model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                            torch.nn.Linear(width, width), torch.nn.ReLU(),
                            torch.nn.Linear(width, 10))
net = DDP(model, bucket_cap_mb=cap) if world > 1 else model
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
per = batch // world
mine = slice(rank * per, (rank + 1) * per)
x = torch.tensor(rng.standard_normal((batch, width)).astype(np.float32))[mine]
y = torch.tensor(rng.integers(0, 10, batch))[mine]
times = []
for i in range(3 + steps):
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    loss.item()
    times.append(time.perf_counter() - t0)
if rank == 0:
    print(json.dumps({"median": statistics.median(times[3:]), "best": min(times[3:])}))
if world > 1:
    dist.destroy_process_group()
"""


def child_env() -> dict:
    """The environment of a benchmark's training processes: this tree's jtorch, one thread
    each (the processes are pinned to a CPU each), no compile note."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return dict(
        os.environ,
        PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""),
        JTORCH_COMPILE_NOTE="0",
        OMP_NUM_THREADS="1",
    )


def _run(jtorch: bool, nproc: int, args, script: str, cwd: str) -> dict:
    env = child_env()
    cmd = [sys.executable] + (["-m", "jtorch"] if jtorch else [])
    if nproc > 1:
        cmd += ["-m", "torch.distributed.run", "--nproc-per-node", str(nproc)]
    cmd += [script, str(args.batch), str(args.width), str(args.steps), str(args.bucket_cap_mb)]
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", ",".join(str(c) for c in range(nproc))] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--bucket-cap-mb", type=float, default=None)
    args = p.parse_args()
    try:
        import torch  # noqa: F401

        frameworks = [("PyTorch", False), ("jtorch", True)]
    except ImportError:
        frameworks = [("jtorch", True)]
    print(
        f"MLP {args.width}-{args.width}-{args.width}-10, global batch {args.batch}, "
        f"SGD, DDP bucket_cap_mb={args.bucket_cap_mb}; median (best) of {args.steps} steps"
    )
    print(f"{'framework':<10}{'1 process, global batch':>28}{'2 processes + DDP':>24}")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "ddp_step.py")
        with open(script, "w") as f:
            f.write(_CHILD)
        for name, jt in frameworks:
            one, two = (_run(jt, n, args, script, tmp) for n in (1, 2))
            cells = [f"{1e3 * r['median']:.2f} ms ({1e3 * r['best']:.2f})" for r in (one, two)]
            print(f"{name:<10}{cells[0]:>28}{cells[1]:>24}")


if __name__ == "__main__":
    main()
