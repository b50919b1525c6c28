"""Eager forward+backward of a 3-layer MLP: jtorch vs PyTorch vs jax.grad, in one run.

    taskset -c 1 python bench/autograd_mlp.py [--batch 32] [--width 64] [--repeat 200]
        [--clock cpu]

The same model (linear-relu-linear-relu-linear, cross-entropy) and data in each
column. A step is `loss = f(params); loss.backward()` with grads cleared each
step as a training loop does (`set_to_none`). Columns:

- jtorch eager: the tape (one compiled kernel per op, the backward fused into
  one compiled call once the graph has come back `_fused._AFTER` times: warmed up past
  that, so the timed steps are a long training loop's);
- PyTorch eager (optional; blank without torch);
- jax.grad un-jitted: what eager autodiff costs in plain JAX;
- jax.jit(jax.grad): the compiled limit, for reference.

jtorch and PyTorch are timed in interleaved rounds (best round each), so a load change
on a shared machine hits both alike; `--clock cpu` counts the process's CPU time instead
of wall time (steadier on a loaded machine).
"""

import argparse
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

import jtorch
import jtorch.nn.functional as JF
from jtorch.autograd import _fused

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the oracle is optional here
    torch = None


def _best(fns, repeat, clock=time.perf_counter, rounds=5):
    """Best per-call time of each function (us), over interleaved rounds."""
    for fn in fns:
        for _ in range(3):
            fn()
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = clock()
            for _ in range(repeat):
                fn()
            best[i] = min(best[i], (clock() - t0) / repeat)
    return [b * 1e6 for b in best]


def _init(batch, width, classes=10):
    rng = np.random.default_rng(0)
    shapes = [(width, width), (width,), (width, width), (width,), (classes, width), (classes,)]
    params = [(rng.standard_normal(s) * 0.1).astype(np.float32) for s in shapes]
    x = rng.standard_normal((batch, width)).astype(np.float32)
    y = rng.integers(0, classes, batch)
    return params, x, y


def jtorch_step(params, x, y):
    ps = [jtorch.from_numpy(p.copy()).requires_grad_() for p in params]
    tx, ty = jtorch.from_numpy(x), jtorch.from_numpy(y)

    def step():
        for p in ps:
            p.grad = None
        h = JF.relu(JF.linear(tx, ps[0], ps[1]))
        h = JF.relu(JF.linear(h, ps[2], ps[3]))
        loss = JF.cross_entropy(JF.linear(h, ps[4], ps[5]), ty)
        loss.backward()
        ps[-1].grad._array.block_until_ready()

    for _ in range(_fused._AFTER):
        step()
    for _, future in list(_fused._pending.values()):
        future.result()
    return step


def torch_step(params, x, y):
    ps = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def step():
        for p in ps:
            p.grad = None
        h = TF.relu(TF.linear(tx, ps[0], ps[1]))
        h = TF.relu(TF.linear(h, ps[2], ps[3]))
        loss = TF.cross_entropy(TF.linear(h, ps[4], ps[5]), ty)
        loss.backward()

    return step


def _jax_loss(ps, x, y):
    h = jax.nn.relu(x @ ps[0].T + ps[1])
    h = jax.nn.relu(h @ ps[2].T + ps[3])
    logits = h @ ps[4].T + ps[5]
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], 1))


def jax_steps(params, x, y):
    ps = [jnp.asarray(p) for p in params]
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    grad = jax.grad(_jax_loss)
    jitted = jax.jit(grad)

    def eager():
        jax.block_until_ready(grad(ps, jx, jy))

    def compiled():
        jax.block_until_ready(jitted(ps, jx, jy))

    return eager, compiled


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="PyTorch intra-op threads (default 1: the same core as jtorch)",
    )
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    a = ap.parse_args()
    clock = time.perf_counter if a.clock == "wall" else time.process_time
    if torch is not None and a.torch_threads:
        torch.set_num_threads(a.torch_threads)
    params, x, y = _init(a.batch, a.width)
    fns = [jtorch_step(params, x, y)] + ([torch_step(params, x, y)] if torch else [])
    t = _best(fns, a.repeat, clock)
    t_jt, t_pt = t[0], (t[1] if torch else None)
    eager, compiled = jax_steps(params, x, y)
    t_jg = _best([eager], max(a.repeat // 20, 5), clock)[0]
    t_jj = _best([compiled], a.repeat, clock)[0]
    print(f"{a.clock} clock, load average {os.getloadavg()[0]:.1f}")
    print(f"3-layer MLP forward+backward, batch {a.batch}, width {a.width} (us per step)")
    print(f"  jtorch eager          {t_jt:9.1f}")
    if t_pt is not None:
        print(f"  PyTorch eager         {t_pt:9.1f}   jtorch/PyTorch = {t_jt / t_pt:.2f}x")
    print(f"  jax.grad (un-jitted)  {t_jg:9.1f}   jtorch/jax.grad = {t_jt / t_jg:.2f}x")
    print(f"  jax.jit(jax.grad)     {t_jj:9.1f}   jtorch/jit = {t_jt / t_jj:.2f}x")


if __name__ == "__main__":
    main()
