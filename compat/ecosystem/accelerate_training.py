# compat: rtol=1e-4 atol=1e-5 timeout=300 requires=accelerate
"""accelerate as its users train with it on one CPU process: prepare(model, optimizer,
dataloader, scheduler), gradient accumulation with accumulate(), backward, clip_grad_norm_,
gather/reduce of metrics, save_state/load_state resuming to the same numbers, unwrap_model."""

import os
import tempfile

import numpy as np
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
X = torch.tensor(rng.standard_normal((48, 6)), dtype=torch.float32)
W_TRUE = rng.standard_normal((6, 1))
Y = torch.tensor(np.tanh(X.numpy() @ W_TRUE) + 0.05 * rng.standard_normal((48, 1)),
                 dtype=torch.float32)


def make_model():
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    init = np.random.default_rng(1)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(0.3 * init.standard_normal(tuple(p.shape)), dtype=torch.float32))
    return model


def build(accelerator):
    model = make_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    loader = DataLoader(TensorDataset(X, Y), batch_size=8, shuffle=False)
    return accelerator.prepare(model, optimizer, loader, scheduler)


def train_epoch(accelerator, model, optimizer, loader, scheduler):
    losses = []
    for xb, yb in loader:
        with accelerator.accumulate(model):
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                norm = accelerator.clip_grad_norm_(model.parameters(), max_norm=1.0)
                print(f"  synced step, grad norm {float(norm):.6f}")
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        losses.append(accelerator.gather(loss.detach()[None]))
    return torch.cat(losses)


set_seed(0)
accelerator = Accelerator(gradient_accumulation_steps=2, cpu=True)
print("device", accelerator.device, "processes", accelerator.num_processes,
      "main", accelerator.is_main_process, "precision", accelerator.mixed_precision)
model, optimizer, loader, scheduler = build(accelerator)
print("prepared", type(optimizer).__name__, type(scheduler).__name__, len(loader))
for epoch in range(2):
    losses = train_epoch(accelerator, model, optimizer, loader, scheduler)
    print(f"epoch {epoch} losses {[round(float(v), 6) for v in losses]}")
    mean = accelerator.reduce(losses.sum(), reduction="sum") / len(losses)
    print(f"epoch {epoch} mean {float(mean):.6f} lr {scheduler.get_last_lr()[0]:.6f}")

with tempfile.TemporaryDirectory() as d:
    ckpt = os.path.join(d, "ckpt")
    accelerator.save_state(ckpt)
    print("saved files", sorted(os.listdir(ckpt)))
    before = [p.detach().clone() for p in model.parameters()]
    next_losses = train_epoch(accelerator, model, optimizer, loader, scheduler)
    print("continued", [round(float(v), 6) for v in next_losses])

    acc2 = Accelerator(gradient_accumulation_steps=2, cpu=True)
    model2, optimizer2, loader2, scheduler2 = build(acc2)
    acc2.load_state(ckpt)
    print("restored equal", all(torch.equal(a, b) for a, b in zip(before, model2.parameters())))
    print("restored lr", scheduler2.get_last_lr()[0])
    resumed = train_epoch(acc2, model2, optimizer2, loader2, scheduler2)
    print("resumed", [round(float(v), 6) for v in resumed])

unwrapped = accelerator.unwrap_model(model)
print("unwrapped", type(unwrapped).__name__, sorted(unwrapped.state_dict()))
with torch.no_grad():
    print("prediction", [round(float(v), 6) for v in unwrapped(X[:3]).flatten()])
