"""Optimizer step cost: jtorch Adam vs PyTorch foreach Adam, measured in one run.

    python bench/optim.py [--repeat N] [--params N]

An Adam step over `--params` parameters of mixed shapes (cycling through
(256, 256), (256,), (64, 3, 3, 3), (10, 256)); gradients are set once, and only
`opt.step()` is timed. jtorch's parameters are blocked on after each timed
block, so asynchronous dispatch does not flatter it. PyTorch is optional.
"""

import argparse
import time

import numpy as np

import jtorch

try:
    import torch
except ImportError:  # the oracle is optional here
    torch = None

SHAPES = [(256, 256), (256,), (64, 3, 3, 3), (10, 256)]


def _time(step, block, repeat):
    step()
    step()
    block()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeat):
            step()
        block()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best * 1e3


def _make(lib, arrays, grads):
    params = [lib.nn.Parameter(lib.tensor(a)) for a in arrays]
    for p, g in zip(params, grads):
        p.grad = lib.tensor(g)
    return params


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--params", type=int, default=100)
    ap.add_argument(
        "--torch-threads",
        type=int,
        default=0,
        help="torch.set_num_threads for PyTorch's run (0: leave its default); on "
        "a loaded small machine OpenMP threads can slow PyTorch badly",
    )
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    shapes = [SHAPES[i % len(SHAPES)] for i in range(args.params)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    numel = sum(a.size for a in arrays)
    if torch is not None and args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    print(f"Adam step, {args.params} params, {numel / 1e6:.2f}M elements (ms per step, best of 5)")

    rows = []
    for name, kwargs in [
        ("Adam", {}),
        ("Adam amsgrad+wd", dict(amsgrad=True, weight_decay=0.1)),
        ("AdamW", {}),
    ]:
        cls = name.split()[0]
        jp = _make(jtorch, arrays, grads)
        jopt = getattr(jtorch.optim, cls)(jp, lr=1e-3, **kwargs)
        t_j = _time(jopt.step, lambda: [p._array.block_until_ready() for p in jp], args.repeat)
        t_t = None
        if torch is not None:
            tp = _make(torch, arrays, grads)
            topt = getattr(torch.optim, cls)(tp, lr=1e-3, foreach=True, **kwargs)
            t_t = _time(topt.step, lambda: None, args.repeat)
        rows.append((name, t_j, t_t))
    threads = f" ({torch.get_num_threads()} threads)" if torch is not None else ""
    print(f"PyTorch: foreach=True{threads}")
    print(f"{'case':<20}{'jtorch':>10}{'torch':>10}{'torch/jtorch':>14}")
    for name, t_j, t_t in rows:
        tt = f"{t_t:10.3f}" if t_t is not None else f"{'':>10}"
        ratio = f"{t_t / t_j:14.2f}" if t_t is not None else ""
        print(f"{name:<20}{t_j:10.3f}{tt}{ratio}")


if __name__ == "__main__":
    main()
