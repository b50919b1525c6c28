"""One epoch of a DataLoader: jtorch vs PyTorch, measured in one run.

    taskset -c 1 python bench/dataloader.py [--repeat N] [--n 60000] [--batch 256]
        [--clock cpu]

The task: a 60000x784 float32 `TensorDataset` with int64 labels, batch 256,
shuffle=True, num_workers=0, iterated once; every batch is blocked on, so
jax's asynchronous dispatch does not flatter jtorch. Also reported: the same
epoch without shuffling, and a map-style dataset returning numpy samples
(the path that stacks per-sample arrays). PyTorch (one thread) is optional; its
column is left blank without it. The first epoch of each loader is reported apart
(`first`): it pays jtorch's compiles, if any. `--clock cpu` counts the process's CPU
time instead of wall time (steadier on a loaded machine).
"""

import argparse
import os
import time

import numpy as np
from jtorch.utils.data import DataLoader as JDataLoader
from jtorch.utils.data import TensorDataset as JTensorDataset

import jtorch

try:
    import torch
    import torch.utils.data as tdata
except ImportError:  # the oracle is optional here
    torch = None


class _NumpySamples:
    """A map-style dataset whose samples are (numpy row, python int)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], int(self.y[i])


def _epoch_jtorch(loader):
    n = 0
    for xb, yb in loader:
        xb._array.block_until_ready()
        n += yb.shape[0]
    return n


def _epoch_torch(loader):
    n = 0
    for _, yb in loader:
        n += yb.shape[0]
    return n


def _best(fn, repeat, clock=time.perf_counter):
    """(first epoch, best later epoch) in seconds."""
    t0 = clock()
    fn()  # the first epoch: compiles jtorch's kernels for these shapes, if any
    first = clock() - t0
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return first, min(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--n", type=int, default=60000)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = p.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time

    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.n, 784), dtype=np.float32)
    y = rng.integers(0, 10, size=args.n).astype(np.int64)

    jds = JTensorDataset(jtorch.from_numpy(x), jtorch.from_numpy(y))
    tds = tdata.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)) if torch else None
    npds = _NumpySamples(x, y)

    cases = [
        ("TensorDataset, shuffle=True", jds, tds, dict(shuffle=True)),
        ("TensorDataset, shuffle=False", jds, tds, dict(shuffle=False)),
        ("numpy samples, shuffle=True", npds, npds, dict(shuffle=True)),
    ]
    if torch is not None:
        torch.set_num_threads(1)
    print(
        f"one epoch, {args.n}x784 float32, batch {args.batch}, num_workers=0 "
        f"(best of {args.repeat}; {args.clock} clock, load average {os.getloadavg()[0]:.1f})"
    )
    print(
        f"{'case':32s} {'jtorch':>10s} {'torch':>10s} {'jtorch/torch':>13s} "
        f"{'first: jtorch':>14s} {'torch':>9s}"
    )
    for name, jd, td, kw in cases:
        jl = JDataLoader(jd, batch_size=args.batch, **kw)
        fj, tj = _best(lambda: _epoch_jtorch(jl), args.repeat, clock)
        if torch is not None:
            tl = tdata.DataLoader(td, batch_size=args.batch, **kw)
            ft, tt = _best(lambda: _epoch_torch(tl), args.repeat, clock)
            print(
                f"{name:32s} {tj * 1e3:8.1f}ms {tt * 1e3:8.1f}ms {tj / tt:12.2f}x "
                f"{fj * 1e3:12.1f}ms {ft * 1e3:7.1f}ms"
            )
        else:
            print(f"{name:32s} {tj * 1e3:8.1f}ms {'':>10s} {'':>13s} {fj * 1e3:12.1f}ms")


if __name__ == "__main__":
    main()
