# compat: rtol=2e-3 atol=2e-4 timeout=600 requires=transformers
"""transformers Llama (grouped-query attention, RoPE, RMSNorm, SwiGLU): loss with labels,
backward, an optimizer step, greedy generation with the default dynamic KV cache (each step
feeds one token), and generation that agrees with a full forward pass."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from _common import fill_from_numpy, grad_norm, ids, summary

cfg = LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                  bos_token_id=1, eos_token_id=2, pad_token_id=0, rope_theta=10000.0)
model = LlamaForCausalLM(cfg)
fill_from_numpy(model, seed=4, scale=0.05)
x = ids(2, 10, cfg.vocab_size, seed=5)
out = model(x, labels=x)
print(f"loss {out.loss.item():.6f}")
summary("logits", out.logits)
out.loss.backward()
print(f"grad norm {grad_norm(model):.6f}")
torch.optim.SGD(model.parameters(), lr=0.5).step()
print(f"loss after step {model(x, labels=x).loss.item():.6f}")

model.eval()
prompt = x[:, :5]
with torch.no_grad():
    gen = model.generate(prompt, max_new_tokens=10, do_sample=False)
    full = model(gen).logits
print("greedy", gen.tolist())
# Greedy decoding with the KV cache picks what a full forward pass over the result predicts.
print("cache agrees", torch.equal(full[:, 4:-1].argmax(-1), gen[:, 5:]))
