"""DataLoader worker start-up: time to the first batch with two workers, jtorch vs PyTorch.

    python bench/dataloader_workers.py [--repeat 5]

Each framework runs in its own process (jtorch through `python -m jtorch`); each loader is
new, so its workers start from nothing: `iter()` plus the first batch of a numpy dataset is
the start-up, the rest of the epoch is reported too. jtorch's default workers are forked;
`spawn` is jtorch's start method for datasets that run torch ops, shown for comparison, as
is a dataset that runs torch ops under the default (its first epoch starts over with spawned
workers). Reported: the best and the median of `--repeat` loaders, after one warm-up loader.
PyTorch is optional; its rows are left out without it.
"""

import argparse
import os
import subprocess
import sys

_CHILD = r"""
import json, statistics, sys, time
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

class Numpy(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return np.full(16, i, np.float32), i

class TorchOps(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return torch.full((16,), float(i)) * 2, i

def one(ds, context):
    t0 = time.perf_counter()
    it = iter(DataLoader(ds, batch_size=8, num_workers=2, multiprocessing_context=context))
    next(it)
    t1 = time.perf_counter()
    for _ in it:
        pass
    return t1 - t0, time.perf_counter() - t0

if __name__ == "__main__":
    kind, context, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
    context = None if context == "default" else context
    ds = Numpy() if kind == "numpy" else TorchOps()
    torch.ones(2).sum()
    one(ds, context)                     # warm-up: the parent's first-use compiles
    runs = [one(ds, context) for _ in range(repeat)]
    first = [r[0] for r in runs]
    print(json.dumps({"best": min(first), "median": statistics.median(first),
                      "epoch": statistics.median(r[1] for r in runs)}))
"""


def _run(jtorch: bool, kind: str, context: str, repeat: int) -> dict:
    import json
    import tempfile

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "workers.py")
        with open(script, "w") as f:
            f.write(_CHILD)
        cmd = (
            [sys.executable]
            + (["-m", "jtorch"] if jtorch else [])
            + [script, kind, context, str(repeat)]
        )
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    try:
        import torch  # noqa: F401

        have_torch = True
    except ImportError:
        have_torch = False
    rows = []
    if have_torch:
        rows.append(("PyTorch, numpy dataset (fork)", False, "numpy", "default"))
    rows += [
        ("jtorch, numpy dataset (default: fork)", True, "numpy", "default"),
        ("jtorch, numpy dataset (spawn)", True, "numpy", "spawn"),
        ("jtorch, torch-op dataset (default)", True, "torch", "default"),
    ]
    if have_torch:
        rows.append(("PyTorch, torch-op dataset (fork)", False, "torch", "default"))
    print(f"two workers, batch 8 of 64 samples; {args.repeat} loaders after a warm-up one")
    print(f"{'case':<40}{'first batch best':>18}{'median':>9}{'epoch':>9}")
    for name, jt, kind, context in rows:
        r = _run(jt, kind, context, args.repeat)
        print(f"{name:<40}{r['best']:>17.3f}s{r['median']:>8.3f}s{r['epoch']:>8.3f}s")


if __name__ == "__main__":
    main()
