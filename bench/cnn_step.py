"""A small CNN's Adam training step: jtorch eager, `jtorch.compile`, flax+optax `jax.jit`.

    taskset -c 1 python bench/cnn_step.py [--batch 128] [--steps 20] [--clock cpu]

The model (conv 1->32 3x3, relu, maxpool 2; conv 32->64 3x3, relu, maxpool 2;
linear 1600->128, relu; linear 128->10; cross-entropy) on 28x28 inputs, with the same
initial weights (from numpy) in every column. Adam, lr 1e-3. Each column is the median
step time after warm-up; every step is blocked on. The losses after the timed steps are
printed too, so the columns are seen to compute the same thing. PyTorch eager is an
optional column (blank without torch). `--clock cpu` counts the process's CPU time
(all its threads) instead of wall time: steadier on a loaded machine.
"""

import argparse
import os
import time

import numpy as np

SHAPES = {
    "c1w": (32, 1, 3, 3),
    "c1b": (32,),
    "c2w": (64, 32, 3, 3),
    "c2b": (64,),
    "f1w": (128, 1600),
    "f1b": (128,),
    "f2w": (10, 128),
    "f2b": (10,),
}


def _weights():
    rng = np.random.default_rng(0)
    return {
        k: (rng.standard_normal(s) * (2.0 / np.prod(s[1:] or (1,))) ** 0.5 * 0.5).astype(np.float32)
        for k, s in SHAPES.items()
    }


def _data(batch):
    rng = np.random.default_rng(1)
    return (
        rng.standard_normal((batch, 1, 28, 28)).astype(np.float32),
        rng.integers(0, 10, batch).astype(np.int64),
    )


def _median(step, steps, clock):
    times = []
    for _ in range(steps):
        t0 = clock()
        step()
        times.append(clock() - t0)
    return sorted(times)[len(times) // 2]


def _torch_like(torch, compiled):
    """The step in PyTorch's API: run by jtorch (eager or compiled) or by PyTorch."""
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = nn.Conv2d(1, 32, 3), nn.Conv2d(32, 64, 3)
            self.f1, self.f2 = nn.Linear(1600, 128), nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.c1(x)), 2)
            x = F.max_pool2d(F.relu(self.c2(x)), 2)
            return self.f2(F.relu(self.f1(x.flatten(1))))

    net = Net()
    w = _weights()
    with torch.no_grad():
        for name, mod in (("c1", net.c1), ("c2", net.c2), ("f1", net.f1), ("f2", net.f2)):
            mod.weight.copy_(torch.from_numpy(w[name + "w"]))
            mod.bias.copy_(torch.from_numpy(w[name + "b"]))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss

    return torch.compile(step) if compiled else step


def _jtorch(batch, compiled):
    import jtorch

    step = _torch_like(jtorch, compiled)
    x, y = (jtorch.from_numpy(a) for a in _data(batch))
    losses = []

    def run():
        loss = step(x, y)
        loss._array.block_until_ready()
        losses.append(loss)

    return run, lambda: float(losses[-1])


def _torch(batch):
    import torch

    step = _torch_like(torch, False)
    x, y = (torch.from_numpy(a) for a in _data(batch))
    losses = []
    return (lambda: losses.append(step(x, y))), lambda: float(losses[-1])


def _flax(batch):
    import jax
    import jax.numpy as jnp
    import optax
    from flax import linen

    class Net(linen.Module):
        @linen.compact
        def __call__(self, x):  # NHWC, flax's layout
            x = linen.max_pool(
                jax.nn.relu(linen.Conv(32, (3, 3), padding="VALID")(x)), (2, 2), (2, 2)
            )
            x = linen.max_pool(
                jax.nn.relu(linen.Conv(64, (3, 3), padding="VALID")(x)), (2, 2), (2, 2)
            )
            x = x.transpose(0, 3, 1, 2).reshape(x.shape[0], -1)  # PyTorch's flatten order
            x = jax.nn.relu(linen.Dense(128)(x))
            return linen.Dense(10)(x)

    w = _weights()
    params = {
        "params": {
            "Conv_0": {"kernel": w["c1w"].transpose(2, 3, 1, 0), "bias": w["c1b"]},
            "Conv_1": {"kernel": w["c2w"].transpose(2, 3, 1, 0), "bias": w["c2b"]},
            "Dense_0": {"kernel": w["f1w"].T, "bias": w["f1b"]},
            "Dense_1": {"kernel": w["f2w"].T, "bias": w["f2b"]},
        }
    }
    params = jax.tree.map(jnp.asarray, params)
    net = Net()
    tx = optax.adam(1e-3)
    state = [params, tx.init(params)]
    xn, yn = _data(batch)
    x, y = jnp.asarray(xn.transpose(0, 2, 3, 1)), jnp.asarray(yn)

    @jax.jit
    def step(params, opt_state, x, y):
        def loss_fn(p):
            logits = net.apply(p, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []

    def run():
        state[0], state[1], loss = step(state[0], state[1], x, y)
        loss.block_until_ready()
        losses.append(loss)

    return run, lambda: float(losses[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = p.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    cols = [
        ("jtorch.compile", lambda: _jtorch(args.batch, True)),
        ("jtorch eager", lambda: _jtorch(args.batch, False)),
        ("flax+optax jax.jit", lambda: _flax(args.batch)),
    ]
    try:
        import torch

        torch.set_num_threads(1)
        cols.append(("PyTorch eager", lambda: _torch(args.batch)))
    except ImportError:  # the oracle is optional here
        pass
    made = [(name, *make()) for name, make in cols]
    for _, run, _ in made:
        for _ in range(args.warmup):
            run()
    times = {name: [] for name, _, _ in made}
    # Interleaved rounds: a load change on this shared machine hits every column alike.
    for _ in range(3):
        for name, run, _ in made:
            times[name].append(_median(run, max(args.steps // 3, 1), clock))
    ref = min(times["flax+optax jax.jit"])
    print(
        f"CNN Adam step, batch {args.batch} (ms per step, best of 3 interleaved medians; "
        f"{args.clock} clock, load average {os.getloadavg()[0]:.1f})"
    )
    for name, _, loss in made:
        t = min(times[name])
        print(f"  {name:20s} {t * 1e3:8.2f}   x{t / ref:5.2f} of flax   loss {loss():.5f}")


if __name__ == "__main__":
    main()
