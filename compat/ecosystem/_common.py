"""Helpers shared by the ecosystem cases (imported as `_common` from the case's directory).

Everything here uses only the public torch API, so it runs the same under PyTorch and under
`python -m jtorch`. Weights come from numpy with a fixed seed, so both runs compute on the
same numbers.
"""

import sys
import traceback

import numpy as np
import torch


def fill_from_numpy(model, seed=0, scale=0.02):
    """Sets every parameter of `model` from numpy: norm weights 1, biases 0, others N(0, scale).

    Parameters are visited in sorted name order, so the values depend only on the names and
    shapes, not on the order modules were built in.
    """
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            lname = name.lower()
            if p.ndim == 1 and ("norm" in lname or "ln" in lname) and lname.endswith("weight"):
                values = np.ones(p.shape)
            elif lname.endswith("bias"):
                values = np.zeros(p.shape)
            else:
                values = rng.standard_normal(p.shape) * scale
            p.copy_(torch.from_numpy(values.astype(np.float32)))


def summary(name, t, k=4):
    """One line: shape, dtype, mean/abs-mean and the first `k` values, rounded."""
    t = t.detach().float()
    flat = t.reshape(-1)
    head = " ".join(f"{v:.5f}" for v in flat[:k].tolist())
    print(f"{name}: shape={list(t.shape)} mean={t.mean().item():.6f} "
          f"absmean={t.abs().mean().item():.6f} first=[{head}]")


def grad_norm(model):
    """The global L2 norm of the parameters' gradients."""
    total = 0.0
    for p in model.parameters():
        if p.grad is not None:
            total += float((p.grad.double() ** 2).sum())
    return total ** 0.5


def ids(batch, length, vocab, seed=1):
    """Token ids from numpy."""
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.integers(0, vocab, size=(batch, length)).astype(np.int64))


class TokenDataset(torch.utils.data.Dataset):
    """`n` sequences of 12 token ids under 61 (`ids`) as a language model's training items:
    `{"input_ids": x, "labels": x}` (what transformers' `Trainer` takes)."""

    def __init__(self, n, seed):
        self.x = ids(n, 12, 61, seed=seed)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"input_ids": self.x[i], "labels": self.x[i]}


def report(name, fn, show=str):
    """Prints `name` and `show(fn())`, or the error `fn` raised (its traceback to stderr), so
    that one failing part of a sweep is reported and the rest still run."""
    try:
        print(name, show(fn()))
    except Exception as e:  # noqa: BLE001 - reported, and the sweep goes on
        print(name, "ERROR", type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
        traceback.print_exc()
    sys.stdout.flush()
