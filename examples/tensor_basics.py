"""A plain PyTorch script: tensors, indexing, in-place updates through views,
dtype promotion and random numbers. Run it with `python examples/tensor_basics.py`
under PyTorch, or unmodified on JAX with `python -m jtorch examples/tensor_basics.py`."""

import torch

torch.manual_seed(0)

x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
print(x)
print(x.shape, x.dtype, x.stride())

# Views share storage: writing through them changes x.
row = x[1]
row.mul_(10)
x.t()[0].fill_(-1)
x[:, 2] = torch.tensor([7.0, 8.0, 9.0])
print(x)
print(x.is_contiguous(), x.t().is_contiguous(), x.t().stride())

# Type promotion follows PyTorch's rules.
i = torch.tensor([1, 2, 3])
print(i.dtype, (i + 1).dtype, (i + 1.5).dtype, (i / 2).dtype, (i > 1).dtype)
print(i * torch.tensor(2.0, dtype=torch.float64))
print(torch.tensor([1, 2], dtype=torch.uint8) + torch.tensor([1], dtype=torch.int8))

# Advanced indexing and masks.
m = x > 5
print(m.sum(), x[m])
print(x[[0, 2], [1, 3]])
x[x < 0] = 0
print(x)

# Reductions.
print(x.sum(), x.mean(dim=0), x.max(dim=1))

# Random numbers: same seed, same numbers.
torch.manual_seed(1)
a = torch.rand(3)
torch.manual_seed(1)
b = torch.rand(3)
print(torch.equal(a, b), a.shape, a.dtype, bool(((a >= 0) & (a < 1)).all()))
n = torch.randn(1000)
print(abs(n.mean().item()) < 0.2, 0.8 < n.std().item() < 1.2)
