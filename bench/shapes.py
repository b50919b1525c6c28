"""What a new shape costs: a variable-length training step, and indexing/creation at new sizes.

    python bench/shapes.py [--n 24] [--columns eager,compile,torch,jax] [--cpu 1]
    python bench/shapes.py --flat 2000 [--tiny]   # jtorch eager over 2000 new lengths: memory
    python bench/shapes.py --examples         # examples/*.py: PyTorch, jtorch 1st/2nd run, JAX
    python bench/shapes.py --generate         # programs per new length of gpt_sdpa's generate

A training step (Embedding, Linear-GELU-Linear, LayerNorm, head, cross-entropy,
AdamW) on a batch of shape `(4, L)` for L = 1..N: every step meets a shape it has
not seen. Columns, each in its own process pinned to one CPU (`taskset`), so
their memory is their own:

- jtorch eager: the tape, one compiled kernel per op;
- jtorch.compile: the whole step as one program per shape;
- PyTorch eager (blank without torch);
- jax.jit: the same step written in JAX and compiled whole, per shape: the cost
  of compiling one program per new shape, the target for jtorch eager.

Per column: seconds per new shape (all of them, and the second half alone, once
the shape-independent kernels exist), RSS and `/proc/self/maps` entries at the
end, and their growth per new shape over the second half; then the time of the
step at L = N again (its second sighting) and of further steps at that shape.
The micro table times, per call, operations at new integer positions and
sizes (after the first two, which compile what the others may reuse):
`bool(c[i])`, `x[i] = v`, `x[i:i+8]`, `full((k,))`, `zeros`, `arange`, `randn`.

`--examples` times each script in `examples/` under PyTorch and under
`python -m jtorch`, twice, with a fresh persistent cache (the second run reads
what the first compiled): wall time, and CPU time (user + system, steadier when
other processes share the machine). Where `bench/examples_jax/` holds the same
program written directly in JAX (its twin), it times the twin's first run too
(jax's persistent cache off): what any XLA-based approach pays on this machine,
and jtorch's first run over it (`1st/JAX`).

`--generate` runs `examples/gpt_sdpa.py` under jtorch (persistent cache off), then
counts the XLA programs its `generate` makes per new sequence length, past the lengths
the script met (its context window is 16 tokens: longer sequences only grow `cat`).

This machine's cores are shared: compare the columns' ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time

VOCAB, D, HIDDEN, BATCH = 100, 64, 256, 4


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


def _maps() -> int:
    with open("/proc/self/maps", "rb") as f:
        return sum(1 for _ in f)


def _weights():
    import numpy as np

    rng = np.random.default_rng(0)

    def w(*s, scale=0.05):
        return (rng.standard_normal(s) * scale).astype(np.float32)

    return {
        "emb": w(VOCAB, D, scale=1.0),
        "w1": w(HIDDEN, D),
        "b1": w(HIDDEN),
        "w2": w(D, HIDDEN),
        "b2": w(D),
        "ln_w": np.ones(D, np.float32),
        "ln_b": np.zeros(D, np.float32),
        "head": w(VOCAB, D),
        "head_b": w(VOCAB),
    }


def _batch(length: int):
    import numpy as np

    rng = np.random.default_rng(length)
    x = rng.integers(0, VOCAB, (BATCH, length))
    y = rng.integers(0, VOCAB, (BATCH, length))
    return x, y


# ---------------------------------------------------------------------------
# The step, per framework


def _torch_like_step(torch, compiled: bool):
    """The step written against the torch API (`torch` is PyTorch or jtorch)."""
    nn, F = torch.nn, torch.nn.functional
    weights = _weights()

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, D)
            self.fc1 = nn.Linear(D, HIDDEN)
            self.fc2 = nn.Linear(HIDDEN, D)
            self.ln = nn.LayerNorm(D)
            self.head = nn.Linear(D, VOCAB)

        def forward(self, x):
            h = self.emb(x)
            h = h + self.fc2(F.gelu(self.fc1(h)))
            return self.head(self.ln(h))

    model = Model()
    with torch.no_grad():
        model.emb.weight.copy_(torch.from_numpy(weights["emb"]))
        model.fc1.weight.copy_(torch.from_numpy(weights["w1"]))
        model.fc1.bias.copy_(torch.from_numpy(weights["b1"]))
        model.fc2.weight.copy_(torch.from_numpy(weights["w2"]))
        model.fc2.bias.copy_(torch.from_numpy(weights["b2"]))
        model.head.weight.copy_(torch.from_numpy(weights["head"]))
        model.head.bias.copy_(torch.from_numpy(weights["head_b"]))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(x, y):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    run = torch.compile(step) if compiled else step

    def call(length):
        x, y = _batch(length)
        return float(run(torch.from_numpy(x), torch.from_numpy(y)))

    return call


def _jax_step():
    import jax
    import jax.numpy as jnp

    params = {k: jnp.asarray(v) for k, v in _weights().items()}
    state = {
        "m": jax.tree.map(jnp.zeros_like, params),
        "v": jax.tree.map(jnp.zeros_like, params),
        "t": jnp.zeros((), jnp.int32),
    }

    def loss_fn(p, x, y):
        h = p["emb"][x]
        h = h + jax.nn.gelu(h @ p["w1"].T + p["b1"], approximate=False) @ p["w2"].T + p["b2"]
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        h = (h - mu) / jnp.sqrt(var + 1e-5) * p["ln_w"] + p["ln_b"]
        logits = (h @ p["head"].T + p["head_b"]).reshape(-1, VOCAB)
        logp = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(logp, y.reshape(-1, 1), 1).mean()

    @jax.jit
    def step(p, s, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        t = s["t"] + 1
        m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, s["m"], g)
        v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, s["v"], g)
        lr, eps, wd = 1e-3, 1e-8, 1e-2

        def upd(p, m, v):
            p = p * (1 - lr * wd)
            mh = m / (1 - 0.9**t)
            vh = v / (1 - 0.999**t)
            return p - lr * mh / (jnp.sqrt(vh) + eps)

        return jax.tree.map(upd, p, m, v), {"m": m, "v": v, "t": t}, loss

    box = [params, state]

    def call(length):
        x, y = _batch(length)
        box[0], box[1], loss = step(box[0], box[1], jnp.asarray(x), jnp.asarray(y))
        return float(loss)

    return call


def _make(column: str):
    if column == "eager":
        import jtorch

        return _torch_like_step(jtorch, False)
    if column == "compile":
        import jtorch

        return _torch_like_step(jtorch, True)
    if column == "torch":
        import torch

        torch.set_num_threads(1)
        return _torch_like_step(torch, False)
    if column == "jax":
        return _jax_step()
    raise ValueError(column)


# ---------------------------------------------------------------------------
# Micro: new positions and sizes


def _micro(column: str, n: int) -> dict:
    if column == "torch":
        import torch

        torch.set_num_threads(1)
    else:
        import jtorch as torch
    out = {}
    c = torch.zeros(n + 1) > 0
    x = torch.zeros(n + 8, 4)
    v = torch.ones(4)

    def per_call(fn, count):
        # The first positions or sizes compile what the rest reuse: timed apart. A program
        # made later (jtorch: when a view's shape has come back 16 times) counts in the rest;
        # "all" is the mean over every call, the first two included.
        t0 = time.perf_counter()
        fn(0)
        fn(1)
        t1 = time.perf_counter()
        for i in range(2, count):
            fn(i)
        t2 = time.perf_counter()
        return (t2 - t1) / (count - 2) * 1e3, (t2 - t0) / count * 1e3

    out["bool(c[i]) ms"] = per_call(lambda i: bool(c[i]), n)
    out["x[i] = v ms"] = per_call(lambda i: x.__setitem__(i, v), n)
    out["x[i:i+8].sum() ms"] = per_call(lambda i: float(x[i : i + 8].sum()), n)
    out["full((k,)) ms"] = per_call(lambda i: torch.full((i + 1,), 1.5), n)
    out["zeros(k, 3) ms"] = per_call(lambda i: torch.zeros(i + 1, 3), n)
    out["arange(k) ms"] = per_call(lambda i: torch.arange(i + 1), n)
    out["randn(k) ms"] = per_call(lambda i: torch.randn(i + 1), n)
    return out


# ---------------------------------------------------------------------------
# Running


def _worker(column: str, n: int, repeat: int, micro: int) -> dict:
    t_import = time.perf_counter()
    call = _make(column)
    setup = time.perf_counter() - t_import
    times, rss, maps = [], [], []
    for length in range(1, n + 1):
        t0 = time.perf_counter()
        call(length)
        times.append(time.perf_counter() - t0)
        rss.append(_rss_mib())
        maps.append(_maps())
    t0 = time.perf_counter()
    call(n)
    second = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(repeat):
        call(n)
    seen = (time.perf_counter() - t0) / max(repeat, 1)
    half = n // 2
    res = {
        "column": column,
        "setup_s": setup,
        "per_shape_s": sum(times) / n,
        "per_shape_2nd_half_s": sum(times[half:]) / (n - half),
        "first_s": times[0],
        "second_s": second,
        "seen_shape_ms": seen * 1e3,
        "rss_mib": rss[-1],
        "maps": maps[-1],
        "rss_per_shape_mib": (rss[-1] - rss[half - 1]) / (n - half) if half else 0.0,
        "maps_per_shape": (maps[-1] - maps[half - 1]) / (n - half) if half else 0.0,
    }
    if micro and column in ("eager", "torch"):
        res["micro"] = _micro(column, micro)
    try:
        from jtorch import compiler

        if column in ("eager", "compile") and hasattr(compiler, "stats"):
            res["stats"] = {k: v for k, v in compiler.stats().items()}
    except ImportError:
        pass
    return res


def _tiny_step():
    """A small eager step (linear, tanh, mean, SGD) on a batch of L rows: a few programs per
    new L, for a long run over many shapes."""
    import jtorch as torch

    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 8)
    opt = torch.optim.SGD(lin.parameters(), lr=0.01)

    def call(length):
        opt.zero_grad()
        loss = torch.tanh(lin(torch.ones(length, 8) * 0.5)).mean()
        loss.backward()
        opt.step()
        return float(loss)

    return call


def _flat(n: int, every: int, tiny: bool = False) -> None:
    call = _tiny_step() if tiny else _make("eager")
    print(f"{'L':>6} {'s/shape':>8} {'RSS MiB':>8} {'maps':>6}")
    t0 = time.perf_counter()
    for length in range(1, n + 1):
        call(length)
        if length % every == 0 or length == n:
            dt = (time.perf_counter() - t0) / every
            print(f"{length:6d} {dt:8.3f} {_rss_mib():8.0f} {_maps():6d}", flush=True)
            t0 = time.perf_counter()


def _timed(cmd: list, cwd: str, env: dict, pin: list) -> tuple:
    """(wall seconds, CPU seconds) of one run, NaN if it failed: on a loaded machine the CPU
    time (user + system, all threads) is the steadier measure."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(pin + cmd, cwd=cwd, env=env, capture_output=True, text=True)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return (t1 - t0, cpu) if p.returncode == 0 else (float("nan"), float("nan"))


