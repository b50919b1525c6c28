"""`torch.distributed.checkpoint` over several ranks: an FSDP2 model and its Adam state saved
with `dcp.save`, loaded into a fresh sharded model (`get_state_dict`/`set_state_dict`), and
trained on: every rank checks that the restored run continues exactly as the original, and
rank 0 prints the saved checkpoint's keys and shapes and the parameters after training on.
"""

import os
import shutil
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.fsdp import fully_shard

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()


def make_model(seed):
    rng = np.random.default_rng(seed)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.GELU(), torch.nn.Linear(7, 3))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.4))
    for layer in (model[0], model[2]):
        fully_shard(layer)
    fully_shard(model)
    return model


data = np.random.default_rng(1)
x = torch.tensor(data.standard_normal((5, 4 * n, 5)).astype(np.float32))
y = torch.tensor(data.standard_normal((5, 4 * n, 3)).astype(np.float32))


def train(model, opt, steps):
    for step in steps:
        xb, yb = x[step, 4 * r : 4 * r + 4], y[step, 4 * r : 4 * r + 4]
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(xb), yb).backward()
        opt.step()


model = make_model(0)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
train(model, opt, range(2))

where = [tempfile.mkdtemp() if r == 0 else None]
dist.broadcast_object_list(where, src=0)
path = os.path.join(where[0], "step2")
model_sd, optim_sd = get_state_dict(model, opt)
dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=path)

restored = make_model(7)  # other weights: the load must replace them all
restored_opt = torch.optim.Adam(restored.parameters(), lr=0.05)
model_sd, optim_sd = get_state_dict(restored, restored_opt)
state = {"model": model_sd, "optim": optim_sd}
dcp.load(state, checkpoint_id=path)
set_state_dict(
    restored, restored_opt, model_state_dict=state["model"], optim_state_dict=state["optim"]
)

train(model, opt, range(2, 5))
train(restored, restored_opt, range(2, 5))
lines = []
for (name, p), q in zip(model.named_parameters(), restored.parameters()):
    a, b = p.full_tensor(), q.full_tensor()
    assert torch.equal(a, b), (name, (a - b).abs().max())
    lines.append(
        f"{name} {tuple(p.to_local().shape)} "
        f"{[round(v, 4) for v in a.detach().reshape(-1).tolist()]}"
    )
meta = dcp.FileSystemReader(path).read_metadata()
keys = sorted((k, tuple(v.size)) for k, v in meta.state_dict_metadata.items() if hasattr(v, "size"))
dist.barrier()
if r == 0:
    print("saved:", keys)
    print("\n".join(lines))
    print("ok", n)
    shutil.rmtree(where[0])
dist.barrier()
dist.destroy_process_group()
