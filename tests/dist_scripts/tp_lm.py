"""Tensor parallelism with an LLM's plan: a tiny language model whose embedding is split by
vocabulary rows (`RowwiseParallel`), its MLP column- then row-wise, and its head column-wise
with a replicated output, trained for a few steps; every rank checks the gathered parameters
against a plain copy trained on the same tokens. `CommDebugMode` counts the collectives of a
training step: the layers compute on their local pieces (no weight is gathered). Rank 0
prints the counts, the losses and the parameters.
"""

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (n,))
VOCAB, DIM = 11, 6


class LM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM, padding_idx=VOCAB - 1)
        self.up = torch.nn.Linear(DIM, 8)
        self.down = torch.nn.Linear(8, DIM)
        self.head = torch.nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = h + self.down(torch.nn.functional.gelu(self.up(h)))
        return self.head(h)


def make_model():
    rng = np.random.default_rng(0)
    model = LM()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.4))
    return model


data = np.random.default_rng(1)
tokens = torch.tensor(data.integers(0, VOCAB, (4, 2, 5)))
reference, model = make_model(), make_model()
parallelize_module(
    model,
    mesh,
    {
        "embed": RowwiseParallel(input_layouts=Replicate()),
        "up": ColwiseParallel(),
        "down": RowwiseParallel(),
        "head": ColwiseParallel(output_layouts=Replicate()),
    },
)
opt = torch.optim.AdamW(model.parameters(), lr=0.05)
ref_opt = torch.optim.AdamW(reference.parameters(), lr=0.05)
comm = CommDebugMode()
lines = []
for step in range(4):
    x, y = tokens[step, :, :-1], tokens[step, :, 1:]
    for net, o in ((model, opt), (reference, ref_opt)):
        o.zero_grad()
        with comm:
            loss = torch.nn.functional.cross_entropy(net(x).reshape(-1, VOCAB), y.reshape(-1))
            loss.backward()
        o.step()
        if net is model:
            lines.append(
                f"step {step} loss {loss.item():.5f} collectives "
                f"{sorted((str(k), v) for k, v in comm.get_comm_counts().items())}"
            )
for (name, p), q in zip(model.named_parameters(), reference.parameters()):
    full = p.full_tensor()
    assert torch.allclose(full, q, rtol=1e-4, atol=1e-5), (name, (full - q).abs().max())
    lines.append(
        f"{name} {p.placements} {tuple(p.to_local().shape)} "
        f"{[round(v, 4) for v in full.detach().reshape(-1).tolist()[:12]]}"
    )
if r == 0:
    print("\n".join(lines))
    print("ok", n)
dist.barrier()
dist.destroy_process_group()
