"""Every collective over the processes of a torchrun job, checked against numpy.

Run: torchrun --nproc-per-node N collectives.py (PyTorch), or
     python -m jtorch -m torch.distributed.run --nproc-per-node N collectives.py (jtorch).
Each rank checks its results; rank 0 prints a summary of all ranks' (the same lines under
both libraries).
"""

import numpy as np
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
seen = {}


def record(name, value):
    seen[name] = value.tolist() if isinstance(value, torch.Tensor) else value


def base(rank):
    return np.arange(6, dtype=np.float32) + 10 * rank


ranks = np.stack([base(i) for i in range(n)])
Op = dist.ReduceOp
for op, ref in (
    (Op.SUM, ranks.sum(0)),
    (Op.AVG, ranks.mean(0)),
    (Op.MAX, ranks.max(0)),
    (Op.MIN, ranks.min(0)),
    (Op.PRODUCT, ranks.prod(0)),
):
    t = torch.tensor(base(r))
    dist.all_reduce(t, op=op)
    np.testing.assert_allclose(t.numpy(), ref, rtol=1e-6)
    record(f"all_reduce {op}", t)
ints = np.stack([np.array([3, 5, 12], np.int64) + i for i in range(n)])
for op, fn in ((Op.BAND, np.bitwise_and), (Op.BOR, np.bitwise_or), (Op.BXOR, np.bitwise_xor)):
    t = torch.tensor(ints[r])
    dist.all_reduce(t, op=op)
    assert t.tolist() == fn.reduce(ints, 0).tolist(), (op, t)
    record(f"all_reduce {op}", t)
flags = torch.tensor([True, False, r == n - 1])
dist.all_reduce(flags, op=Op.MAX)
assert flags.tolist() == [True, False, True]
base_view = torch.zeros(4) + r + 1
dist.all_reduce(base_view[1:3])  # through a view into its base
assert base_view.tolist() == [r + 1, n * (n + 1) / 2, n * (n + 1) / 2, r + 1]
record("all_reduce view", base_view)

out = [torch.zeros(6) for _ in range(n)]
dist.all_gather(out, torch.tensor(base(r)))
assert all(o.tolist() == base(i).tolist() for i, o in enumerate(out))
flat = torch.zeros(6 * n)
dist.all_gather_into_tensor(flat, torch.tensor(base(r)))
assert flat.tolist() == ranks.reshape(-1).tolist()
record("all_gather_into_tensor", flat)

chunks = np.stack([np.arange(2 * n, dtype=np.float32) * (i + 1) for i in range(n)])
rs = torch.zeros(2)
dist.reduce_scatter_tensor(rs, torch.tensor(chunks[r]))
assert rs.tolist() == chunks.sum(0)[2 * r : 2 * r + 2].tolist()
record("reduce_scatter_tensor", rs)
rs_list = torch.zeros(2)
dist.reduce_scatter(
    rs_list, [torch.tensor(chunks[r][2 * j : 2 * j + 2]) for j in range(n)], op=Op.MAX
)
assert rs_list.tolist() == chunks.max(0)[2 * r : 2 * r + 2].tolist()

a2a = torch.zeros(2 * n)
dist.all_to_all_single(a2a, torch.arange(2.0 * n) + 100 * r)
expect = np.concatenate([np.arange(2.0 * n)[2 * r : 2 * r + 2] + 100 * j for j in range(n)])
assert a2a.tolist() == expect.tolist()
record("all_to_all_single", a2a)
# Uneven splits: rank i sends j + 1 rows to rank j.
inp = torch.cat([torch.full((j + 1,), float(10 * r + j)) for j in range(n)])
got = torch.zeros(n * (r + 1))
dist.all_to_all_single(got, inp, [r + 1] * n, [j + 1 for j in range(n)])
assert got.tolist() == [float(10 * i + r) for i in range(n) for _ in range(r + 1)]
record("all_to_all_single uneven", got)
outs = [torch.zeros(3) for _ in range(n)]
dist.all_to_all(outs, [torch.full((3,), float(r * n + j)) for j in range(n)])
assert [o[0].item() for o in outs] == [float(i * n + r) for i in range(n)]

