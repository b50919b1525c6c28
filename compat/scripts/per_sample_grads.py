# compat: rtol=1e-4 atol=1e-5
"""Per-sample gradients with torch.func: functional_call + grad + vmap, checked against a loop
of ordinary backward passes; then per-sample gradient clipping (DP-SGD style) for a few steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 10)
        self.fc2 = nn.Linear(10, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


model = SmallNet()
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).view_as(p) * (1 + 0.1 * k))

data = torch.sin(torch.arange(16 * 6, dtype=torch.float32)).view(16, 6)
targets = torch.arange(16) % 3

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return F.cross_entropy(predictions, target.unsqueeze(0))


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
per_sample = ft_compute_sample_grad(params, buffers, data, targets)
for name, g in per_sample.items():
    print(f"{name}: {tuple(g.shape)} {g.dtype}")


def loop_grads():
    out = {k: [] for k in params}
    for i in range(len(data)):
        model.zero_grad()
        F.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]).backward()
        for k, p in model.named_parameters():
            out[k].append(p.grad.clone())
    return {k: torch.stack(v) for k, v in out.items()}


expected = loop_grads()
print("matches manual loop:",
      all(torch.allclose(per_sample[k], expected[k], atol=1e-6) for k in params))
print("fc2.bias grads of sample 0:", per_sample["fc2.bias"][0])
print("per-sample grad norms:", [round(v, 4) for v in torch.stack(
    [g.flatten(1).norm(dim=1) for g in per_sample.values()], 1).norm(dim=1)[:6].tolist()])

# vmap of a plain function with in_dims/out_dims, and jacrev of the model output.
batched_dot = vmap(torch.dot)
print("batched dot:", batched_dot(data[:, :3], data[:, 3:])[:4])
from torch.func import jacrev  # noqa: E402

jac = jacrev(lambda x: functional_call(model, params, (x,)))(data[0])
print("jacobian:", jac.shape, "row sums:", jac.sum(1))

# DP-SGD style: clip every sample's gradient to norm 1, average, add no noise, step.
max_norm, lr = 1.0, 0.5
for step in range(4):
    g = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
    norms = torch.stack([v.flatten(1).norm(dim=1) for v in g.values()], 1).norm(dim=1)
    factor = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    params = {k: params[k] - lr * (factor.view(-1, *[1] * (v.dim() - 1)) * v).mean(0)
              for k, v in g.items()}
    with torch.no_grad():
        loss = F.cross_entropy(functional_call(model, params, (data,)), targets)
    print(f"dp step {step}: loss {loss.item():.6f} clipped {(norms > max_norm).sum().item()}")
