"""Training through nn.DataParallel over 4 devices, printed as JSON (compat/test_data_parallel).

Under jtorch with 4 accelerators (JTORCH_CUDA_IS_CPU=1,
XLA_FLAGS=--xla_force_host_platform_device_count=5) it runs `nn.DataParallel`. PyTorch's
DataParallel needs CUDA, so under PyTorch on a CPU the script computes what DataParallel is
documented to compute, on one device: the batch cut by `torch.chunk`, each chunk through the
module with the shared parameters, replica 0 with the module's own buffers and the others
with copies (so BatchNorm normalises per chunk and keeps chunk 0's running statistics), the
outputs concatenated, gradients summed into the parameters.
"""

import json

import numpy as np
import torch
import torch.nn as nn

N = 4
PARALLEL = torch.cuda.is_available() and torch.cuda.device_count() >= N
DEV = "cuda:0" if PARALLEL else "cpu"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.bn, self.l2 = nn.Linear(6, 10), nn.BatchNorm1d(10), nn.Linear(10, 4)
        self.seen = []

    def forward(self, x, shift=None):
        self.seen.append(list(x.shape))
        h = self.l2(torch.tanh(self.bn(self.l1(x))))
        return h if shift is None else h + shift


def per_chunk(model, x, **kwargs):
    """PyTorch's DataParallel semantics, computed on one device."""
    from torch.func import functional_call

    params = dict(model.named_parameters())
    outs = []
    for i, c in enumerate(x.chunk(N)):
        buffers = {k: (b if i == 0 else b.clone()) for k, b in model.named_buffers()}
        outs.append(functional_call(model, {**params, **buffers}, (c,), kwargs))
    return torch.cat(outs)


rng = np.random.default_rng(0)
model = Net()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
model = model.to(DEV)
run = nn.DataParallel(model, device_ids=list(range(N))) if PARALLEL else None
# SGD, not Adam: l1.bias feeds BatchNorm, so its gradient is rounding noise that Adam would
# scale up to full steps.
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
result = {"losses": [], "chunks": {}}
for _ in range(3):
    x = torch.tensor(rng.standard_normal((14, 6)).astype(np.float32), device=DEV)
    y = torch.tensor(rng.standard_normal((14, 4)).astype(np.float32), device=DEV)
    opt.zero_grad()
    out = run(x, shift=0.5) if PARALLEL else per_chunk(model, x, shift=0.5)
    loss = nn.functional.smooth_l1_loss(out, y)
    loss.backward()
    opt.step()
    result["losses"].append(loss.item())
result["params"] = {k: v.detach().cpu().flatten().tolist() for k, v in model.named_parameters()}
result["buffers"] = {k: v.cpu().flatten().tolist() for k, v in model.named_buffers()}

# The input's gradient comes back through the scatter.
x = torch.tensor(rng.standard_normal((9, 6)).astype(np.float32), device=DEV, requires_grad=True)
model.eval()
out = run(x) if PARALLEL else per_chunk(model, x)
(out * out).sum().backward()
result["input_grad"] = x.grad.cpu().flatten().tolist()

# Chunk sizes: what each replica's forward saw.
for rows in (1, 3, 5, 7, 13):
    model.seen.clear()
    x = torch.zeros(rows, 6, device=DEV)
    if PARALLEL:
        run(x)
    else:
        for c in x.chunk(N):
            model(c)
    result["chunks"][str(rows)] = model.seen[:]
print(json.dumps(result))
