# compat: rtol=0.35 atol=0.15
"""A 1-D GAN: the generator learns N(3, 0.5) from noise; two Adam optimizers, BCEWithLogitsLoss,
detach() for the discriminator step, label smoothing."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
latent_dim = 4


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(latent_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
            nn.Linear(32, 1))

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(1, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.main(x)


netG, netD = Generator(), Discriminator()
print(netG)
print(netD)
criterion = nn.BCEWithLogitsLoss()
optD = torch.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
batch = 128
real_label, fake_label = 0.9, 0.0

for step in range(600):
    real = torch.from_numpy(rng.normal(3.0, 0.5, size=(batch, 1)).astype(np.float32))
    noise = torch.from_numpy(rng.standard_normal((batch, latent_dim)).astype(np.float32))
    # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    label = torch.full((batch, 1), real_label)
    errD_real = criterion(netD(real), label)
    errD_real.backward()
    fake = netG(noise)
    label.fill_(fake_label)
    errD_fake = criterion(netD(fake.detach()), label)
    errD_fake.backward()
    errD = errD_real + errD_fake
    optD.step()
    # (2) update G: maximize log(D(G(z)))
    netG.zero_grad()
    label.fill_(1.0)
    errG = criterion(netD(fake), label)
    errG.backward()
    optG.step()
    if step % 150 == 149:
        print(f"[{step}/600] Loss_D: {errD.item():.3f} Loss_G: {errG.item():.3f}")

with torch.no_grad():
    z = torch.from_numpy(np.random.default_rng(1).standard_normal((2000, latent_dim))).float()
    samples = netG(z)
mean, std = samples.mean().item(), samples.std().item()
print(f"generated mean {mean:.2f} std {std:.2f}")
print("mean close to 3:", abs(mean - 3.0) < 0.4, "| fake requires_grad:", fake.requires_grad,
      "| D grads set:", all(p.grad is not None for p in netD.parameters()))
