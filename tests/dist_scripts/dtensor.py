"""DTensor over the ranks of a torchrun job: distribute, redistribute, ops and autograd,
checked against the global tensor; rank 0 prints what every rank computed."""

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (n,))
seen = []


def note(*parts):
    seen.append(" ".join(str(p) for p in parts))


x = torch.arange((2 * n + 1) * 3, dtype=torch.float32).reshape(2 * n + 1, 3)  # uneven rows
d = distribute_tensor(x, mesh, [Shard(0)])
assert tuple(d.shape) == tuple(x.shape) and d.size(0) == 2 * n + 1
assert torch.equal(d.to_local(), torch.chunk(x, n)[r] if r < len(torch.chunk(x, n)) else x[:0])
assert torch.equal(d.full_tensor(), x)
note("local", d.to_local().tolist(), d.placements)
for placements in ([Shard(1)], [Replicate()], [Shard(0)]):
    moved = d.redistribute(mesh, placements)
    assert torch.equal(moved.full_tensor(), x), placements
    note("redistribute", placements, moved.to_local().tolist())

y = d * 2 + 1  # elementwise on pieces: stays sharded
assert y.placements == (Shard(0),) and torch.equal(y.full_tensor(), x * 2 + 1)
total = d.sum()  # a reduction over the whole tensor
assert torch.allclose(total.full_tensor(), x.sum())
w = distribute_tensor(torch.ones(3, 2), mesh, [Replicate()])
prod = d @ w
assert torch.allclose(prod.full_tensor(), x @ torch.ones(3, 2))
note("sum", total.full_tensor().item(), "matmul", prod.full_tensor().tolist())

part = DTensor.from_local(torch.full((2,), float(r + 1)), mesh, [Partial()])
assert part.full_tensor().tolist() == [n * (n + 1) / 2] * 2
note("partial", part.redistribute(mesh, [Replicate()]).to_local().tolist())
v = torch.arange(2.0 * n + 1)  # uneven: a reduce-scatter of padded blocks
scattered = DTensor.from_local(v * (r + 1), mesh, [Partial()]).redistribute(mesh, [Shard(0)])
whole = v * (n * (n + 1) / 2)
pieces = torch.chunk(whole, n)  # 3 pieces of 9 when n = 4: rank 3 holds none
assert torch.equal(scattered.to_local(), pieces[r] if r < len(pieces) else whole[:0])
assert torch.equal(scattered.full_tensor(), whole)
note("partial to shard", scattered.to_local().tolist())

leaf = distribute_tensor(x, mesh, [Shard(0)])
leaf.requires_grad_(True)
(leaf.full_tensor() ** 2).sum().backward()
assert isinstance(leaf.grad, DTensor) and leaf.grad.placements == (Shard(0),)
assert torch.equal(leaf.grad.full_tensor(), 2 * x)
note("grad", leaf.grad.to_local().tolist())

if n == 4:
    mesh2 = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    m = torch.arange(16.0).reshape(4, 4)
    d2 = distribute_tensor(m, mesh2, [Shard(0), Shard(1)])
    assert torch.equal(d2.full_tensor(), m)
    note("2d", d2.to_local().tolist(), mesh2["tp"].size())

all_seen = [None] * n
dist.all_gather_object(all_seen, seen)
if r == 0:
    for i, lines in enumerate(all_seen):
        for line in lines:
            print(f"rank {i}: {line}")
    print("ok", n)
dist.barrier()  # PyTorch's gloo aborts if a rank leaves while a peer's work is in flight
dist.destroy_process_group()
