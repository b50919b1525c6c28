# compat: rtol=1e-4 atol=1e-5
"""Everyday tooling around a model: torch.jit.script, torch.profiler with record_function,
torch.testing.assert_close, and torch.random.fork_rng for side experiments."""
import json
import os
import tempfile
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule


class GatedMLP(nn.Module):
    def __init__(self, d: int = 8, hidden: int = 16):
        super().__init__()
        self.up = nn.Linear(d, hidden)
        self.gate = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.silu(self.gate(x)) * self.up(x)
        return x + self.down(h)


@torch.jit.script
def rms_norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def numpy_init(module, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, size=tuple(p.shape))).float())


# --- torch.jit.script ---
model = GatedMLP()
numpy_init(model, 0)
scripted = torch.jit.script(model)
print(scripted)
print("scripted is a ScriptModule:", isinstance(scripted, torch.jit.ScriptModule))
print("same parameter names:",
      [n for n, _ in scripted.named_parameters()] == [n for n, _ in model.named_parameters()])
x = torch.linspace(-1.0, 1.0, 32).reshape(4, 8)
out = scripted(x)
print("scripted out:", out.shape, out.dtype)
print(out[0])
torch.testing.assert_close(out, model(x))
print("scripted == eager: ok")
print("rms_norm:", rms_norm(torch.tensor([[3.0, 4.0]]), 0.0))

# --- torch.testing.assert_close against a closed form ---
t = torch.linspace(0.0, 1.0, 5, dtype=torch.float64, requires_grad=True)
y = (t.sin() * t.exp()).sum()
(g,) = torch.autograd.grad(y, t)
expected = t.detach().exp() * (t.detach().sin() + t.detach().cos())
torch.testing.assert_close(g, expected)
print("grad of sin(t)exp(t) matches closed form:", g.dtype)
try:
    torch.testing.assert_close(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.5, 3.0]))
except AssertionError as e:
    print("assert_close raised:", str(e).splitlines()[0])
    print([line for line in str(e).splitlines() if line.startswith("Mismatched")][0])
try:
    torch.testing.assert_close(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64))
except AssertionError as e:
    print("dtype check:", str(e).splitlines()[0])
torch.testing.assert_close(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64),
                           check_dtype=False)
print("check_dtype=False passes")

# --- profiler around a few training steps ---
traces = []
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.linspace(-2.0, 2.0, 64).reshape(8, 8)
target = data.flip(-1) * 0.5
losses = []
with profile(activities=[ProfilerActivity.CPU],
             schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
             on_trace_ready=traces.append, record_shapes=True) as prof:
    for _ in range(6):
        with record_function("forward"):
            loss = F.mse_loss(model(data), target)
        with record_function("backward"):
            opt.zero_grad()
            loss.backward()
        with record_function("optimizer_step"):
            opt.step()
        losses.append(loss.item())
        prof.step()
print("losses:", " ".join(f"{v:.5f}" for v in losses))
print("trace handler calls:", len(traces), "step_num:", prof.step_num)
counts = {e.key: e.count for e in prof.key_averages()}
mine = {k: counts.get(k) for k in ("forward", "backward", "optimizer_step")}
print("user ranges in key_averages:", sorted(mine.items()))
print("profiler steps:", sorted(k for k in counts if k.startswith("ProfilerStep#")))
events = [e.name for e in prof.events()]
ours = Counter(n for n in events if n in ("forward", "backward", "optimizer_step"))
print("recorded ranges:", sorted(ours.items()))
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    names = Counter(ev.get("name") for ev in trace["traceEvents"])
    print("chrome trace has our ranges:", all(names[k] == 3 for k in mine))
table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=50)
print("table mentions forward:", "forward" in table)

# --- fork_rng: a side experiment that leaves the main stream alone ---
torch.manual_seed(42)
a = torch.rand(3)
with torch.random.fork_rng(devices=[]):
    torch.manual_seed(7)
    noise = torch.randn(1000)
    print(f"side experiment: {noise.shape} mean near 0: {abs(noise.mean().item()) < 0.1}")
b = torch.rand(3)
torch.manual_seed(42)
a2, b2 = torch.rand(3), torch.rand(3)
print("main stream unchanged by the fork:", torch.equal(a, a2) and torch.equal(b, b2))
state = torch.get_rng_state()
print("rng state:", state.dtype, state.dim())
