# compat: rtol=1e-3 atol=1e-4
"""Polynomial and logistic regression fitted with LBFGS (closure API, strong-Wolfe line search).
Parameters start at zero, so the whole run is deterministic and compared tightly."""
import numpy as np
import torch

rng = np.random.default_rng(42)
x_np = np.linspace(-1, 1, 100)
y_np = 0.5 - 1.5 * x_np + 2.0 * x_np ** 3 + 0.05 * rng.standard_normal(100)
x = torch.tensor(x_np, dtype=torch.float64)
y = torch.tensor(y_np, dtype=torch.float64)
features = torch.stack([x ** k for k in range(4)], dim=1)
print("design matrix:", features.shape, features.dtype)


class PolyModel(torch.nn.Module):
    def __init__(self, degree):
        super().__init__()
        self.coef = torch.nn.Parameter(torch.zeros(degree + 1, dtype=torch.float64))

    def forward(self, feats):
        return feats @ self.coef


model = PolyModel(3)
optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=50, history_size=10,
                              line_search_fn="strong_wolfe")
evals = []


def closure():
    optimizer.zero_grad()
    loss = torch.mean((model(features) - y) ** 2)
    loss.backward()
    evals.append(loss.item())
    return loss


for i in range(3):
    loss = optimizer.step(closure)
    print(f"outer step {i}: loss {loss.item():.6e}")
print("coefficients:", [round(c, 4) for c in model.coef.detach().tolist()])
lstsq = torch.linalg.lstsq(features, y.unsqueeze(1)).solution.squeeze(1)
print("matches least squares:", torch.allclose(model.coef.detach(), lstsq, atol=1e-4))
print("function evaluations > 3:", len(evals) > 3)

# Logistic regression on separable-ish data, float32, default LBFGS (no line search).
X = torch.from_numpy(rng.standard_normal((200, 3)).astype(np.float32))
w_true = torch.tensor([2.0, -1.0, 0.5])
labels = (X @ w_true + 0.3 * torch.from_numpy(rng.standard_normal(200).astype(np.float32)) > 0)
labels = labels.float()
lin = torch.nn.Linear(3, 1)
with torch.no_grad():
    lin.weight.zero_()
    lin.bias.zero_()
opt = torch.optim.LBFGS(lin.parameters(), lr=0.5, max_iter=20)
bce = torch.nn.BCEWithLogitsLoss()


def closure2():
    opt.zero_grad()
    out = bce(lin(X).squeeze(1), labels)
    out.backward()
    return out


for i in range(4):
    loss = opt.step(closure2)
    print(f"logistic step {i}: loss {loss.item():.5f}")
acc = ((lin(X).squeeze(1) > 0).float() == labels).float().mean()
print("weights", [round(w, 4) for w in lin.weight.data.squeeze().tolist()],
      f"bias {lin.bias.item():.4f}")
print(f"train accuracy {acc.item():.3f}")
print("state keys:", sorted(opt.state_dict()["state"][0].keys()))
