# compat: rtol=2e-3 atol=2e-4 timeout=600 requires=transformers
"""transformers ViT image classification: patch embedding by convolution, loss with labels,
backward, a step, and the attentions it can return."""

import numpy as np
import torch
from transformers import ViTConfig, ViTForImageClassification

from _common import fill_from_numpy, grad_norm, summary

cfg = ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32,
                num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, num_labels=5,
                hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
model = ViTForImageClassification(cfg)
model.set_attn_implementation("eager")     # attentions are returned by the eager path
fill_from_numpy(model, seed=9, scale=0.05)
rng = np.random.default_rng(10)
pixels = torch.from_numpy(rng.standard_normal((2, 3, 16, 16)).astype(np.float32))
labels = torch.tensor([1, 4])
out = model(pixel_values=pixels, labels=labels, output_attentions=True)
print(f"loss {out.loss.item():.6f}")
summary("logits", out.logits, k=10)
print("attentions", len(out.attentions), list(out.attentions[0].shape),
      f"{out.attentions[0].sum(-1).mean().item():.5f}")
out.loss.backward()
print(f"grad norm {grad_norm(model):.6f}")
torch.optim.AdamW(model.parameters(), lr=1e-2).step()
print(f"loss after step {model(pixel_values=pixels, labels=labels).loss.item():.6f}")
