"""Tensor parallelism: a two-layer MLP split column-wise then row-wise over the ranks
(`parallelize_module`), trained for a few steps; every rank checks the gathered parameters
against a plain copy trained on the same batch, and rank 0 prints them. `CommDebugMode`
counts the collectives of a forward and backward: one all-reduce each way, as the layers
compute on their local pieces."""

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (n,))


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(6, 8)
        self.down = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def make_model():
    rng = np.random.default_rng(0)
    model = MLP()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.4))
    return model


data = np.random.default_rng(1)
x = torch.tensor(data.standard_normal((3, 5, 6)).astype(np.float32))
y = torch.tensor(data.standard_normal((3, 5, 4)).astype(np.float32))
reference, model = make_model(), make_model()
parallelize_module(model, mesh, {"up": ColwiseParallel(), "down": RowwiseParallel()})
for name, p in model.named_parameters():
    assert isinstance(p, DTensor), name
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
for step in range(3):
    for net, o in ((model, opt), (reference, ref_opt)):
        o.zero_grad()
        torch.nn.functional.mse_loss(net(x[step]), y[step]).backward()
        o.step()


def counts(mode):
    return sorted((str(k), v) for k, v in mode.get_comm_counts().items())


comm = CommDebugMode()
with comm:
    model(x[0])
lines = [f"forward: {counts(comm)}"]
xg = x[0].clone().requires_grad_()
with comm:
    model(xg).sum().backward()
lines.append(f"forward and backward, input requiring grad: {counts(comm)}")
with comm:
    t = torch.ones(2)
    dist.all_reduce(t)
    dist.all_gather_into_tensor(torch.empty(2 * n), t)
    dist.broadcast(t, 0)
    dist.barrier()
lines.append(f"process-group API: {counts(comm)} total {comm.get_total_counts()}")
for (name, p), q in zip(model.named_parameters(), reference.parameters()):
    full = p.full_tensor()
    assert torch.allclose(full, q, rtol=1e-5, atol=1e-6), (name, (full - q).abs().max())
    lines.append(
        f"{name} {p.placements} {tuple(p.to_local().shape)} "
        f"{[round(v, 4) for v in full.detach().reshape(-1).tolist()]}"
    )
if r == 0:
    print("\n".join(lines))
    print("ok", n)
dist.barrier()
dist.destroy_process_group()