def _user_env(**extra) -> dict:
    """This process's environment as on a user's machine, where Python keeps the bytecode of
    the modules it imports: without it (`PYTHONDONTWRITEBYTECODE`, set in some sandboxes)
    every run compiles jtorch's ~360 modules from source (~0.55 s here), while PyTorch and jax
    read the bytecode their installation wrote."""
    env = dict(os.environ, **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _jax_env() -> dict:
    """The environment of a JAX twin's first run: jax's persistent cache off."""
    env = _user_env(JAX_ENABLE_COMPILATION_CACHE="false")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    return env


def _examples(cpu) -> None:
    import tempfile

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = os.path.join(root, "examples")
    twins = os.path.join(root, "bench", "examples_jax")
    pin = ["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []

    def twin_col(v: float, width: int, spec: str = ".1f") -> str:
        return f"{v:{width}{spec}}" if v == v else f"{'-':>{width}}"  # NaN: no twin

    # (jtorch's bytecode written once, as installing it does: see `_user_env`)
    pythonpath = os.pathsep.join([root] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    subprocess.run(
        [sys.executable, "-c", "import jtorch"], env=_user_env(PYTHONPATH=pythonpath), check=True
    )

    print(
        f"{'example':22} {'PyTorch s':>10} {'1st run s':>10} {'2nd run s':>10} {'JAX s':>6} "
        f"{'1st/PT':>7} {'2nd/1st':>8} {'1st/JAX':>7}   CPU s: {'PyTorch':>8} {'1st':>6} "
        f"{'2nd':>6} {'JAX':>6} {'1st/PT':>7} {'2nd/1st':>8} {'1st/JAX':>7}"
    )
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".py")):
        with tempfile.TemporaryDirectory() as cache:
            env = _user_env(JTORCH_CACHE_DIR=cache, JTORCH_COMPILE_NOTE="0", PYTHONPATH=pythonpath)
            env.pop("JAX_COMPILATION_CACHE_DIR", None)
            pt = _timed([sys.executable, name], folder, _user_env(), pin)
            first = _timed([sys.executable, "-m", "jtorch", name], folder, env, pin)
            second = _timed([sys.executable, "-m", "jtorch", name], folder, env, pin)
        # the same program written in JAX (bench/examples_jax/), where there is one
        twin = (float("nan"), float("nan"))
        if os.path.exists(os.path.join(twins, name)):
            twin = _timed([sys.executable, name], twins, _jax_env(), pin)
        (pt, pt_cpu), (first, first_cpu), (second, second_cpu) = pt, first, second
        jx, jx_cpu = twin
        print(
            f"{name:22} {pt:10.1f} {first:10.1f} {second:10.1f} {twin_col(jx, 6)} "
            f"{first / pt:7.2f} {second / first:8.2f} {twin_col(first / jx, 7, '.2f')}"
            f"          {pt_cpu:8.1f} {first_cpu:6.1f} {second_cpu:6.1f} {twin_col(jx_cpu, 6)} "
            f"{first_cpu / pt_cpu:7.2f} {second_cpu / first_cpu:8.2f} "
            f"{twin_col(first_cpu / jx_cpu, 7, '.2f')}",
            flush=True,
        )


def _generate(cpu) -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pin = ["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []
    env = dict(os.environ, JTORCH_CACHE_DIR="", JTORCH_COMPILE_NOTE="0")
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    cmd = pin + [sys.executable, os.path.abspath(__file__), "--generate-worker"]
    subprocess.run(cmd, env=env, check=True)


def _generate_worker() -> None:
    import contextlib
    import io

    from jtorch import _alias, _programs

    _alias.install_as_torch()
    import torch

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "examples", "gpt_sdpa.py")
    namespace = {"__name__": "__main__"}
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), open(path) as f:
        exec(compile(f.read(), path, "exec"), namespace)
    print(
        f"gpt_sdpa.py under jtorch: {time.perf_counter() - t0:.1f} s, "
        f"{_programs.programs_made()} programs"
    )
    model = namespace["model"]
    idx = torch.tensor([[3, 4, 5] * 4])  # length 12: the script generated up to 12
    made = []
    with torch.no_grad():
        for _ in range(12):
            idx = torch.cat([idx, idx[:, -1:]], 1)
            before = _programs.programs_made()
            model.generate(idx, 1)
            made.append(_programs.programs_made() - before)
    lengths = f"L = {idx.shape[1] - 11}..{idx.shape[1]}"
    print(f"programs per generate step at new lengths ({lengths}): {made}")


