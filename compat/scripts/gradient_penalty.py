# compat: rtol=0.3 atol=0.1
"""WGAN-GP style critic training: gradient penalty through torch.autograd.grad(create_graph=True),
plus a double-backward sanity check against a closed form."""
import numpy as np
import torch
import torch.nn as nn

# Second derivatives first: f(x) = sum(sin(x) * x^2); check grad and Hessian-vector product.
x = torch.tensor([0.3, -1.2, 2.0], requires_grad=True)
f = (torch.sin(x) * x ** 2).sum()
(g,) = torch.autograd.grad(f, x, create_graph=True)
print("grad requires_grad:", g.requires_grad, "grad_fn is set:", g.grad_fn is not None)
v = torch.tensor([1.0, 0.0, -1.0])
(hvp,) = torch.autograd.grad(g, x, grad_outputs=v)
expected = (2 * torch.sin(x) + 4 * x * torch.cos(x) - x ** 2 * torch.sin(x)) * v
print("hvp:", hvp)
print("hvp matches closed form:", torch.allclose(hvp, expected.detach(), atol=1e-5))

torch.manual_seed(0)
rng = np.random.default_rng(0)
critic = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
opt = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
lambda_gp = 10.0


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(interp)
    grads = torch.autograd.grad(outputs=out, inputs=interp, grad_outputs=torch.ones_like(out),
                                create_graph=True, retain_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean(), grads.norm(2, dim=1).mean()


for step in range(150):
    real = torch.from_numpy(rng.normal([2.0, 2.0], 0.3, size=(64, 2)).astype(np.float32))
    fake = torch.from_numpy(rng.normal([-2.0, 0.0], 0.3, size=(64, 2)).astype(np.float32))
    gp, gnorm = gradient_penalty(critic, real, fake)
    w_dist = critic(real).mean() - critic(fake).mean()
    loss = -w_dist + lambda_gp * gp
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 30 == 29 and step > 30:
        print(f"step {step:3d} W-dist {w_dist.item():.3f} GP {gp.item():.4f} "
              f"|grad| {gnorm.item():.3f}")
print("critic separates:", w_dist.item() > 1.0, "| gradient norm near 1:",
      abs(gnorm.item() - 1.0) < 0.3)
print("first-layer grad shape:", critic[0].weight.grad.shape)
