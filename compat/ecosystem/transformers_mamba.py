# compat: rtol=2e-3 atol=2e-4 timeout=600 requires=transformers
"""transformers Mamba and FalconMamba (selective state-space layers through the library's
PyTorch reference path: causal depthwise convolution, discretised scan, gating; each forward
imports `torch._higher_order_ops.associative_scan`): loss with labels, backward, an optimizer
step, and greedy generation with the recurrent cache (one token per step)."""

import torch
from transformers import FalconMambaConfig, FalconMambaForCausalLM, MambaConfig, MambaForCausalLM

from _common import fill_from_numpy, grad_norm, ids, summary

for seed, (config_cls, model_cls) in enumerate(((MambaConfig, MambaForCausalLM),
                                                (FalconMambaConfig, FalconMambaForCausalLM))):
    cfg = config_cls(vocab_size=61, hidden_size=16, state_size=4, num_hidden_layers=2, expand=2,
                     conv_kernel=3, time_step_rank=4, bos_token_id=0, eos_token_id=0,
                     pad_token_id=0)
    model = model_cls(cfg)
    fill_from_numpy(model, seed=10 + seed, scale=0.1)
    x = ids(2, 9, cfg.vocab_size, seed=20 + seed)
    out = model(x, labels=x)
    print(model_cls.__name__, f"loss {out.loss.item():.6f}")
    summary("logits", out.logits)
    out.loss.backward()
    print(f"grad norm {grad_norm(model):.6f}")
    torch.optim.SGD(model.parameters(), lr=0.5).step()
    print(f"loss after step {model(x, labels=x).loss.item():.6f}")
    model.eval()
    with torch.no_grad():
        gen = model.generate(x[:, :4], max_new_tokens=6, do_sample=False)
    print("greedy", gen.tolist())
