# compat: rtol=2e-3 atol=2e-4 timeout=600 requires=transformers,safetensors
"""transformers GPT-2 as its users drive it: a tiny config, loss with labels, backward, an
AdamW step, greedy and sampled `generate` with the default dynamic KV cache, and a
`save_pretrained`/`from_pretrained` round trip through safetensors."""

import tempfile

import torch
from transformers import GPT2Config, GPT2LMHeadModel

from _common import fill_from_numpy, grad_norm, ids, summary

cfg = GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=97, n_positions=64,
                 resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=1, eos_token_id=2)
model = GPT2LMHeadModel(cfg)
fill_from_numpy(model)
print(type(model).__name__, sum(p.numel() for p in model.parameters()))

x = ids(2, 12, cfg.vocab_size)
out = model(x, labels=x)
print(f"loss {out.loss.item():.6f}")
summary("logits", out.logits)
out.loss.backward()
print(f"grad norm {grad_norm(model):.6f}")

opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
opt.step()
opt.zero_grad()
print(f"loss after step {model(x, labels=x).loss.item():.6f}")

model.eval()
prompt = x[:, :4]
with torch.no_grad():
    greedy = model.generate(prompt, max_new_tokens=8, do_sample=False, pad_token_id=0)
print("greedy", greedy.tolist())
torch.manual_seed(0)
with torch.no_grad():
    sampled = model.generate(prompt, max_new_tokens=8, do_sample=True, top_k=20,
                             pad_token_id=0)
print("sampled", list(sampled.shape), bool(((sampled >= 0) & (sampled < 97)).all()),
      torch.equal(sampled[:, :4], prompt))

with tempfile.TemporaryDirectory() as d:
    model.save_pretrained(d)
    again = GPT2LMHeadModel.from_pretrained(d)
    again.eval()
    with torch.no_grad():
        a, b = model(x).logits, again(x).logits
    print("reloaded", type(again).__name__, torch.allclose(a, b, atol=1e-6),
          again.transformer.wpe.weight.device.type)