b = torch.tensor([-0.0, float("nan"), float(r)])
dist.broadcast(b, src=n - 1)
assert str(b.tolist()) == str([-0.0, float("nan"), float(n - 1)])
record("broadcast", str(b.tolist()))
red = torch.tensor([1.0, 2.0]) + r
dist.reduce(red, dst=0)
if r == 0:
    assert red.tolist() == (np.array([1.0, 2.0]) * n + n * (n - 1) / 2).tolist()
gl = [torch.zeros(2) for _ in range(n)] if r == 0 else None
dist.gather(torch.tensor([1.0, 2.0]) * (r + 1), gl, dst=0)
if r == 0:
    assert [g.tolist() for g in gl] == [[i + 1.0, 2.0 * (i + 1)] for i in range(n)]
sc = torch.zeros(2)
dist.scatter(sc, [torch.tensor([float(i), -float(i)]) for i in range(n)] if r == 1 else None, src=1)
assert sc.tolist() == [float(r), -float(r)]
record("scatter", sc)

objs = [None] * n
dist.all_gather_object(objs, {"rank": r, "t": torch.tensor([r])})
assert [o["rank"] for o in objs] == list(range(n))
lst = [r, "x" * r, None] if r == 1 else [None, None, None]
dist.broadcast_object_list(lst, src=1)
assert lst == [1, "x", None]
go = [None] * n if r == 0 else None
dist.gather_object(("g", r), go, dst=0)
so = [None]
dist.scatter_object_list(so, [["s", i] for i in range(n)] if r == 0 else None, src=0)
assert so == [["s", r]]

# Point to point: a ring of sends and receives (posted before the receives).
right, left = (r + 1) % n, (r - 1) % n
buf = torch.zeros(2)
reqs = [dist.isend(torch.tensor([float(r), 1.0]), right), dist.irecv(buf, left)]
for q in reqs:
    q.wait()
assert buf.tolist() == [float(left), 1.0]
if r == 0:
    dist.send(torch.tensor([5.0]), 1)
    any_buf = torch.zeros(1)
    got_from = dist.recv(any_buf)
    assert (got_from, any_buf.tolist()) == (1, [7.0])
elif r == 1:
    buf1 = torch.zeros(1)
    assert dist.recv(buf1, 0) == 0 and buf1.tolist() == [5.0]
    dist.send(torch.tensor([7.0]), 0)
if torch.__name__ == "jtorch":  # PyTorch 2.13's gloo aborts at exit after a batch
    pbuf = torch.zeros(1)  # tag 1: rank 0's any-source receive above waits for tag 0
    ops = [
        dist.P2POp(dist.isend, torch.tensor([float(r + 7)]), right, tag=1),
        dist.P2POp(dist.irecv, pbuf, left, tag=1),
    ]
    for q in dist.batch_isend_irecv(ops):
        q.wait()
    assert pbuf.tolist() == [float(left + 7)]

evens = dist.new_group([i for i in range(n) if i % 2 == 0])
t = torch.tensor([float(r)])
if r % 2 == 0:
    dist.all_reduce(t, group=evens)
    assert t.item() == sum(i for i in range(n) if i % 2 == 0)
    assert dist.get_rank(evens) == r // 2
else:
    assert evens == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(evens) == -1
work = dist.all_reduce(torch.ones(1), async_op=True)
assert work.wait() and work.is_completed()
dist.barrier()

summaries = [None] * n
dist.all_gather_object(summaries, seen)
if r == 0:
    for i, s in enumerate(summaries):
        for name, value in s.items():
            print(f"rank {i} {name}: {value}")
    print("ok", n)
dist.destroy_process_group()
