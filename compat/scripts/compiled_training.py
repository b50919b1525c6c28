# compat: rtol=1e-3 atol=1e-4
"""A torch.compile'd model and a compiled training step (forward + backward + optimizer step).
Weights come from a fixed formula so the numbers are compared tightly."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.ln = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


def init_deterministic(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.sin(torch.arange(n, dtype=torch.float32) * 0.37 + i).view_as(p) * 0.3)


x = torch.cos(torch.arange(64 * 8, dtype=torch.float32) * 0.11).view(64, 8)
y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
print("labels:", torch.bincount(y, minlength=3).tolist())

model = Net()
init_deterministic(model)
eager_out = model(x)
compiled_model = torch.compile(model)
compiled_out = compiled_model(x)
print("compiled output:", compiled_out.shape, compiled_out.dtype)
print("compiled matches eager:", torch.allclose(eager_out, compiled_out, atol=1e-5))
print("compiled forward sum:", round(compiled_out.sum().item(), 4))

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


@torch.compile
def train_step(xb, yb):
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(xb), yb)
    loss.backward()
    optimizer.step()
    return loss


losses = []
for step in range(30):
    i = (step % 4) * 16
    loss = train_step(x[i:i + 16], y[i:i + 16])
    losses.append(loss.item())
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.5f}")
print("last loss:", f"{losses[-1]:.5f}", "| decreased:", losses[-1] < losses[0])
print("weight updated in place:", model.fc1.weight.requires_grad,
      model.fc1.weight.grad is not None)
with torch.no_grad():
    acc = (compiled_model(x).argmax(1) == y).float().mean().item()
print(f"accuracy {acc:.3f}")
