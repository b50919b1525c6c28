# compat: rtol=1e-4 atol=1e-5
"""Custom autograd.Functions (a clamp with straight-through gradient, a numerically stable
log-sum-exp with a saved-tensor backward, a function with non-tensor args and
mark_non_differentiable), checked with gradcheck and used inside a small model."""
import torch
from torch.autograd import Function, gradcheck


class StraightThroughClamp(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None, None


class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x):
        m = x.max(dim=-1, keepdim=True).values
        out = m + (x - m).exp().sum(dim=-1, keepdim=True).log()
        ctx.save_for_backward(x, out)
        return out.squeeze(-1)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        return grad.unsqueeze(-1) * (x - out).exp()


class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort(dim=-1)
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, grad_values, grad_idx):
        (idx,) = ctx.saved_tensors
        grad_in = torch.zeros_like(grad_values)
        grad_in.scatter_(-1, idx, grad_values)
        return grad_in


x = torch.linspace(-2, 2, 9, requires_grad=True)
y = StraightThroughClamp.apply(x, -1.0, 1.0)
y.sum().backward()
print("clamped:", y)
print("grad (straight-through):", x.grad)
print("grad_fn name:", type(y.grad_fn).__name__)

inp = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 10.0]], dtype=torch.float64, requires_grad=True)
lse = LogSumExp.apply(inp)
print("logsumexp:", lse)
print("matches torch.logsumexp:", torch.allclose(lse, torch.logsumexp(inp, dim=-1)))
print("gradcheck LogSumExp:", gradcheck(LogSumExp.apply, (inp,), eps=1e-6, atol=1e-4))

v = torch.tensor([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]], dtype=torch.float64, requires_grad=True)
vals, idx = SortWithIndices.apply(v)
print("sorted:", vals.detach(), idx)
print("idx requires_grad:", idx.requires_grad, "| vals requires_grad:", vals.requires_grad)
(vals * torch.arange(3.0, dtype=torch.float64)).sum().backward()
print("sort grad:", v.grad)
print("gradcheck Sort:", gradcheck(lambda t: SortWithIndices.apply(t)[0], (v.detach().clone()
      .requires_grad_(),)))

# Use inside a model: a quantised linear layer trained through the straight-through clamp.
torch.manual_seed(0)
w = torch.nn.Parameter(torch.tensor([[0.5, -0.25], [0.1, 0.9]]))
data = torch.tensor([[1.0, 2.0], [0.5, -1.0], [-2.0, 0.3]])
target = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
opt = torch.optim.SGD([w], lr=0.1)
for step in range(5):
    out = StraightThroughClamp.apply(data @ w, -1.0, 1.0)
    loss = torch.nn.functional.mse_loss(out, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
print("final w:", w.data)
