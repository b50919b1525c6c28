"""Loading a large checkpoint: jtorch.load vs torch.load, time and peak memory, in one run.

    python bench/serialization.py [--mib 1024] [--tensors 200] [--repeat 3]

The checkpoint is a state dict of float32 tensors of mixed sizes (as a transformer's), about
`--mib` MiB, written once by PyTorch (by jtorch when PyTorch is not installed) into a
temporary directory and read once beforehand, so every load reads from the page cache.
Each load runs in a fresh process: the time is `load()` alone (best of `--repeat`), the
memory is the peak resident set of that process (VmHWM) minus its resident set just before
`load()`. "touched" variants also read every element after loading, as numpy arrays (for
mmap, that is when the file is read). PyTorch is optional; its rows are left out without it.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, sys, time
lib, path, mmap, touch = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
if lib == "torch":
    import torch
else:
    import jtorch as torch
torch.zeros(4).sum()                         # backend start-up is not part of the load
def status(field):
    # VmHWM, not ru_maxrss: ru_maxrss carries the parent's size across fork + exec
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))
before = status("VmRSS:")
t0 = time.perf_counter()
sd = torch.load(path, mmap=mmap)
if touch:    # read every element once, on the host, the same way for both
    total = 0.0
    for v in sd.values():
        total += float(v.numpy().sum())
elapsed = time.perf_counter() - t0
peak = status("VmHWM:")
print(json.dumps({"s": elapsed, "peak_mib": (peak - before) / 2**20,
                  "n": len(sd), "mib": sum(v.numel() * 4 for v in sd.values()) / 2**20}))
"""


def _shapes(mib: int, n: int) -> list:
    """`n` 2-d shapes whose float32 sizes add up to about `mib` MiB, small and large mixed."""
    weights = [1 + (i % 7) ** 2 for i in range(n)]
    per = mib * 2**20 / 4 / sum(weights)
    out = []
    for w in weights:
        elems = max(1, int(w * per))
        cols = 1024 if elems >= 1024 else elems
        out.append((max(1, elems // cols), cols))
    return out


def _write(path: str, mib: int, n: int) -> str:
    import numpy as np

    try:
        import torch as lib

        writer = "PyTorch"
    except ImportError:
        import jtorch as lib

        writer = "jtorch"
    rng = np.random.default_rng(0)
    sd = {
        f"layer{i}.weight": lib.from_numpy(rng.standard_normal(s, dtype=np.float32))
        for i, s in enumerate(_shapes(mib, n))
    }
    lib.save(sd, path)
    return writer


def _run(lib: str, path: str, mmap: bool, touch: bool) -> dict:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, lib, path, str(int(mmap)), str(int(touch))],
        capture_output=True,
        text=True,
        env=env,
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mib", type=int, default=1024)
    p.add_argument("--tensors", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    try:
        import torch  # noqa: F401

        libs = ["torch", "jtorch"]
    except ImportError:
        libs = ["jtorch"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoint.pt")
        writer = _write(path, args.mib, args.tensors)
        size = os.path.getsize(path)
        with open(path, "rb") as f:  # into the page cache
            while f.read(1 << 24):
                pass
        print(
            f"checkpoint: {size / 2**20:.0f} MiB, {args.tensors} tensors, written by "
            f"{writer}; best of {args.repeat} fresh processes each"
        )
        print(
            f"{'load':<28}{'torch s':>9}{'jtorch s':>10}{'ratio':>7}"
            f"{'torch MiB':>11}{'jtorch MiB':>12}{'ratio':>7}"
        )
        for mmap in (False, True):
            for touch in (False, True):
                name = ("mmap=True" if mmap else "default") + (", touched" if touch else "")
                best = {}
                for lib in libs:
                    runs = [_run(lib, path, mmap, touch) for _ in range(args.repeat)]
                    best[lib] = (min(r["s"] for r in runs), min(r["peak_mib"] for r in runs))
                j = best["jtorch"]
                t = best.get("torch")
                if t is None:
                    print(f"{name:<28}{'':>9}{j[0]:>10.3f}{'':>7}{'':>11}{j[1]:>12.0f}")
                else:
                    print(
                        f"{name:<28}{t[0]:>9.3f}{j[0]:>10.3f}{j[0] / t[0]:>7.2f}"
                        f"{t[1]:>11.0f}{j[1]:>12.0f}{j[1] / max(t[1], 1):>7.2f}"
                    )


if __name__ == "__main__":
    main()
