"""DDP with a DistributedSampler trains to the parameters of one process on the global batch.

Each rank starts from different weights (DDP broadcasts rank 0's), feeds its share of the
data, and accumulates over two micro-batches (the first under `no_sync`). Every rank also
trains a plain copy on the whole global batch of each step and checks that they agree;
rank 0 prints its parameters (the same lines under PyTorch and jtorch).
"""

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()


def make_model():
    rng = np.random.default_rng(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
    return model


data = np.random.default_rng(1)
x = torch.tensor(data.standard_normal((8 * n * 2, 4)).astype(np.float32))
y = torch.tensor(data.standard_normal((8 * n * 2, 2)).astype(np.float32))
dataset = TensorDataset(x, y)
per_rank = 4
sampler = DistributedSampler(dataset, shuffle=False)  # jtorch shuffles with its own RNG
loader = DataLoader(dataset, batch_size=per_rank, sampler=sampler)

reference = make_model()
model = make_model()
with torch.no_grad():
    for p in model.parameters():
        p.add_(float(r))  # DDP must start every rank from rank 0's weights
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
loss_fn = torch.nn.MSELoss()

for epoch in range(2):
    sampler.set_epoch(epoch)
    order = list(iter(sampler))
    # The indices of every rank in this epoch: rank i's step s batch is its s-th slice.
    everyone = [None] * n
    dist.all_gather_object(everyone, order)
    for step, (xb, yb) in enumerate(loader):
        opt.zero_grad()
        with ddp.no_sync():
            loss_fn(ddp(xb[:2]), yb[:2]).div(2).backward()
        loss_fn(ddp(xb[2:]), yb[2:]).div(2).backward()
        opt.step()
        idx = [i for ranks in everyone for i in ranks[step * per_rank : (step + 1) * per_rank]]
        ref_opt.zero_grad()
        # The global batch is n per-rank batches, each the mean of two half-batch means.
        xs, ys = x[idx].view(n, 2, 2, 4), y[idx].view(n, 2, 2, 2)
        loss_fn(reference(xs), ys).backward()
        ref_opt.step()

for (name, p), q in zip(ddp.module.named_parameters(), reference.parameters()):
    assert torch.allclose(p, q, rtol=1e-5, atol=1e-6), (name, (p - q).abs().max())

# One bucket per parameter: several all-reduces in flight during one backward (jtorch queues
# each without waiting, so they overlap the rest of backward) give the same training.
ddp3 = DDP(make_model(), bucket_cap_mb=1e-5)
ref3 = make_model()
opt3 = torch.optim.SGD(ddp3.parameters(), lr=0.1)
ref_opt3 = torch.optim.SGD(ref3.parameters(), lr=0.1)
for step in range(2):
    rows = torch.arange(step * 4 * n, (step + 1) * 4 * n)
    opt3.zero_grad()
    loss_fn(ddp3(x[rows[r * 4 : (r + 1) * 4]]), y[rows[r * 4 : (r + 1) * 4]]).backward()
    opt3.step()
    ref_opt3.zero_grad()
    loss_fn(ref3(x[rows].view(n, 4, 4)), y[rows].view(n, 4, 2)).backward()
    ref_opt3.step()
for p, q in zip(ddp3.module.parameters(), ref3.parameters()):
    assert torch.allclose(p, q, rtol=1e-5, atol=1e-6), (p - q).abs().max()


# find_unused_parameters: a branch no rank uses keeps no gradient; a branch one rank uses
# gets the average over ranks.
class Branches(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(2, 1)
        self.b = torch.nn.Linear(2, 1)
        self.c = torch.nn.Linear(2, 1)

    def forward(self, x, use_b):
        out = self.a(x)
        return out + self.b(x) if use_b else out


torch.manual_seed(0)
branches = Branches()
ddp2 = DDP(branches, find_unused_parameters=True)
ddp2(torch.ones(1, 2) * (r + 1), use_b=(r == 0)).sum().backward()
assert branches.c.weight.grad is None
assert branches.a.weight.grad.tolist() == [[(n + 1) / 2] * 2]
assert branches.b.weight.grad.tolist() == [[1.0 / n] * 2]

if r == 0:
    for name, p in ddp.module.named_parameters():
        print(name, [round(v, 5) for v in p.detach().reshape(-1).tolist()])
    print("ok", n)
dist.destroy_process_group()
