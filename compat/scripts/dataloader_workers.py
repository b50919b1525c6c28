# compat: rtol=1e-4 atol=1e-5
"""A custom map-style Dataset of variable-length sequences, a padding collate_fn, and a
DataLoader with two worker processes; everything runs under `if __name__ == "__main__":`."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, get_worker_info


class SeqDataset(Dataset):
    """Sequence i has length 2 + i % 7; its label is whether its values sum above zero."""

    def __init__(self, n, seed=0):
        rng = np.random.default_rng(seed)
        self.items = [rng.standard_normal(2 + i % 7).astype(np.float32) for i in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        seq = torch.from_numpy(self.items[idx])
        info = get_worker_info()
        worker = -1 if info is None else info.id
        return {"x": seq, "y": int(seq.sum() > 0), "worker": worker}


def pad_collate(batch):
    lengths = torch.tensor([len(b["x"]) for b in batch])
    padded = torch.zeros(len(batch), int(lengths.max()))
    for i, b in enumerate(batch):
        padded[i, : len(b["x"])] = b["x"]
    labels = torch.tensor([b["y"] for b in batch])
    workers = torch.tensor([b["worker"] for b in batch])
    return padded, lengths, labels, workers


class MeanPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        nn.init.zeros_(self.lin.weight)
        nn.init.zeros_(self.lin.bias)

    def forward(self, padded, lengths):
        mask = torch.arange(padded.size(1))[None, :] < lengths[:, None]
        total = (padded * mask).sum(1)
        mean = total / lengths
        return self.lin(torch.stack([total, mean], dim=1))


def main():
    torch.manual_seed(0)
    ds = SeqDataset(96)
    print("dataset size:", len(ds), "| item 3:", ds[3]["x"].shape, ds[3]["y"], ds[3]["worker"])

    loader = DataLoader(ds, batch_size=16, shuffle=False, num_workers=2,
                        collate_fn=pad_collate, persistent_workers=True)
    print("batches per epoch:", len(loader))
    first = next(iter(loader))
    print("first batch:", first[0].shape, first[0].dtype, first[1].tolist())
    print("labels:", first[2].tolist())

    seen_workers = set()
    model = MeanPool()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        total, n = 0.0, 0
        for padded, lengths, labels, workers in loader:
            seen_workers.update(workers.tolist())
            loss = nn.functional.cross_entropy(model(padded, lengths), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(labels)
            n += len(labels)
        print(f"epoch {epoch}: mean loss {total / n:.4f} over {n} samples")
    print("workers used:", sorted(seen_workers))

    # Shuffled loading with a seeded generator: every index appears exactly once per epoch.
    order_loader = DataLoader(range(20), batch_size=6, shuffle=True, num_workers=2,
                              generator=torch.Generator().manual_seed(1))
    batches = [b.tolist() for b in order_loader]
    print("batch sizes:", [len(b) for b in batches], "| permutation:",
          sorted(i for b in batches for i in b) == list(range(20)))
    print("drop_last batches:", len(DataLoader(ds, batch_size=10, drop_last=True)))

    with torch.no_grad():
        correct = 0
        for padded, lengths, labels, _ in DataLoader(ds, batch_size=32, collate_fn=pad_collate):
            correct += (model(padded, lengths).argmax(1) == labels).sum().item()
    print(f"accuracy: {correct / len(ds):.3f}; above 0.8: {correct / len(ds) > 0.8}")


if __name__ == "__main__":
    main()
