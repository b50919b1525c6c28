# compat: rtol=1e-4 atol=1e-5
"""Checkpointing: train, save model + optimizer + scheduler state to a temp dir, resume into
fresh objects and check that the resumed run continues exactly like an uninterrupted one.
Weights start from a fixed numpy initialisation, so the numbers are compared tightly."""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(7)
X = torch.from_numpy(rng.standard_normal((64, 5)).astype(np.float32))
Y = torch.from_numpy((X.numpy() @ rng.standard_normal((5, 2)).astype(np.float32)) ** 2)
W1 = rng.standard_normal((16, 5)).astype(np.float32) * 0.4
W2 = rng.standard_normal((2, 16)).astype(np.float32) * 0.4


def build():
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
    with torch.no_grad():
        model[0].weight.copy_(torch.from_numpy(W1))
        model[0].bias.fill_(0.1)
        model[2].weight.copy_(torch.from_numpy(W2))
        model[2].bias.zero_()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
    return model, opt, sched


def train(model, opt, sched, epochs, start=0):
    for epoch in range(start, start + epochs):
        for i in range(0, 64, 16):
            loss = nn.functional.mse_loss(model(X[i:i + 16]), Y[i:i + 16])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        print(f"epoch {epoch} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.6f}")
    return loss.item()


model, opt, sched = build()
train(model, opt, sched, 3)
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "ckpt.pt")
    torch.save({
        "epoch": 3,
        "model_state_dict": model.state_dict(),
        "optimizer_state_dict": opt.state_dict(),
        "scheduler_state_dict": sched.state_dict(),
        "note": "mid-training",
    }, path)
    print("checkpoint written:", os.path.getsize(path) > 0)
    # keep going without interruption, for reference
    reference = train(model, opt, sched, 2, start=3)

    ckpt = torch.load(path)
    print("keys:", sorted(ckpt))
    print("model keys:", list(ckpt["model_state_dict"].keys()))
    print("optimizer state:", sorted(ckpt["optimizer_state_dict"]["state"][0].keys()),
          "step", ckpt["optimizer_state_dict"]["state"][0]["step"])
    print("param_groups lr:", round(ckpt["optimizer_state_dict"]["param_groups"][0]["lr"], 6))
    print("scheduler:", {k: v for k, v in ckpt["scheduler_state_dict"].items()
                         if k in ("last_epoch", "gamma", "_step_count")})

    model2, opt2, sched2 = build()
    print(model2.load_state_dict(ckpt["model_state_dict"]))
    opt2.load_state_dict(ckpt["optimizer_state_dict"])
    sched2.load_state_dict(ckpt["scheduler_state_dict"])
    resumed = train(model2, opt2, sched2, 2, start=ckpt["epoch"])
    print("resumed == uninterrupted:", abs(resumed - reference) < 1e-6)

    # weights-only file of just the state_dict, loaded with map_location
    wpath = os.path.join(tmp, "weights.pth")
    torch.save(model2.state_dict(), wpath)
    sd = torch.load(wpath, map_location="cpu", weights_only=True)
    print({k: (tuple(v.shape), str(v.dtype)) for k, v in sd.items()})
    print("same weights:", all(torch.equal(sd[k], v) for k, v in model2.state_dict().items()))
