"""One epoch of a DataLoader: jtorch vs PyTorch, measured in one run.

    python bench/dataloader.py [--repeat N] [--n 60000] [--batch 256]

The task: a 60000x784 float32 `TensorDataset` with int64 labels, batch 256,
shuffle=True, num_workers=0, iterated once; every batch is blocked on, so
jax's asynchronous dispatch does not flatter jtorch. Also reported: the same
epoch without shuffling, and a map-style dataset returning numpy samples
(the path that stacks per-sample arrays). PyTorch is optional; its column is
left blank without it.
"""

import argparse
import time

import numpy as np

import jtorch
from jtorch.utils.data import DataLoader as JDataLoader
from jtorch.utils.data import TensorDataset as JTensorDataset

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


def _best(fn, repeat):
    fn()  # warm-up: compiles jtorch's kernels for these shapes
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--n", type=int, default=60000)
    p.add_argument("--batch", type=int, default=256)
    args = p.parse_args()

    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.n, 784), dtype=np.float32)
    y = rng.integers(0, 10, size=args.n).astype(np.int64)

    jds = JTensorDataset(jtorch.from_numpy(x), jtorch.from_numpy(y))
    tds = tdata.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)) if torch else None
    npds = _NumpySamples(x, y)

    cases = [
        ("TensorDataset, shuffle=True", jds, tds, dict(shuffle=True)),
        ("TensorDataset, shuffle=False", jds, tds, dict(shuffle=False)),
        ("numpy samples, shuffle=True", npds, npds,
         dict(shuffle=True)),
    ]
    print(f"one epoch, {args.n}x784 float32, batch {args.batch}, num_workers=0 "
          f"(best of {args.repeat})")
    print(f"{'case':32s} {'jtorch':>10s} {'torch':>10s} {'torch/jtorch':>13s}")
    for name, jd, td, kw in cases:
        jl = JDataLoader(jd, batch_size=args.batch, **kw)
        tj = _best(lambda: _epoch_jtorch(jl), args.repeat)
        if torch is not None:
            tl = tdata.DataLoader(td, batch_size=args.batch, **kw)
            tt = _best(lambda: _epoch_torch(tl), args.repeat)
            print(f"{name:32s} {tj * 1e3:8.1f}ms {tt * 1e3:8.1f}ms {tt / tj:12.2f}x")
        else:
            print(f"{name:32s} {tj * 1e3:8.1f}ms {'':>10s}")


if __name__ == "__main__":
    main()
