# compat: rtol=1e-4 atol=1e-5 timeout=900 requires=accelerate,safetensors
"""accelerate's training features on one process: gradient accumulation with clipping and a
scheduler, gather_for_metrics, save_state/load_state (model, optimizer, RNG states),
unwrap_model/save_model (safetensors), the operations utilities, find_executable_batch_size
and skip_first_batches; each prints what it computed."""

import os
import tempfile

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
from accelerate import Accelerator
from accelerate.utils import set_seed

from _common import report

rng = np.random.default_rng(0)
X = torch.from_numpy(rng.standard_normal((64, 8)).astype(np.float32))
Y = torch.from_numpy((rng.standard_normal((64, 1)) * 0.1).astype(np.float32)) + X[:, :1] * 2


def make():
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    r = np.random.default_rng(1)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.from_numpy((r.standard_normal(tuple(p.shape)) * 0.3).astype(np.float32)))
    return m


def accumulate():
    acc = Accelerator(gradient_accumulation_steps=4)
    m = make()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    sch = torch.optim.lr_scheduler.StepLR(opt, 2, 0.5)
    dl = DataLoader(TensorDataset(X, Y), batch_size=8, shuffle=False)
    m, opt, dl, sch = acc.prepare(m, opt, dl, sch)
    losses = []
    for x, y in dl:
        with acc.accumulate(m):
            loss = torch.nn.functional.mse_loss(m(x), y)
            acc.backward(loss)
            if acc.sync_gradients:
                acc.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            sch.step()
            opt.zero_grad()
        losses.append(round(loss.item(), 5))
    return losses, sch.get_last_lr(), acc.step


def gather_metrics():
    acc = Accelerator()
    m = make()
    dl = DataLoader(TensorDataset(X[:10], Y[:10]), batch_size=4)
    m, dl = acc.prepare(m, dl)
    outs = []
    for x, y in dl:
        with torch.no_grad():
            p = m(x)
        p, y = acc.gather_for_metrics((p, y))
        outs.append(tuple(p.shape))
    return outs, acc.num_processes, acc.is_main_process, str(acc.device)


def save_load_state():
    acc = Accelerator()
    m = make()
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    m, opt = acc.prepare(m, opt)
    loss = torch.nn.functional.mse_loss(m(X), Y)
    acc.backward(loss)
    opt.step()
    with tempfile.TemporaryDirectory() as d:
        acc.save_state(d)
        files = sorted(os.listdir(d))
        before = [round(v, 5) for v in m[0].weight.reshape(-1)[:3].tolist()]
        with torch.no_grad():
            m[0].weight.zero_()
        acc.load_state(d)
        after = [round(v, 5) for v in m[0].weight.reshape(-1)[:3].tolist()]
        mom = opt.state_dict()["state"][0]["momentum_buffer"].reshape(-1)[:2].tolist()
    return files, before == after, after, [round(v, 5) for v in mom]


def unwrap_and_save():
    acc = Accelerator()
    m = acc.prepare(make())
    u = acc.unwrap_model(m)
    with tempfile.TemporaryDirectory() as d:
        acc.save_model(m, d)
        files = sorted(os.listdir(d))
        from safetensors.torch import load_file

        sd = load_file(os.path.join(d, "model.safetensors"))
    return type(u).__name__, files, sorted(sd), round(float(sd["0.weight"].sum()), 5)


def seeds_and_utils():
    from accelerate.utils import (
        send_to_device,
        find_batch_size,
        pad_across_processes,
        reduce,
        broadcast,
        gather,
    )

    set_seed(0)
    acc = Accelerator()
    t = torch.arange(6.0).reshape(2, 3)
    return (
        find_batch_size({"a": t, "b": [t]}),
        tuple(send_to_device({"x": t}, acc.device)["x"].shape),
        tuple(pad_across_processes(t, dim=1).shape),
        reduce(t, "mean").tolist(),
        broadcast(t).tolist(),
        gather(t).tolist(),
    )


def tracking_and_memory():
    from accelerate.utils import find_executable_batch_size

    acc = Accelerator()
    sizes = []

    @find_executable_batch_size(starting_batch_size=64)
    def loop(batch_size):
        sizes.append(batch_size)
        if batch_size > 16:
            raise RuntimeError("CUDA out of memory.")
        return batch_size

    return loop(), sizes, acc.free_memory() is None


def skip_first_batches():
    acc = Accelerator()
    dl = acc.prepare(DataLoader(TensorDataset(X[:20]), batch_size=4))
    sk = acc.skip_first_batches(dl, 3)
    return [tuple(b[0].shape) for b in sk], len(dl)


for name, fn in list(globals().items()):
    if callable(fn) and name in (
        "accumulate",
        "gather_metrics",
        "save_load_state",
        "unwrap_and_save",
        "seeds_and_utils",
        "tracking_and_memory",
        "skip_first_batches",
    ):
        report(name, fn)
