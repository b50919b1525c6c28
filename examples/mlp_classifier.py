# compat: rtol=0.1 atol=0.03
"""Train a small MLP on a synthetic two-spirals-ish problem, with argparse options."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n, rng):
    t = rng.uniform(0.0, 3.0, size=n)
    label = rng.integers(0, 3, size=n)
    angle = t + label * (2 * np.pi / 3)
    x = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1)
    x += 0.05 * rng.standard_normal(x.shape)
    return torch.from_numpy(x).float(), torch.from_numpy(label)


class MLP(nn.Module):
    def __init__(self, in_dim, hidden, n_classes):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.net(x)


def main():
    parser = argparse.ArgumentParser(description="MLP classifier")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(args)

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    x_train, y_train = make_data(512, rng)
    x_test, y_test = make_data(256, rng)
    print("train:", x_train.shape, x_train.dtype, y_train.shape, y_train.dtype)

    model = MLP(2, args.hidden, 3)
    print(model)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"parameters: {n_params}")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    n = x_train.shape[0]
    first_loss = None
    for epoch in range(args.epochs):
        model.train()
        perm = torch.from_numpy(rng.permutation(n))
        total = 0.0
        for i in range(0, n, args.batch_size):
            idx = perm[i:i + args.batch_size]
            logits = model(x_train[idx])
            loss = F.cross_entropy(logits, y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * idx.numel()
        avg = total / n
        if first_loss is None:
            first_loss = avg
        if epoch % 20 == 0 or epoch == args.epochs - 1:
            print(f"epoch {epoch:3d} loss {avg:.4f}")

    model.eval()
    with torch.no_grad():
        pred = model(x_test).argmax(dim=1)
        acc = (pred == y_test).float().mean().item()
    print(f"test accuracy: {acc:.3f}")
    print("loss decreased:", avg < first_loss)
    print("accuracy above 0.9:", acc > 0.9)


if __name__ == "__main__":
    main()
