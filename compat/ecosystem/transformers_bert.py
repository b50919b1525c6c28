# compat: rtol=2e-3 atol=2e-4 timeout=600 requires=transformers
"""transformers BERT for sequence classification: loss with labels, attention mask with
padding, backward, an AdamW step and a second loss."""

import numpy as np
import torch
from transformers import BertConfig, BertForSequenceClassification

from _common import fill_from_numpy, grad_norm, ids, summary

cfg = BertConfig(vocab_size=101, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=64, max_position_embeddings=64, num_labels=3,
                 hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
model = BertForSequenceClassification(cfg)
fill_from_numpy(model, seed=2)
x = ids(3, 10, cfg.vocab_size, seed=3)
mask = torch.ones_like(x)
mask[1, 7:] = 0
mask[2, 4:] = 0
labels = torch.tensor([0, 2, 1])
out = model(input_ids=x, attention_mask=mask, labels=labels)
print(f"loss {out.loss.item():.6f}")
summary("logits", out.logits, k=9)
out.loss.backward()
print(f"grad norm {grad_norm(model):.6f}")
opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)
opt.step()
out2 = model(input_ids=x, attention_mask=mask, labels=labels)
print(f"loss after step {out2.loss.item():.6f}")
model.eval()
with torch.no_grad():
    pred = model(input_ids=x, attention_mask=mask).logits.argmax(-1)
print("predictions", pred.tolist())
hidden = model.bert(input_ids=x, attention_mask=mask, output_hidden_states=True).hidden_states
print("hidden states", len(hidden), list(hidden[-1].shape))
print("np", np.round(hidden[-1][0, 0, :4].detach().numpy(), 4).tolist())
