# compat: rtol=0.3 atol=0.02
"""A convolutional autoencoder: strided Conv2d + GroupNorm down, ConvTranspose2d and
F.interpolate up, MSE loss, OneCycleLR; denoising of synthetic 16x16 blob images."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def blobs(rng, n, size=16):
    yy, xx = np.mgrid[0:size, 0:size]
    imgs = np.zeros((n, 1, size, size), dtype=np.float32)
    for i in range(n):
        for _ in range(2):
            cy, cx = rng.uniform(3, size - 3, size=2)
            r = rng.uniform(1.5, 3.5)
            imgs[i, 0] += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r ** 2))
    return torch.from_numpy(np.clip(imgs, 0, 1))


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.GroupNorm(2, 8), nn.SiLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.GroupNorm(4, 16), nn.SiLU(),
        )
        self.up1 = nn.ConvTranspose2d(16, 8, kernel_size=4, stride=2, padding=1)
        self.out = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        z = self.encoder(x)
        h = F.silu(self.up1(z))
        h = F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=False)
        return torch.sigmoid(self.out(h)), z


rng = np.random.default_rng(5)
clean = blobs(rng, 192)
noisy = (clean + 0.2 * torch.from_numpy(rng.standard_normal(clean.shape).astype(np.float32)))
print("images:", clean.shape, "range:", round(clean.min().item(), 3), round(clean.max().item(), 3))

torch.manual_seed(0)
model = AutoEncoder()
print(model)
recon, z = model(noisy[:4])
print("latent:", z.shape, "reconstruction:", recon.shape)

epochs, steps = 8, 6
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-2, total_steps=epochs * steps)
baseline = F.mse_loss(noisy, clean).item()
for epoch in range(epochs):
    total = 0.0
    for i in range(steps):
        xb, yb = noisy[i * 32:(i + 1) * 32], clean[i * 32:(i + 1) * 32]
        out, _ = model(xb)
        loss = F.mse_loss(out, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        total += loss.item()
    if epoch % 2 == 1:
        print(f"epoch {epoch} mse {total / steps:.4f} lr {sched.get_last_lr()[0]:.6f}")
print(f"noisy-input mse {baseline:.4f}")
with torch.no_grad():
    denoised, _ = model(noisy)
final = F.mse_loss(denoised, clean).item()
print(f"denoised mse {final:.4f}; better than the noisy input: {final < baseline}")
