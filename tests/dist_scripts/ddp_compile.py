"""DDP under torch.compile trains to the parameters of one process on the global batch.

Five uses: a compiled training step (forward, backward, optimizer step; the module has a
buffer, which DDP broadcasts from rank 0 at each forward), a compiled step accumulating two
micro-batches (the first under `no_sync`), a compiled DDP module whose backward runs
outside, a compiled step with `find_unused_parameters=True`, and an FSDP2 model's compiled
step. Every rank also trains a
plain copy on the whole global batch and checks that they agree; rank 0 prints the
parameters (the same lines under PyTorch and jtorch).

Under jtorch a compiled step with DDP (or FSDP2) inside is one program of both processes, the
all-reduces inside it: once its steady program exists, a step traces nothing and makes no
collective call from Python (checked where `trace_count` exists: jtorch's compiled function).
"""

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.tensor.debug import CommDebugMode
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
B = 4  # per rank


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 8)
        self.b = torch.nn.Linear(8, 2)
        self.register_buffer("shift", torch.zeros(8))

    def forward(self, x):
        return self.b(torch.tanh(self.a(x) + self.shift))


def make(seed):
    rng = np.random.default_rng(seed)
    model = Net()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
        model.shift.copy_(torch.linspace(-0.5, 0.5, 8))
    return model


data = np.random.default_rng(1)
X = torch.tensor(data.standard_normal((6, n * B, 4)).astype(np.float32))
Y = torch.tensor(data.standard_normal((6, n * B, 2)).astype(np.float32))
mse = torch.nn.functional.mse_loss


def check(model, reference, what):
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        assert torch.allclose(p, q, rtol=1e-5, atol=1e-6), (what, name, (p - q).abs().max())


def reference_step(reference, ref_opt, x, y):
    ref_opt.zero_grad()
    mse(reference(x.view(n, B, 4)), y.view(n, B, 2)).backward()
    ref_opt.step()


def steady_call(step, what, x, y):
    """Calls a compiled step whose steady program exists; where the compiled function counts
    its traces (jtorch's), checks that it traced nothing and called no collective from Python."""
    if not hasattr(step, "trace_count"):
        step(x, y)
        return
    traced = step.trace_count
    with CommDebugMode() as comm:
        step(x, y)
    assert step.trace_count == traced, f"a steady {what} step traced again"
    assert comm.get_total_counts() == 0, f"a steady {what} step called a collective from Python"


def report(model, what):
    if r == 0:
        print(what)
        for name, p in model.named_parameters():
            print(" ", name, [round(v, 5) for v in p.detach().reshape(-1).tolist()])


# 1. A compiled training step.
model, reference = make(0), make(0)
with torch.no_grad():
    model.shift.add_(float(r))  # DDP's buffer broadcast makes every rank use rank 0's
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)


@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = mse(ddp(x), y)
    loss.backward()
    opt.step()
    return loss


for i in range(5):
    x, y = X[i, r * B : (r + 1) * B], Y[i, r * B : (r + 1) * B]
    if i == 4:
        steady_call(step, "DDP", x, y)
    else:
        step(x, y)
    reference_step(reference, ref_opt, X[i], Y[i])
    check(model, reference, "compiled step")
report(model, "compiled step")

# 2. Two micro-batches per step, the first under no_sync.
model, reference = make(2), make(2)
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)


@torch.compile
def accumulating_step(x, y):
    opt.zero_grad()
    with ddp.no_sync():
        mse(ddp(x[:2]), y[:2]).div(2).backward()
    mse(ddp(x[2:]), y[2:]).div(2).backward()
    opt.step()


for i in range(3):
    accumulating_step(X[i, r * B : (r + 1) * B], Y[i, r * B : (r + 1) * B])
    ref_opt.zero_grad()
    # each rank's loss is the mean of two half-batch means
    mse(reference(X[i].view(n, 2, 2, 4)), Y[i].view(n, 2, 2, 2)).backward()
    ref_opt.step()
    check(model, reference, "no_sync step")
report(model, "no_sync step")

# 3. A compiled DDP module; backward and the optimizer step run outside it.
model, reference = make(3), make(3)
compiled = torch.compile(DDP(model))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
ref_opt = torch.optim.Adam(reference.parameters(), lr=0.01)
for i in range(4):
    opt.zero_grad()
    mse(compiled(X[i, r * B : (r + 1) * B]), Y[i, r * B : (r + 1) * B]).backward()
    opt.step()
    reference_step(reference, ref_opt, X[i], Y[i])
    check(model, reference, "compiled module")
report(model, "compiled module")

# 4. find_unused_parameters=True inside a compiled step.
model, reference = make(4), make(4)
ddp = DDP(model, find_unused_parameters=True)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)


@torch.compile
def unused_step(x, y):
    opt.zero_grad()
    mse(ddp(x), y).backward()
    opt.step()


for i in range(3):
    unused_step(X[i, r * B : (r + 1) * B], Y[i, r * B : (r + 1) * B])
    reference_step(reference, ref_opt, X[i], Y[i])
    check(model, reference, "find_unused step")
report(model, "find_unused step")

# 5. An FSDP2 model (every layer and the root sharded) in a compiled training step.
from torch.distributed.fsdp import fully_shard  # noqa: E402

model, reference = make(5), make(5)
for layer in (model.a, model.b):
    fully_shard(layer)
fully_shard(model)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
ref_opt = torch.optim.Adam(reference.parameters(), lr=0.05)


@torch.compile
def fsdp_step(x, y):
    opt.zero_grad()
    mse(model(x), y).backward()
    opt.step()


for i in range(4):
    x, y = X[i, r * B : (r + 1) * B], Y[i, r * B : (r + 1) * B]
    if i == 3:
        steady_call(fsdp_step, "FSDP", x, y)
    else:
        fsdp_step(x, y)
    reference_step(reference, ref_opt, X[i], Y[i])
full = {name: p.full_tensor() for name, p in model.named_parameters()}
for (name, p), q in zip(full.items(), reference.parameters()):
    assert torch.allclose(p, q, rtol=1e-4, atol=1e-5), ("fsdp step", name, (p - q).abs().max())
if r == 0:
    print("fsdp step")
    for name, p in full.items():
        print(" ", name, [round(v, 5) for v in p.detach().reshape(-1).tolist()])

if r == 0:
    print("ok", n)
dist.destroy_process_group()