def _run_column(column, args) -> dict | None:
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        column,
        "--n",
        str(args.n),
        "--repeat",
        str(args.repeat),
        "--micro",
        str(args.micro),
    ]
    if args.cpu is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", str(args.cpu)] + cmd
    env = dict(os.environ)
    if args.no_persistent:
        env["JTORCH_CACHE_DIR"] = ""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        tail = p.stderr.strip().splitlines()[-1:] or ["?"]
        print(f"  {column}: failed ({tail[0]})", file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=24, help="lengths 1..n")
    ap.add_argument("--repeat", type=int, default=5, help="steps at a seen shape, timed")
    ap.add_argument("--micro", type=int, default=40, help="new positions/sizes per micro op")
    ap.add_argument("--columns", default="eager,compile,torch,jax")
    ap.add_argument("--cpu", default="1", help="CPU to pin each column to ('' for none)")
    ap.add_argument(
        "--no-persistent",
        action="store_true",
        help="turn jtorch's persistent compilation cache off (JTORCH_CACHE_DIR='')",
    )
    ap.add_argument("--flat", type=int, default=0, help="jtorch eager over this many lengths")
    ap.add_argument("--tiny", action="store_true", help="--flat with a small step")
    ap.add_argument(
        "--examples",
        action="store_true",
        help="time examples/*.py: PyTorch, jtorch's first and second run, the JAX twin's",
    )
    ap.add_argument(
        "--generate",
        action="store_true",
        help="programs per new length of examples/gpt_sdpa.py's generate loop",
    )
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--generate-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.cpu = args.cpu or None
    if args.worker:
        print(json.dumps(_worker(args.worker, args.n, args.repeat, args.micro)))
        return
    if args.generate_worker:
        _generate_worker()
        return
    if args.generate:
        _generate(args.cpu)
        return
    if args.flat:
        _flat(args.flat, max(args.flat // 20, 1), args.tiny)
        return
    if args.examples:
        _examples(args.cpu)
        return
    results = [r for r in (_run_column(c, args) for c in args.columns.split(",")) if r]
    names = {
        "eager": "jtorch eager",
        "compile": "jtorch.compile",
        "torch": "PyTorch eager",
        "jax": "jax.jit step",
    }
    print(f"variable-length step, L = 1..{args.n}, batch ({BATCH}, L), one CPU per column")
    print(
        f"{'column':16} {'s/shape':>8} {'2nd half':>8} {'first s':>8} {'again s':>8} "
        f"{'seen ms':>8} {'RSS MiB':>8} {'maps':>6} {'MiB/shp':>8} {'maps/shp':>8}"
    )
    for r in results:
        print(
            f"{names[r['column']]:16} {r['per_shape_s']:8.3f} "
            f"{r['per_shape_2nd_half_s']:8.3f} {r['first_s']:8.2f} {r['second_s']:8.3f} "
            f"{r['seen_shape_ms']:8.2f} {r['rss_mib']:8.0f} "
            f"{r['maps']:6d} {r['rss_per_shape_mib']:8.2f} {r['maps_per_shape']:8.1f}"
        )
    ref = {r["column"]: r for r in results}
    if "eager" in ref and "jax" in ref:
        print(
            f"jtorch eager / jax.jit per new shape (2nd half): "
            f"{ref['eager']['per_shape_2nd_half_s'] / ref['jax']['per_shape_2nd_half_s']:.2f}x"
        )
    micro = [r for r in results if "micro" in r]
    if micro:
        print(
            f"\nper call at {args.micro - 2} new positions / sizes after two; and over all "
            f"{args.micro} (ms)"
        )
        print(f"{'op':20}" + "".join(f"{names[r['column']]:>16}{'all':>10}" for r in micro))
        for k in micro[0]["micro"]:
            print(
                f"{k:20}"
                + "".join(f"{r['micro'][k][0]:16.3f}{r['micro'][k][1]:10.3f}" for r in micro)
            )
    for r in results:
        if "stats" in r:
            print(f"{names[r['column']]} compiler stats: {r['stats']}")


if __name__ == "__main__":
    main()
