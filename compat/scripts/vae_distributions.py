# compat: rtol=0.3 atol=0.3
"""A VAE written with torch.distributions: Independent Normal posterior, rsample, analytic KL."""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Independent, Normal, kl_divergence

LATENT = 4


class Encoder(nn.Module):
    def __init__(self, d_in=36, hidden=32, latent=LATENT):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh())
        self.loc = nn.Linear(hidden, latent)
        self.log_scale = nn.Linear(hidden, latent)

    def forward(self, x):
        h = self.body(x)
        # a diagonal Gaussian: batch of independent latent dims -> one event of size LATENT
        return Independent(Normal(self.loc(h), self.log_scale(h).exp()), 1)


class Decoder(nn.Module):
    def __init__(self, d_out=36, hidden=32, latent=LATENT):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, hidden), nn.Tanh(), nn.Linear(hidden, d_out))

    def forward(self, z):
        return Independent(Bernoulli(logits=self.net(z)), 1)


def make_images(rng, n):
    """6x6 binary images: one filled rectangle each."""
    imgs = np.zeros((n, 6, 6), dtype=np.float32)
    for i in range(n):
        r0, c0 = rng.integers(0, 4, size=2)
        h, w = rng.integers(2, 4, size=2)
        imgs[i, r0:r0 + h, c0:c0 + w] = 1.0
    return torch.from_numpy(imgs.reshape(n, 36))


# --- the distributions on fixed numbers (deterministic) ---
loc = torch.tensor([[0.5, -1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0]])
scale = torch.tensor([[1.0, 0.5, 2.0, 1.5], [1.0, 1.0, 1.0, 1.0]])
q = Independent(Normal(loc, scale), 1)
prior = Independent(Normal(torch.zeros(LATENT), torch.ones(LATENT)), 1)
print("q:", q)
print("batch_shape", q.batch_shape, "event_shape", q.event_shape)
print("prior batch/event:", prior.batch_shape, prior.event_shape)
kl = kl_divergence(q, prior)
closed = 0.5 * (scale.pow(2) + loc.pow(2) - 1 - 2 * scale.log()).sum(-1)
print("kl:", kl, kl.shape)
print("matches closed form:", torch.allclose(kl, closed, atol=1e-6))
x0 = torch.tensor([[0.0, 0.0, 0.0, 0.0], [1.0, -1.0, 0.5, 2.0]])
print("log_prob:", q.log_prob(x0))
print("entropy:", q.entropy())
print("mean/stddev:", q.mean[0], q.stddev[0])
lik = Independent(Bernoulli(logits=torch.tensor([[2.0, -1.0, 0.0]])), 1)
print("bernoulli log_prob:", lik.log_prob(torch.tensor([[1.0, 0.0, 1.0]])))

torch.manual_seed(0)
z = q.rsample()
print("rsample:", z.shape, z.dtype, "requires_grad through loc:",
      Independent(Normal(loc.clone().requires_grad_(), scale), 1).rsample().requires_grad)
zs = q.rsample((4000,))
print("rsample((4000,)):", zs.shape)
print("sample mean ~ loc:", torch.allclose(zs.mean(0), loc, atol=0.15))
print("sample std ~ scale:", torch.allclose(zs.std(0), scale, atol=0.15))
print("sample() requires_grad:", q.sample().requires_grad)

# --- training ---
rng = np.random.default_rng(1)
train = make_images(rng, 256)
test = make_images(rng, 32)
print("data:", train.shape, train.dtype, f"mean pixel {train.mean().item():.4f}")

torch.manual_seed(0)
enc, dec = Encoder(), Decoder()
params = list(enc.parameters()) + list(dec.parameters())
opt = torch.optim.Adam(params, lr=1e-2)


def elbo(x):
    qz = enc(x)
    z = qz.rsample()
    rec = dec(z).log_prob(x)
    kl = kl_divergence(qz, prior)
    return (rec - kl).mean(), rec.mean(), kl.mean()


for epoch in range(1, 16):
    total = 0.0
    for i in range(0, 256, 32):
        x = train[i:i + 32]
        e, _, _ = elbo(x)
        loss = -e
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * x.shape[0]
    if epoch % 5 == 0:
        print(f"epoch {epoch:2d} -elbo {total / 256:.3f}")

with torch.no_grad():
    e, rec, kl = elbo(test)
    print(f"test -elbo {-e.item():.3f} rec {rec.item():.3f} kl {kl.item():.3f}")
    print("kl nonnegative:", kl.item() >= 0)
    qz = enc(test)
    print("posterior:", type(qz).__name__, qz.batch_shape, qz.event_shape)
    samples = dec(prior.sample((8,))).mean
    print("decoded prior samples:", samples.shape, samples.dtype,
          bool(((samples >= 0) & (samples <= 1)).all()))
