# compat: rtol=1e-4 atol=1e-5 timeout=300 requires=x_transformers
"""x-transformers, the quick case: a tiny TransformerWrapper(Decoder) with rotary embeddings
computes logits and an AutoregressiveWrapper loss with its gradients (the training and
generation loop is x_transformers_train_generate.py, marked slow)."""

import numpy as np
import torch
from x_transformers import AutoregressiveWrapper, Decoder, TransformerWrapper

rng = np.random.default_rng(1)
net = TransformerWrapper(num_tokens=24, max_seq_len=12,
                         attn_layers=Decoder(dim=8, depth=1, heads=2, rotary_pos_emb=True))
model = AutoregressiveWrapper(net)
with torch.no_grad():
    for name, p in sorted(model.named_parameters()):
        values = np.ones(p.shape) if name.endswith("gamma") else rng.standard_normal(p.shape) * 0.2
        p.copy_(torch.from_numpy(values.astype(np.float32)))
data = torch.from_numpy(rng.integers(0, 24, size=(2, 12)).astype(np.int64))
logits = net(data[:, :6])
print("logits", tuple(logits.shape), [round(v, 4) for v in logits[1, -1, :5].tolist()])
loss = model(data)
loss.backward()
grads = {n: p.grad.norm().item() for n, p in model.named_parameters() if p.grad is not None}
print("loss", round(loss.item(), 5), "grads", len(grads))
for n in sorted(grads)[:4]:
    print(n, round(grads[n], 5))
