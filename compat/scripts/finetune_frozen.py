# compat: rtol=1e-4 atol=1e-5
"""Fine-tuning: load 'pretrained' backbone weights (strict=False), freeze them, capture features
with a forward hook, give the head its own param group, and step ReduceLROnPlateau on a
validation loss with early stopping. Weights come from formulas, so the run is deterministic."""
import torch
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU())

    def forward(self, x):
        return self.features(x)


class Classifier(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(12, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


def formula(shape, phase):
    n = torch.Size(shape).numel()
    return (torch.sin(torch.arange(n, dtype=torch.float32) * 1.3 + phase) * 0.4).reshape(shape)


pretrained = Backbone()
pretrained_sd = {k: formula(v.shape, i) for i, (k, v) in enumerate(pretrained.state_dict().items())}
pretrained_sd["extra.unused"] = torch.zeros(1)

model = Classifier()
result = model.backbone.load_state_dict(pretrained_sd, strict=False)
print("missing:", result.missing_keys, "unexpected:", result.unexpected_keys)
with torch.no_grad():
    model.head.weight.copy_(formula(model.head.weight.shape, 9.0))
    model.head.bias.zero_()

for p in model.backbone.parameters():
    p.requires_grad = False
trainable = [n for n, p in model.named_parameters() if p.requires_grad]
frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
print("trainable:", trainable, "| frozen params:", frozen)
print("modules:", [name for name, _ in model.named_modules()])

captured = {}


def save_features(module, inputs, output):
    captured["feat"] = output.detach()


handle = model.backbone.features[2].register_forward_hook(save_features)

x = torch.cos(torch.arange(120 * 6, dtype=torch.float32) * 0.7).reshape(120, 6)
y = torch.argmax(x[:, :3], dim=1)
x_train, y_train, x_val, y_val = x[:90], y[:90], x[90:], y[90:]

optimizer = torch.optim.SGD([
    {"params": model.head.parameters(), "lr": 0.5},
    {"params": model.backbone.parameters(), "lr": 0.01},   # frozen: stays untouched
], momentum=0.5)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5,
                                                       patience=1)
criterion = nn.CrossEntropyLoss()
best, bad_epochs, patience = float("inf"), 0, 4
before = model.backbone.features[0].weight.clone()
for epoch in range(25):
    model.train()
    loss = criterion(model(x_train), y_train)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model.eval()
    with torch.no_grad():
        val_loss = criterion(model(x_val), y_val).item()
    scheduler.step(val_loss)
    lrs = [g["lr"] for g in optimizer.param_groups]
    print(f"epoch {epoch:2d} train {loss.item():.5f} val {val_loss:.5f} lrs {lrs}")
    if val_loss < best - 1e-4:
        best, bad_epochs = val_loss, 0
    else:
        bad_epochs += 1
        if bad_epochs >= patience:
            print(f"early stopping at epoch {epoch}")
            break

handle.remove()
print("hook captured:", captured["feat"].shape, "| backbone unchanged:",
      torch.equal(before, model.backbone.features[0].weight))
print("backbone grads:", [p.grad for p in model.backbone.parameters()][:1])
with torch.no_grad():
    acc = (model(x_val).argmax(1) == y_val).float().mean().item()
print(f"val accuracy {acc:.4f}")
