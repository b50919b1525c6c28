"""FSDP2 `fully_shard` trains to the parameters of one process on the global batch.

Each layer and the root are sharded over the ranks (dim 0 of every parameter split as
`torch.chunk` splits it, uneven included); each rank feeds its share of the batch. Every
rank also trains a plain copy on the whole global batch and checks that the gathered
parameters agree; rank 0 prints them (the same lines under PyTorch and jtorch).
"""

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FSDPModule, fully_shard
from torch.distributed.tensor import DTensor, Shard

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()


def make_model():
    rng = np.random.default_rng(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.GELU(), torch.nn.Linear(7, 3))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.4))
    return model


data = np.random.default_rng(1)
x = torch.tensor(data.standard_normal((3, 4 * n, 5)).astype(np.float32))
y = torch.tensor(data.standard_normal((3, 4 * n, 3)).astype(np.float32))

reference = make_model()
model = make_model()
for layer in (model[0], model[2]):
    fully_shard(layer)
fully_shard(model)
assert isinstance(model, FSDPModule)
for p in model.parameters():
    assert isinstance(p, DTensor) and p.placements == (Shard(0),)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
ref_opt = torch.optim.Adam(reference.parameters(), lr=0.05)
for step in range(3):
    xb, yb = x[step, 4 * r : 4 * r + 4], y[step, 4 * r : 4 * r + 4]
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(xb), yb)
    loss.backward()
    opt.step()
    ref_opt.zero_grad()
    torch.nn.functional.mse_loss(reference(x[step]), y[step]).backward()
    ref_opt.step()

for (name, p), q in zip(model.named_parameters(), reference.parameters()):
    full = p.full_tensor()
    assert torch.allclose(full, q, rtol=1e-4, atol=1e-5), (name, (full - q).abs().max())
    local = p.to_local()
    assert (
        local.shape[0] == torch.chunk(q, n)[r].shape[0]
        if r < len(torch.chunk(q, n))
        else local.shape[0] == 0
    )

full = {name: p.full_tensor() for name, p in model.named_parameters()}
if r == 0:
    for name, value in full.items():
        print(name, [round(v, 4) for v in value.detach().reshape(-1).tolist()])
    print("ok", n)
dist.destroy_process_group()
