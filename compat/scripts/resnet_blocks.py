# compat: rtol=0.3 atol=0.1
"""A tiny ResNet: BasicBlocks with shortcut projections, AdaptiveAvgPool, CosineAnnealingLR."""
import numpy as np
import torch
from torch import nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, num_blocks=(1, 1), num_classes=4, width=8):
        super().__init__()
        self.in_planes = width
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.layer1 = self._make_layer(width, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(2 * width, num_blocks[1], stride=2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2 * width, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, planes, n, stride):
        layers = []
        for s in [stride] + [1] * (n - 1):
            layers.append(BasicBlock(self.in_planes, planes, s))
            self.in_planes = planes
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.stem(x)
        x = self.layer2(self.layer1(x))
        x = self.pool(x)
        return self.fc(x.view(x.size(0), -1))


def color_blobs(n, rng):
    """Each class is a dominant colour channel / a mix; easy but needs the conv stack."""
    y = rng.integers(0, 4, size=n)
    x = 0.5 * rng.standard_normal((n, 3, 12, 12)).astype(np.float32)
    for i, c in enumerate(y):
        if c < 3:
            x[i, c] += 1.0
        else:
            x[i] -= 0.8
    return torch.tensor(x), torch.tensor(y)


torch.manual_seed(1)
rng = np.random.default_rng(1)
xs, ys = color_blobs(256, rng)
xt, yt = color_blobs(128, rng)

net = ResNet()
print(net.layer2)
print("blocks:", sum(isinstance(m, BasicBlock) for m in net.modules()))
print("params:", sum(p.numel() for p in net.parameters()))
print("output shape:", net(xs[:2]).shape)

epochs = 4
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
for epoch in range(epochs):
    net.train()
    losses = []
    for i in range(0, 256, 32):
        loss = loss_fn(net(xs[i:i + 32]), ys[i:i + 32])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    sched.step()
    print(f"[{epoch}] loss {sum(losses) / len(losses):.3f} lr {opt.param_groups[0]['lr']:.4f}")

net.eval()
with torch.no_grad():
    logits = net(xt)
    probs = logits.softmax(-1)
    acc = (logits.argmax(-1) == yt).float().mean()
print(f"accuracy {acc.item():.3f}")
print("probs sum to one:", torch.allclose(probs.sum(-1), torch.ones(128)))
print("accuracy > 0.85:", acc.item() > 0.85)
