# compat: rtol=2e-3 atol=2e-4 timeout=600 requires=transformers
"""transformers Llama with attn_implementation="flex_attention" (block masks from
masking_utils, GQA, transformers' score_mod): logits agree with "eager" and "sdpa" on the
same weights, with and without a padding mask. (No generation: PyTorch 2.13's CPU flex kernel
fails to compile for the dynamic lengths of generate.)"""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from _common import fill_from_numpy, ids, summary

models = {}
for impl in ("eager", "sdpa", "flex_attention"):
    cfg = LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      bos_token_id=1, eos_token_id=2, pad_token_id=0, attn_implementation=impl)
    m = LlamaForCausalLM(cfg)
    fill_from_numpy(m, seed=4, scale=0.05)
    models[impl] = m.eval()
print("implementations", [m.config._attn_implementation for m in models.values()])

x = ids(2, 12, cfg.vocab_size, seed=5)
pad = torch.ones(2, 12, dtype=torch.long)
pad[1, :4] = 0                     # the second sequence is left-padded by 4
with torch.no_grad():
    for name, mask in (("no mask", None), ("padding", pad)):
        logits = {k: m(x, attention_mask=mask).logits for k, m in models.items()}
        summary(f"flex logits, {name}", logits["flex_attention"])
        for ref in ("eager", "sdpa"):
            a, b = logits["flex_attention"], logits[ref]
            if mask is not None:   # padded query rows attend to nothing: compare real tokens
                a, b = a[pad.bool()], b[pad.bool()]
            print(f"flex vs {ref} ({name}): max diff below 1e-5:",
                  bool((a - b).abs().max() < 1e-5))

