# compat: rtol=2e-3 atol=2e-4 timeout=600 requires=transformers slow
"""transformers T5 (encoder-decoder, relative position buckets): loss with labels (decoder
inputs shifted from the labels), backward, a step, and greedy generation."""

import torch
from transformers import T5Config, T5ForConditionalGeneration

from _common import fill_from_numpy, grad_norm, ids, summary

cfg = T5Config(vocab_size=97, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
               num_heads=4, relative_attention_num_buckets=8, dropout_rate=0.0,
               decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
model = T5ForConditionalGeneration(cfg)
fill_from_numpy(model, seed=6, scale=0.1)
src = ids(2, 9, cfg.vocab_size, seed=7)
tgt = ids(2, 6, cfg.vocab_size, seed=8)
out = model(input_ids=src, labels=tgt)
print(f"loss {out.loss.item():.6f}")
summary("logits", out.logits)
out.loss.backward()
print(f"grad norm {grad_norm(model):.6f}")
torch.optim.Adam(model.parameters(), lr=1e-2).step()
print(f"loss after step {model(input_ids=src, labels=tgt).loss.item():.6f}")
model.eval()
with torch.no_grad():
    gen = model.generate(src, max_new_tokens=7, do_sample=False)
print("greedy", gen.tolist())
