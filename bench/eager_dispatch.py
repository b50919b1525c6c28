"""Eager dispatch cost per op: jtorch vs PyTorch vs bare jax.numpy, measured in one run.

    python bench/eager_dispatch.py [--repeat N]

Each case runs a small op many times on small inputs, so the time is dominated
by dispatch (Python + launching a compiled kernel), not by arithmetic. jax
results are blocked on, so asynchronous dispatch does not flatter jax or jtorch.
PyTorch is optional; its column is left blank without it.
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import jtorch

try:
    import torch
except ImportError:  # the oracle is optional here
    torch = None


def _time(fn, repeat):
    fn()
    fn()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeat):
            out = fn()
        if hasattr(out, "block_until_ready"):
            out.block_until_ready()
        elif hasattr(out, "_array"):
            out._array.block_until_ready()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best * 1e6


def cases():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    m = rng.standard_normal((64, 64)).astype(np.float32)
    v = rng.standard_normal((1000,)).astype(np.float32)
    ja, jb, jm, jv = (jnp.asarray(x) for x in (a, b, m, v))
    ta, tb, tm, tv = (jtorch.from_numpy(x) for x in (a, b, m, v))
    pa, pb, pm, pv = ((torch.from_numpy(x) for x in (a, b, m, v)) if torch else (None,) * 4)

    yield ("add (256x256)", lambda: ta + tb, lambda: pa + pb, lambda: ja + jb, 1)
    yield ("mul by scalar (1000)", lambda: tv * 2.5, lambda: pv * 2.5, lambda: jv * 2.5, 1)
    yield ("matmul (64x64)", lambda: tm @ tm, lambda: pm @ pm, lambda: jm @ jm, 1)
    yield ("sum (256x256)", lambda: ta.sum(), lambda: pa.sum(), lambda: ja.sum(), 1)
    yield ("sum(dim=1)", lambda: ta.sum(1), lambda: pa.sum(1), lambda: ja.sum(1), 1)
    yield ("chain: (x*2+1).exp().sum()", lambda: ((tv * 2 + 1).exp()).sum(),
           lambda: ((pv * 2 + 1).exp()).sum(), lambda: (jnp.exp(jv * 2 + 1)).sum(), 4)
    yield ("slice view + in-place add", lambda: ta[1:3].add_(1.0), lambda: pa[1:3].add_(1.0),
           lambda: ja.at[1:3].add(1.0), 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=300)
    args = p.parse_args()
    print(f"jax {jax.__version__} on {jax.default_backend()}; torch "
          f"{torch.__version__ if torch else '(not installed)'}")
    print(f"{'case':32s} {'jtorch us/op':>13s} {'torch us/op':>12s} {'jnp us/op':>10s} "
          f"{'jt/jnp':>7s} {'jt/torch':>9s}")
    for name, jt, pt, jx, n_ops in cases():
        t_jt = _time(jt, args.repeat) / n_ops
        t_jx = _time(jx, args.repeat) / n_ops
        t_pt = _time(pt, args.repeat) / n_ops if torch else float("nan")
        print(f"{name:32s} {t_jt:13.1f} {t_pt:12.1f} {t_jx:10.1f} {t_jt / t_jx:7.2f} "
              f"{t_jt / t_pt:9.2f}")


if __name__ == "__main__":
    main()
