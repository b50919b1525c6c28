"""One process, several local devices (run with
XLA_FLAGS=--xla_force_host_platform_device_count=8 under jtorch): DeviceMesh, DTensor and
fully_shard over the devices, checked against the same computation on plain tensors.
Prints "ok" at the end; any disagreement raises."""

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor


def devices_of(t):
    """The devices holding `t`'s array and each one's block shape."""
    return sorted((s.device.id, tuple(s.data.shape)) for s in t._array.addressable_shards)


dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
mesh = init_device_mesh("cpu", (8,))
assert mesh.size() == 8 and mesh.get_coordinate() == (0,)
x = torch.arange(48.0).reshape(16, 3)
d = distribute_tensor(x, mesh, [Shard(0)])
assert d.placements == (Shard(0),) and tuple(d.shape) == (16, 3)
assert devices_of(d) == [(i, (2, 3)) for i in range(8)], devices_of(d)
assert torch.equal(d.full_tensor(), x)
col = d.redistribute(mesh, [Replicate()])
assert devices_of(col) == [(i, (16, 3)) for i in range(8)]
assert torch.equal((d * 2 + 1).full_tensor(), x * 2 + 1)
w = distribute_tensor(torch.ones(3, 2), mesh, [Replicate()])
assert torch.allclose((d @ w).full_tensor(), x @ torch.ones(3, 2))
uneven = distribute_tensor(torch.arange(5.0), mesh, [Shard(0)])  # kept whole per device
assert torch.equal(uneven.full_tensor(), torch.arange(5.0))

leaf = distribute_tensor(x, mesh, [Shard(0)]).requires_grad_(True)
(leaf.full_tensor() ** 2).sum().backward()
assert isinstance(leaf.grad, DTensor) and torch.equal(leaf.grad.full_tensor(), 2 * x)
assert devices_of(leaf.grad) == [(i, (2, 3)) for i in range(8)]

mesh2 = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
m = torch.arange(32.0).reshape(4, 8)
d2 = distribute_tensor(m, mesh2, [Shard(0), Shard(1)])
assert devices_of(d2) == [(i, (2, 2)) for i in range(8)]
assert torch.equal(d2.full_tensor(), m) and mesh2["tp"].size() == 4


def make_model():
    rng = np.random.default_rng(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.GELU(), torch.nn.Linear(16, 8))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.4))
    return model


data = np.random.default_rng(1)
xs = torch.tensor(data.standard_normal((3, 16, 5)).astype(np.float32))
ys = torch.tensor(data.standard_normal((3, 16, 8)).astype(np.float32))
reference, model = make_model(), make_model()
for layer in (model[0], model[2]):
    fully_shard(layer, mesh=mesh)
fully_shard(model, mesh=mesh)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
ref_opt = torch.optim.Adam(reference.parameters(), lr=0.05)
for step in range(3):
    for net, o in ((model, opt), (reference, ref_opt)):
        o.zero_grad()
        torch.nn.functional.mse_loss(net(xs[step]), ys[step]).backward()
        o.step()
for (name, p), q in zip(model.named_parameters(), reference.parameters()):
    assert isinstance(p, DTensor) and p.placements == (Shard(0),), name
    assert len(devices_of(p)) == 8 and devices_of(p)[0][1][0] == q.shape[0] // 8, (
        name,
        devices_of(p),
    )
    full = p.full_tensor()
    assert torch.allclose(full, q, rtol=1e-5, atol=1e-6), (name, (full - q).abs().max())
print("ok")
