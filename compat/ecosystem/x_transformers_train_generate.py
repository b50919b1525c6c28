# compat: rtol=1e-4 atol=1e-5 timeout=400 slow requires=x_transformers
"""x-transformers as its users use it: a tiny TransformerWrapper(Decoder) in an
AutoregressiveWrapper trains a few Adam steps on synthetic tokens, then generates greedily
(the weights come from numpy, so both runs compute on the same numbers)."""

import numpy as np
import torch
from x_transformers import AutoregressiveWrapper, Decoder, TransformerWrapper

rng = np.random.default_rng(0)
net = TransformerWrapper(num_tokens=32, max_seq_len=16,
                         attn_layers=Decoder(dim=16, depth=1, heads=2, rotary_pos_emb=True))
model = AutoregressiveWrapper(net)
with torch.no_grad():
    for name, p in sorted(model.named_parameters()):
        values = np.ones(p.shape) if name.endswith("gamma") else rng.standard_normal(p.shape) * 0.1
        p.copy_(torch.from_numpy(values.astype(np.float32)))
print("parameters", sum(p.numel() for p in model.parameters()))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.from_numpy(rng.integers(0, 32, size=(4, 16)).astype(np.int64))
for step in range(2):
    loss = model(data)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", step, "loss", round(loss.item(), 5))
model.eval()
with torch.no_grad():
    logits = net(data[:2, :8])
print("logits", tuple(logits.shape), [round(v, 4) for v in logits[0, -1, :4].tolist()])
out = model.generate(data[:1, :4], 4, temperature=0.0)
print("generated", out.tolist())
