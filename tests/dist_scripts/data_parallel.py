"""nn.DataParallel over 4 local accelerators in one process (run under jtorch with
JTORCH_CUDA_IS_CPU=1 and XLA_FLAGS=--xla_force_host_platform_device_count=5: `cpu` plus
cuda:0..3). Every check is against the same computation on one device, or against PyTorch's
documented behaviour (torch.chunk's sizes, replica 0 sharing the buffers). Prints "ok"."""

import collections
import warnings

import numpy as np
import torch
import torch.nn as nn
from torch.nn.parallel import comm

assert torch.cuda.device_count() == 4, torch.cuda.device_count()
DEVICES = [0, 1, 2, 3]


class Recorder(nn.Module):
    """Linear-GELU-Linear that records the shape and device of each input it sees."""

    def __init__(self, norm=False):
        super().__init__()
        self.l1, self.l2 = nn.Linear(5, 8), nn.Linear(8, 3)
        self.bn = nn.BatchNorm1d(8) if norm else nn.Identity()
        self.seen = []

    def forward(self, x, scale=1.0, tag=None):
        self.seen.append((tuple(x.shape), str(x.device), tag))
        return self.l2(nn.functional.gelu(self.bn(self.l1(x)))) * scale


def make(norm=False, device="cuda:0"):
    rng = np.random.default_rng(0)
    m = Recorder(norm)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
    return m.to(device)


data = np.random.default_rng(1)
xs = [torch.tensor(data.standard_normal((12, 5)).astype(np.float32)) for _ in range(3)]
ys = [torch.tensor(data.standard_normal((12, 3)).astype(np.float32)) for _ in range(3)]


def close(a, b, tol=1e-5):
    a, b = a.detach().cpu(), b.detach().cpu()
    assert torch.allclose(a, b, rtol=tol, atol=tol), (a, b)


# 1. Training over 4 devices gives one-device training on the whole batch.
ref, model = make(), make()
dp = nn.DataParallel(model, device_ids=DEVICES)
opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
opt = torch.optim.SGD(dp.parameters(), lr=0.1, momentum=0.9)
for x, y in zip(xs, ys):
    for m, o in ((ref, opt_ref), (dp, opt)):
        o.zero_grad()
        out = m(x.to("cuda:0"), scale=2.0)  # a keyword input is passed to every replica
        loss = nn.functional.mse_loss(out, y.to("cuda:0"))
        loss.backward()
        o.step()
    assert out.device == torch.device("cuda:0") and tuple(out.shape) == (12, 3)
for p, q in zip(ref.parameters(), model.parameters()):
    assert q.device == torch.device("cuda:0") and q.grad.device == torch.device("cuda:0")
    close(p, q)
    close(p.grad, q.grad)

# 2. The batch is cut as torch.chunk cuts it, one chunk per replica on its device.
model.seen.clear()
dp(xs[0].to("cuda:0"), tag="t")
assert model.seen == [((3, 5), f"cuda:{i}", "t") for i in range(4)], model.seen
model.seen.clear()
out = dp(xs[0][:5].to("cuda:0"))  # chunk(4) of 5 rows: 2, 2, 1 -> three replicas
assert [s[:2] for s in model.seen] == [((2, 5), "cuda:0"), ((2, 5), "cuda:1"), ((1, 5), "cuda:2")]
close(out, ref(xs[0][:5].to("cuda:0")))

# 3. A CPU input, output_device, and cutting along another dim.
model.seen.clear()
out = nn.DataParallel(model, device_ids=[0, 1], output_device=1)(xs[0])
assert out.device == torch.device("cuda:1")
assert [s[:2] for s in model.seen] == [((6, 5), "cuda:0"), ((6, 5), "cuda:1")], model.seen
close(out, ref(xs[0].to("cuda:0")))
pieces = nn.parallel.scatter(xs[0], [0, 1, 2], dim=1)  # chunk(3) of 5 columns: 2, 2, 1
assert [(tuple(p.shape), str(p.device)) for p in pieces] == [
    ((12, 2), "cuda:0"), ((12, 2), "cuda:1"), ((12, 1), "cuda:2")]  # fmt: skip
close(nn.parallel.gather(pieces, 0, dim=1), xs[0])

# 4. BatchNorm: each replica normalises its own chunk; only replica 0's running statistics
#    reach the module (its buffers are the module's own), as in PyTorch.
ref, model = make(norm=True), make(norm=True)
x = xs[1].to("cuda:0")
out = nn.DataParallel(model, device_ids=DEVICES)(x)
chunks = x.chunk(4)
expected = torch.cat([ref(chunks[0])] + [make(norm=True)(c) for c in chunks[1:]])
close(out, expected)
close(model.bn.running_mean, ref.bn.running_mean)
close(model.bn.running_var, ref.bn.running_var)
assert int(model.bn.num_batches_tracked) == 1

# 5. Outputs: tuples, dicts and namedtuples are gathered; scalars become a vector.
Pair = collections.namedtuple("Pair", "a b")


class Structured(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(5))

    def forward(self, x):
        h = x * self.w
        return {"sum": h.sum(), "pair": Pair(h, None), "list": [h[:, :2]]}


