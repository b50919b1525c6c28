# compat: rtol=1e-5 atol=1e-6
"""DataLoader workers in a script without an `if __name__ == "__main__":` guard, as many
scripts written on Linux are (PyTorch forks its workers there): a numpy dataset, two
workers, a worker_init_fn, and training on the batches they collate."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


class Regression(Dataset):
    """Row i: features from a fixed numpy stream, target = features . [1, -2, 3] + 0.5."""

    def __init__(self, n):
        self.x = np.random.default_rng(0).standard_normal((n, 3)).astype(np.float32)
        self.y = self.x @ np.array([1.0, -2.0, 3.0], np.float32) + 0.5

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        info = get_worker_info()
        return self.x[i], self.y[i], -1 if info is None else info.id


def init_worker(worker_id):
    np.random.seed(1000 + worker_id)


loader = DataLoader(Regression(64), batch_size=16, num_workers=2, worker_init_fn=init_worker)
model = torch.nn.Linear(3, 1)
with torch.no_grad():
    model.weight.zero_()
    model.bias.zero_()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
workers = set()
for epoch in range(4):
    total = 0.0
    for x, y, w in loader:
        workers.update(w.tolist())
        loss = torch.nn.functional.mse_loss(model(x).squeeze(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: loss {total / len(loader):.5f}")
print("batch:", x.shape, x.dtype, y.dtype, "| workers:", sorted(workers))
print("weights:", [round(v, 4) for v in model.weight.flatten().tolist()],
      round(model.bias.item(), 4))
