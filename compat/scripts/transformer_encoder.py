# compat: rtol=0.3 atol=0.1
"""Sequence tagging with nn.TransformerEncoder: sinusoidal positions, padding masks, warmup."""
import math

import numpy as np
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64, dropout=0.1):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0)]
        return self.dropout(x)


class Tagger(nn.Module):
    """Tags every position with whether token 1 occurs anywhere in its sequence."""

    def __init__(self, vocab, d_model=32, nhead=4, layers=2, n_tags=2):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(vocab, d_model, padding_idx=0)
        self.pos = PositionalEncoding(d_model, dropout=0.0)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=64, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.out = nn.Linear(d_model, n_tags)

    def forward(self, src, pad_mask):
        h = self.embed(src) * math.sqrt(self.d_model)
        h = self.encoder(self.pos(h), src_key_padding_mask=pad_mask)
        return self.out(h)


rng = np.random.default_rng(3)
vocab, T, N = 8, 10, 256
tokens = rng.integers(1, vocab, size=(T, N))
lens = rng.integers(5, T + 1, size=N)
pad_mask = np.arange(T)[None, :] >= lens[:, None]       # (N, T), True = padding
tokens[pad_mask.T] = 0
tags = np.broadcast_to((tokens == 1).any(0), tokens.shape).astype(np.int64)
tags[pad_mask.T] = -100                                  # ignored by the loss
src = torch.from_numpy(tokens)
mask = torch.from_numpy(pad_mask)
tgt = torch.from_numpy(tags)
print("src", tuple(src.shape), src.dtype, "mask", mask.dtype, "padding:", int(mask.sum()))

torch.manual_seed(0)
model = Tagger(vocab)
print(model.encoder.layers[0])
print("encoder params:", sum(p.numel() for p in model.encoder.parameters()))
print("pe buffer:", model.pos.pe.shape, "persistent:", "pos.pe" in model.state_dict())

opt = torch.optim.Adam(model.parameters(), lr=5e-3)
warmup = 8
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup))
loss_fn = nn.CrossEntropyLoss(ignore_index=-100)
for step in range(80):
    cols = slice((step * 64) % N, (step * 64) % N + 64)
    logits = model(src[:, cols], mask[cols])
    loss = loss_fn(logits.reshape(-1, 2), tgt[:, cols].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    pred = model(src, mask).argmax(-1)
    valid = tgt != -100
    acc = (pred[valid] == tgt[valid]).float().mean().item()
print(f"token accuracy {acc:.3f}; above 0.95: {acc > 0.95}")
