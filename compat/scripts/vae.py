# compat: rtol=0.35 atol=0.5
"""A fully-connected VAE on synthetic 8x8 'bars' images: reparameterisation trick, BCE + KL."""
import numpy as np
import torch
from torch import nn, optim
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self, d_in=64, hidden=48, latent=6):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc_mu = nn.Linear(hidden, latent)
        self.fc_logvar = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, d_in)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld, bce, kld


def bars(rng, n):
    imgs = np.zeros((n, 8, 8), dtype=np.float32)
    for i in range(n):
        for r in rng.choice(8, size=2, replace=False):
            if rng.random() < 0.5:
                imgs[i, r, :] = 1.0
            else:
                imgs[i, :, r] = 1.0
    return torch.from_numpy(imgs).unsqueeze(1)


rng = np.random.default_rng(0)
train = bars(rng, 512)
test = bars(rng, 128)
print("data:", train.shape, train.dtype, "mean pixel:", round(train.mean().item(), 4))

torch.manual_seed(0)
model = VAE()
optimizer = optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(1, 21):
    model.train()
    train_loss = 0.0
    for i in range(0, 512, 64):
        data = train[i:i + 64]
        optimizer.zero_grad()
        recon, mu, logvar = model(data)
        loss, _, _ = loss_function(recon, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    if epoch % 5 == 0:
        print(f"====> Epoch: {epoch} Average loss: {train_loss / 512:.4f}")

model.eval()
with torch.no_grad():
    recon, mu, logvar = model(test)
    loss, bce, kld = loss_function(recon, test, mu, logvar)
    print(f"====> Test set loss: {loss.item() / 128:.4f}")
    print("bce, kld positive:", bce.item() > 0, kld.item() > 0)
    sample = model.decode(torch.randn(16, 6)).view(16, 1, 8, 8)
    print("samples:", sample.shape, sample.dtype, "in [0, 1]:",
          bool(((sample >= 0) & (sample <= 1)).all()))
    binar = (recon > 0.5).float()
    pixel_acc = (binar == test.view(-1, 64)).float().mean().item()
print(f"reconstruction pixel accuracy: {pixel_acc:.3f}; above 0.85: {pixel_acc > 0.85}")
