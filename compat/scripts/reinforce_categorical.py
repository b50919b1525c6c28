# compat: rtol=1e-4 atol=1e-5
"""REINFORCE on a tiny corridor world with a Categorical policy (PyTorch examples style).

Sampled actions differ between frameworks, so what is printed about training is either
computed on a fixed trajectory or a robust fact about the learned policy.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

N_CELLS, START, GOAL, PIT = 6, 2, 5, 0
GAMMA = 0.9


class Corridor:
    """Move left (0) or right (1); the right end pays +1, the left end -1, each step -0.05."""

    def reset(self):
        self.pos = START
        self.t = 0
        return self.obs()

    def obs(self):
        o = np.zeros(N_CELLS, dtype=np.float32)
        o[self.pos] = 1.0
        return o

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        self.t += 1
        if self.pos == GOAL:
            return self.obs(), 1.0, True
        if self.pos == PIT:
            return self.obs(), -1.0, True
        return self.obs(), -0.05, self.t >= 12


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(N_CELLS, 16)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        return self.affine2(F.relu(self.affine1(x)))


def discounted(rewards):
    R, out = 0.0, []
    for r in reversed(rewards):
        R = r + GAMMA * R
        out.insert(0, R)
    return torch.tensor(out)


def reinforce_loss(log_probs, returns, baseline):
    return -(torch.stack(log_probs) * (returns - baseline)).sum()


# --- Categorical on fixed numbers ---
logits = torch.tensor([[1.0, 0.0, -1.0], [0.2, 0.2, 0.2]])
d = Categorical(logits=logits)
print(d)
print("batch_shape", d.batch_shape, "event_shape", d.event_shape)
print("probs", d.probs)
print("normalised logits", d.logits)
acts = torch.tensor([0, 2])
print("log_prob", d.log_prob(acts), "entropy", d.entropy())
print("log_prob broadcast", d.log_prob(torch.tensor([[0], [1], [2]])).shape)
p = Categorical(probs=torch.tensor([2.0, 1.0, 1.0]))
print("probs normalised", p.probs, "mean/variance nan:", p.mean.isnan().item())
print("support", p.enumerate_support())
torch.manual_seed(0)
s = d.sample()
print("sample", s.shape, s.dtype, "in range:", bool(((s >= 0) & (s < 3)).all()))
s = p.sample((2000,))
print("sample((2000,))", s.shape, s.dtype)
freq = torch.bincount(s, minlength=3).float() / 2000
print("frequencies near probs:", torch.allclose(freq, p.probs, atol=0.05))

# --- a reproducible policy (weights from numpy) and one fixed trajectory ---
rng = np.random.default_rng(0)
policy = Policy()
with torch.no_grad():
    for prm in policy.parameters():
        prm.copy_(torch.from_numpy(rng.normal(0.0, 0.4, size=tuple(prm.shape)).astype(np.float32)))
env = Corridor()
state = env.reset()
fixed_actions = [1, 0, 1, 1, 1]
log_probs, rewards = [], []
for a in fixed_actions:
    dist = Categorical(logits=policy(torch.from_numpy(state)))
    log_probs.append(dist.log_prob(torch.tensor(a)))
    state, r, done = env.step(a)
    rewards.append(r)
print("fixed trajectory rewards", rewards, "done", done)
returns = discounted(rewards)
print("returns", returns)
loss = reinforce_loss(log_probs, returns, returns.mean())
loss.backward()
print(f"fixed-trajectory loss {loss.item():.6f}")
print(f"grad norm {torch.nn.utils.clip_grad_norm_(policy.parameters(), 100.0).item():.6f}")
policy.zero_grad()

# --- training by sampling ---
torch.manual_seed(0)
optimizer = optim.Adam(policy.parameters(), lr=3e-2)
baseline = 0.0
running = []
for _episode in range(60):
    state = env.reset()
    done = False
    while not done:
        probs = F.softmax(policy(torch.from_numpy(state)), dim=-1)
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        state, r, done = env.step(action.item())
        policy.rewards.append(r)
    returns = discounted(policy.rewards)
    ep_return = returns[0].item()
    loss = reinforce_loss(policy.saved_log_probs, returns, baseline)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    baseline = 0.9 * baseline + 0.1 * ep_return
    running.append(ep_return)
    del policy.rewards[:]
    del policy.saved_log_probs[:]
print("action dtype", action.dtype, "shape", action.shape)

# the learned policy, greedily
with torch.no_grad():
    states = torch.eye(N_CELLS)[1:GOAL]
    greedy = policy(states).argmax(dim=1)
    print("greedy actions for cells 1..4:", greedy.tolist())
    pright = F.softmax(policy(states), dim=1)[:, 1]
    print("P(right) > 0.9 everywhere:", bool((pright > 0.9).all()))
print("late episodes beat early ones:", np.mean(running[-15:]) > np.mean(running[:15]))
