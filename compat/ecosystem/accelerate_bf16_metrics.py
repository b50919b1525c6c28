# compat: rtol=1e-2 atol=5e-3 timeout=300 requires=accelerate
"""accelerate with bf16 mixed precision on the CPU (the forward under autocast), evaluation
with gather_for_metrics over a last batch that does not fill up, find_executable_batch_size,
and the utilities users call (set_seed, send_to_device, pad_across_processes,
get_state_dict, free_memory)."""

import numpy as np
import torch
from accelerate import Accelerator
from accelerate.utils import find_executable_batch_size, send_to_device, set_seed
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(5)
X = torch.tensor(rng.standard_normal((30, 4)), dtype=torch.float32)
Y = torch.tensor(rng.integers(0, 2, size=30))

set_seed(0)
accelerator = Accelerator(mixed_precision="bf16", cpu=True)
print("precision", accelerator.mixed_precision, "native amp", accelerator.native_amp)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
init = np.random.default_rng(6)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(0.5 * init.standard_normal(tuple(p.shape)), dtype=torch.float32))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train = DataLoader(TensorDataset(X, Y), batch_size=8)
evaluate = DataLoader(TensorDataset(X, Y), batch_size=7)
model, optimizer, train, evaluate = accelerator.prepare(model, optimizer, train, evaluate)

for xb, yb in train:
    logits = model(xb)
    loss = torch.nn.functional.cross_entropy(logits.float(), yb)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    print("logits dtype", logits.dtype, "loss", round(loss.item(), 4))
print("param dtype", next(model.parameters()).dtype)

model.eval()
preds, labels = [], []
with torch.no_grad():
    for xb, yb in evaluate:
        p, t = accelerator.gather_for_metrics((model(xb).argmax(-1), yb))
        preds.append(p)
        labels.append(t)
preds, labels = torch.cat(preds), torch.cat(labels)
print("eval samples", len(preds), "accuracy", round(float((preds == labels).float().mean()), 6))
print("predictions", preds.tolist())

with accelerator.autocast():
    out = model(X[:2])
print("autocast output", out.dtype, [round(float(v), 4) for v in out.float().flatten()])

padded = accelerator.pad_across_processes(torch.arange(3), dim=0, pad_index=-1)
print("padded", padded.tolist())
moved = send_to_device({"a": torch.ones(2), "b": [torch.zeros(1)]}, accelerator.device)
print("moved", {k: str(v.device) if hasattr(v, "device") else [str(t.device) for t in v]
                for k, v in moved.items()})
state = accelerator.get_state_dict(model)
print("state", sorted(state), state["0.weight"].dtype)
print("reduced mean", float(accelerator.reduce(torch.tensor([2.0, 4.0]), reduction="mean").sum()))


@find_executable_batch_size(starting_batch_size=64)
def run(batch_size):
    if batch_size > 16:
        raise RuntimeError("CUDA out of memory.")   # what the decorator retries on
    return batch_size


print("executable batch size", run())
model, optimizer = accelerator.free_memory(model, optimizer)
print("freed", model, optimizer)
