# compat: rtol=2e-3 atol=2e-4 timeout=2400 requires=transformers slow
"""transformers across model families: 35 architectures (decoder LMs with RoPE/ALiBi/GQA/MoE/
multi-latent attention/state-space layers, encoders, encoder-decoders, vision models), each
built tiny from its config with numpy weights, in eval mode: loss with labels, backward,
gradient norm and a few logits. `python transformers_model_zoo.py Name...` runs a subset."""

import sys

import numpy as np
import torch
import transformers as T

from _common import fill_from_numpy, report
from _zoo import D, ENC, LM, S2S, VIS

only = sys.argv[1:]  # names to run (default: all)


def run(name, fn):
    if only and not any(o in name for o in only):
        return
    report(name, fn)


rng = np.random.default_rng(3)
ids = torch.from_numpy(rng.integers(3, 99, (2, 8)))
for cfg_name, model_name, kw in LM + ENC + S2S:

    def lm(cfg_name=cfg_name, model_name=model_name, kw=kw):
        args = dict(D)
        args.update(kw)
        cfg = getattr(T, cfg_name)(**args)
        m = getattr(T, model_name)(cfg)
        fill_from_numpy(m, seed=0, scale=0.05)
        m.eval()
        out = m(ids, labels=ids)
        out.loss.backward()
        g = sum(float(p.grad.double().pow(2).sum()) for p in m.parameters() if p.grad is not None)
        logits = [round(v, 5) for v in out.logits[0, -1, :3].tolist()]
        return f"loss {out.loss.item():.5f} gnorm {g**0.5:.5f} logit {logits}"

    run(model_name, lm)
img = torch.from_numpy(rng.standard_normal((2, 3, 32, 32)).astype(np.float32))
for cfg_name, model_name, kw in VIS:

    def vis(cfg_name=cfg_name, model_name=model_name, kw=kw):
        cfg = getattr(T, cfg_name)(**kw)
        m = getattr(T, model_name)(cfg)
        fill_from_numpy(m, seed=0, scale=0.05)
        m.eval()
        out = m(img, labels=torch.tensor([0, 2]))
        out.loss.backward()
        return f"loss {out.loss.item():.5f} logit {[round(v, 5) for v in out.logits[0].tolist()]}"

    run(model_name, vis)
