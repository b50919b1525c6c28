"""A flax + optax training step with and without jtorch imported in the same process.

    python bench/jax_neighbours.py [--steps N]

jtorch switches on jax's x64 mode process-wide. This measures what that costs a flax user
whose step keeps float32 data (the usual way): each variant runs in its own process, pinned
to CPU core 0 with `taskset` where available, and prints the median step time and the dtype
of the loss. A variant that makes its inputs with `jnp.ones` (no dtype) shows the case that
does change: next to jtorch those inputs are float64.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
if sys.argv[1] == "with":
    import jtorch  # noqa: F401
import jax, jax.numpy as jnp, optax
from flax import nnx

class MLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(256, 512, rngs=rngs)
        self.l2 = nnx.Linear(512, 10, rngs=rngs)
    def __call__(self, x):
        return self.l2(jax.nn.relu(self.l1(x)))

model = MLP(nnx.Rngs(0))
opt = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
if sys.argv[2] == "float32":
    x = np.random.default_rng(0).standard_normal((128, 256)).astype(np.float32)
else:
    x = jnp.ones((128, 256))     # no dtype: follows jax's x64 mode
y = jnp.zeros((128, 10), jnp.float32)

@nnx.jit
def step(model, opt, x, y):
    loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
    opt.update(model, grads)
    return loss

loss = step(model, opt, x, y).block_until_ready()
times = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    step(model, opt, x, y).block_until_ready()
    times.append(time.perf_counter() - t)
print(json.dumps({"ms": 1e3 * sorted(times)[len(times) // 2], "loss_dtype": str(loss.dtype)}))
"""


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    args = p.parse_args()
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    env = dict(os.environ, OMP_NUM_THREADS="1")
    print(f"{'inputs':>10} {'jtorch':>8} {'step ms':>9} {'loss dtype':>11}")
    for inputs in ("float32", "default"):
        for variant in ("without", "with"):
            out = subprocess.run(
                pin + [sys.executable, "-c", CHILD, variant, inputs, str(args.steps)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            ).stdout
            r = json.loads(out.strip().splitlines()[-1])
            print(f"{inputs:>10} {variant:>8} {r['ms']:9.3f} {r['loss_dtype']:>11}")


if __name__ == "__main__":
    main()
