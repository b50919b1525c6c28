"""Eager dispatch cost per op: jtorch vs PyTorch vs jax, measured in one run.

    taskset -c 1 python bench/eager_dispatch.py [--repeat N] [--clock cpu]

Each case runs a small op many times on small inputs, so the time is dominated
by dispatch (Python + launching a compiled kernel), not by arithmetic. jax
results are blocked on, so asynchronous dispatch does not flatter jax or jtorch.
Columns: jtorch; PyTorch (optional, one thread; blank without it); `jnp`, jax's own
eager op dispatch; `jit`, the same computation as one `jax.jit`-compiled function
called with arrays (jax's C++ fast path: the floor an eager op call can reach).
The columns of a case are timed in interleaved rounds (best round each), so a load
change on a shared machine hits them alike; `--clock cpu` counts the process's CPU
time instead of wall time (steadier on a loaded machine).
"""

import argparse
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

import jtorch

try:
    import torch
except ImportError:  # the oracle is optional here
    torch = None


def _block(out):
    if hasattr(out, "block_until_ready"):
        out.block_until_ready()
    elif hasattr(out, "_array"):
        out._array.block_until_ready()


def _times(fns, repeat, clock, rounds=7):
    """Best per-call time of each function (us), over interleaved rounds."""
    for fn in fns:
        for _ in range(3):
            _block(fn())
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = clock()
            for _ in range(repeat):
                out = fn()
            _block(out)
            best[i] = min(best[i], (clock() - t0) / repeat)
    return [b * 1e6 for b in best]


def cases():
    """(name, jtorch, PyTorch, jnp, jitted jax, ops per call)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    s = rng.standard_normal((4, 4)).astype(np.float32)
    m = rng.standard_normal((64, 64)).astype(np.float32)
    v = rng.standard_normal((1000,)).astype(np.float32)
    ja, jb, js, jm, jv = (jnp.asarray(x) for x in (a, b, s, m, v))
    ta, tb, ts, tm, tv = (jtorch.from_numpy(x.copy()) for x in (a, b, s, m, v))
    pa, pb, ps, pm, pv = (
        (torch.from_numpy(x.copy()) for x in (a, b, s, m, v)) if torch else (None,) * 5
    )
    jit = jax.jit

    def chain(x, y):  # ten small ops
        x = x * 2
        x = x + 1
        x = x.exp() if hasattr(x, "exp") else jnp.exp(x)
        x = x - y
        x = x * y
        x = abs(x)
        x = x.sqrt() if hasattr(x, "sqrt") else jnp.sqrt(x)
        x = x + y
        x = -x
        return x.sin() if hasattr(x, "sin") else jnp.sin(x)

    yield (
        "add (4x4)",
        lambda: ts.add(ts),
        lambda: ps.add(ps),
        lambda: js + js,
        lambda f=jit(jnp.add): f(js, js),
        1,
    )
    yield (
        "matmul (64x64)",
        lambda: tm @ tm,
        lambda: pm @ pm,
        lambda: jm @ jm,
        lambda f=jit(jnp.matmul): f(jm, jm),
        1,
    )
    yield (
        "chain of 10 ops (4x4), per op",
        lambda: chain(ts, ts),
        lambda: chain(ps, ps),
        lambda: chain(js, js),
        lambda f=jit(lambda x, y: x * 2): [f(js, js) for _ in range(10)][-1],
        10,
    )
    yield (
        "add (256x256)",
        lambda: ta + tb,
        lambda: pa + pb,
        lambda: ja + jb,
        lambda f=jit(jnp.add): f(ja, jb),
        1,
    )
    yield (
        "mul by scalar (1000)",
        lambda: tv * 2.5,
        lambda: pv * 2.5,
        lambda: jv * 2.5,
        lambda f=jit(lambda x: x * 2.5): f(jv),
        1,
    )
    yield (
        "sum (256x256)",
        lambda: ta.sum(),
        lambda: pa.sum(),
        lambda: ja.sum(),
        lambda f=jit(jnp.sum): f(ja),
        1,
    )
    yield (
        "sum(dim=1)",
        lambda: ta.sum(1),
        lambda: pa.sum(1),
        lambda: ja.sum(1),
        lambda f=jit(lambda x: x.sum(1)): f(ja),
        1,
    )
    yield (
        "chain: (x*2+1).exp().sum()",
        lambda: ((tv * 2 + 1).exp()).sum(),
        lambda: ((pv * 2 + 1).exp()).sum(),
        lambda: (jnp.exp(jv * 2 + 1)).sum(),
        lambda f=jit(lambda x: jnp.exp(x * 2 + 1).sum()): f(jv),
        4,
    )
    yield (
        "slice view + in-place add",
        lambda: ta[1:3].add_(1.0),
        lambda: pa[1:3].add_(1.0),
        lambda: ja.at[1:3].add(1.0),
        lambda f=jit(lambda x: x.at[1:3].add(1.0)): f(ja),
        1,
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=300)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = p.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    if torch is not None:
        torch.set_num_threads(1)
    print(
        f"jax {jax.__version__} on {jax.default_backend()}; torch "
        f"{torch.__version__ if torch else '(not installed)'}; {args.clock} clock; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'case':32s} {'jtorch us/op':>13s} {'torch us/op':>12s} {'jnp us/op':>10s} "
        f"{'jit us/op':>10s} {'jt/jit':>7s} {'jt/torch':>9s}"
    )
    for name, jt, pt, jx, jj, n_ops in cases():
        fns = [jt, jx, jj] + ([pt] if torch else [])
        t = [x / n_ops for x in _times(fns, args.repeat, clock)]
        t_pt = t[3] if torch else float("nan")
        print(
            f"{name:32s} {t[0]:13.1f} {t_pt:12.1f} {t[1]:10.1f} {t[2]:10.1f} "
            f"{t[0] / t[2]:7.2f} {t[0] / t_pt:9.2f}"
        )


if __name__ == "__main__":
    main()
