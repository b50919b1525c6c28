# compat: rtol=0.3 atol=0.1
"""A small CNN with BatchNorm, Dropout and a StepLR schedule on synthetic 'stripes' images."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)


def make_images(n):
    # class 0: horizontal stripes, class 1: vertical stripes, class 2: a bright square
    labels = rng.integers(0, 3, size=n)
    imgs = 0.3 * rng.standard_normal((n, 1, 16, 16)).astype(np.float32)
    for i, c in enumerate(labels):
        if c == 0:
            imgs[i, 0, ::4, :] += 1.0
        elif c == 1:
            imgs[i, 0, :, ::4] += 1.0
        else:
            r, s = rng.integers(2, 9, size=2)
            imgs[i, 0, r:r + 6, s:s + 6] += 1.0
    return torch.from_numpy(imgs), torch.from_numpy(labels)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


x_train, y_train = make_images(384)
x_test, y_test = make_images(128)
print(x_train.shape, x_train.dtype, y_train[:10].tolist())

model = Net()
print(model)
print("trainable params:", sum(p.numel() for p in model.parameters() if p.requires_grad))
print("buffers:", [name for name, _ in model.named_buffers()])

optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
criterion = nn.CrossEntropyLoss()

for epoch in range(6):
    model.train()
    running, correct = 0.0, 0
    for i in range(0, len(x_train), 32):
        xb, yb = x_train[i:i + 32], y_train[i:i + 32]
        optimizer.zero_grad()
        out = model(xb)
        loss = criterion(out, yb)
        loss.backward()
        optimizer.step()
        running += loss.item() * xb.size(0)
        correct += (out.argmax(1) == yb).sum().item()
    scheduler.step()
    print(f"Epoch {epoch + 1}: loss={running / len(x_train):.4f} "
          f"train_acc={correct / len(x_train):.3f} lr={scheduler.get_last_lr()[0]:.5f}")

model.eval()
with torch.no_grad():
    out = model(x_test)
    test_loss = criterion(out, y_test).item()
    acc = (out.argmax(1) == y_test).float().mean().item()
print(f"Test loss {test_loss:.4f}, accuracy {acc:.3f}")
print("running_mean shape:", model.bn1.running_mean.shape, "batches tracked:",
      model.bn1.num_batches_tracked.item())
print("accuracy > 0.9:", acc > 0.9)