s = Structured().to("cuda:0")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    o = nn.DataParallel(s, device_ids=DEVICES)(xs[2].to("cuda:0"))
assert any("all input tensors were scalars" in str(w.message) for w in caught)
assert isinstance(o, dict) and isinstance(o["pair"], Pair) and o["pair"].b is None
sums = torch.stack([c.sum() for c in xs[2].chunk(4)])
close(o["sum"], sums)
close(o["pair"].a, xs[2])
close(o["list"][0], xs[2][:, :2])
o["sum"].sum().backward()
close(s.w.grad, xs[2].sum(0))  # the sum of every replica's gradient

# 6. Without grad mode the replicas are detached; errors are PyTorch's.
with torch.no_grad():
    assert nn.DataParallel(make(), device_ids=DEVICES)(xs[0].to("cuda:0")).grad_fn is None
try:
    nn.DataParallel(make(device="cuda:1"), device_ids=DEVICES)(xs[0])
    raise AssertionError("expected a RuntimeError")
except RuntimeError as e:
    assert "module must have its parameters and buffers on device cuda:0" in str(e), e


class Fails(nn.Module):
    def forward(self, x):
        if x.device == torch.device("cuda:1"):
            raise ValueError("bad chunk")
        return x


try:
    nn.DataParallel(Fails(), device_ids=DEVICES)(xs[0].to("cuda:0"))
    raise AssertionError("expected a ValueError")
except ValueError as e:
    assert str(e).startswith("Caught ValueError in replica 1 on device 1."), e

# 7. The functional form and the parts.
ref.eval()
close(nn.parallel.data_parallel(ref, xs[0].to("cuda:0"), DEVICES), ref(xs[0].to("cuda:0")))
t = torch.arange(10.0, device="cuda:0")
parts = comm.scatter(t, DEVICES, chunk_sizes=[1, 2, 3, 4])
assert [(p.tolist(), str(p.device)) for p in parts] == [
    ([0.0], "cuda:0"), ([1.0, 2.0], "cuda:1"), ([3.0, 4.0, 5.0], "cuda:2"),
    ([6.0, 7.0, 8.0, 9.0], "cuda:3")]  # fmt: skip
back = comm.gather(parts, destination="cpu")
assert back.device == torch.device("cpu") and back.tolist() == t.tolist()
copies = comm.broadcast(t, [0, 2])
assert copies[0] is t and copies[1].device == torch.device("cuda:2")
total = comm.reduce_add([torch.full((2,), float(i + 1), device=f"cuda:{i}") for i in DEVICES], 2)
assert total.device == torch.device("cuda:2") and total.tolist() == [10.0, 10.0]
reps = nn.parallel.replicate(ref, [0, 3])
assert reps[1].l1.weight.device == torch.device("cuda:3") and not list(reps[1].parameters())
assert reps[0].bn.running_mean is ref.bn.running_mean

# 8. A 'cuda' device mesh is made of the devices cuda:0..3 name.
import torch.distributed as dist  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.tensor import Shard, distribute_tensor  # noqa: E402

dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
d = distribute_tensor(
    torch.arange(8.0, device="cuda:0"), init_device_mesh("cuda", (4,)), [Shard(0)]
)
assert sorted(str(torch.tensor(s.data).device) for s in d._array.addressable_shards) == [
    f"cuda:{i}" for i in DEVICES
]
assert d.full_tensor().tolist() == list(range(8))
dist.destroy_process_group()

# 9. A compiled step through DataParallel runs eagerly, with the compiler's warning.
eager, compiled = make(), make()
x = xs[0].to("cuda:0")


def step(net, opt):
    opt.zero_grad()
    net(x).pow(2).mean().backward()
    opt.step()


compiled_step = torch.compile(step)
for m, fn in ((eager, step), (compiled, compiled_step)):
    net = nn.DataParallel(m, device_ids=DEVICES)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(net, opt)
        fn(net, opt)
    if fn is compiled_step:
        assert any("DataParallel over several devices runs eagerly" in str(w.message)
                   for w in caught), [str(w.message) for w in caught]  # fmt: skip
for p, q in zip(eager.parameters(), compiled.parameters()):
    close(p, q)

# 10. PyTorch's elementwise ops take a 0-dim CPU tensor beside accelerator tensors (its
# gradient comes back to the CPU); other mixes, and non-elementwise ops, raise.
a = torch.arange(4.0, device="cuda:1", requires_grad=True)
s = torch.tensor(3.0, requires_grad=True)
y = torch.where(a > 1, a * s, torch.tensor(0.0))
assert y.device == torch.device("cuda:1") and y.tolist() == [0.0, 0.0, 6.0, 9.0]
y.sum().backward()
assert a.grad.device == a.device and a.grad.tolist() == [0.0, 0.0, 3.0, 3.0]
assert s.grad.device == torch.device("cpu") and s.grad.item() == 5.0
for bad in (lambda: a + torch.ones(4), lambda: torch.cat([a, torch.ones(1)])):
    try:
        bad()
    except RuntimeError as e:
        assert "Expected all tensors to be on the same device" in str(e), e
    else:
        raise AssertionError("mixed devices accepted")

# 11. 'cuda' without an index is the current device, as in PyTorch.
torch.cuda.set_device(2)
made = [torch.zeros(2, device="cuda"), torch.ones(3).to("cuda"), torch.arange(3, device="cuda")]
assert [str(t.device) for t in made] == ["cuda:2"] * 3, [t.device for t in made]
with torch.cuda.device(1):
    assert torch.full((2,), 1.0, device="cuda").device == torch.device("cuda:1")
assert torch.empty(1, device="cuda").device == torch.device("cuda:2")
torch.cuda.set_device(0)
print("ok")
