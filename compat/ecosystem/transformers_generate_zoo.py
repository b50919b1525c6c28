# compat: rtol=2e-3 atol=2e-4 timeout=2400 requires=transformers slow
"""transformers generation across model families: 21 decoder LMs and 3 encoder-decoders, each
built tiny from its config with numpy weights: greedy `generate` with the default cache, and
with the static cache for the decoder LMs (not Jamba, whose hybrid cache has no static form).
`python transformers_generate_zoo.py Name...` runs a subset."""

import sys
import traceback

import numpy as np
import torch
import transformers as T

from _common import fill_from_numpy
from _zoo import D, LM, S2S

only = sys.argv[1:]
ids = torch.from_numpy(np.random.default_rng(3).integers(3, 99, (2, 6)))
for cfg_name, model_name, kw in LM + S2S:
    if only and not any(o in model_name for o in only):
        continue
    try:
        args = dict(D)
        args.update(kw)
        cfg = getattr(T, cfg_name)(**args)
        m = getattr(T, model_name)(cfg)
        fill_from_numpy(m, seed=0, scale=0.3)
        m.eval()
        with torch.no_grad():
            g = m.generate(ids, max_new_tokens=5, do_sample=False, pad_token_id=0)
            g2 = None
            if model_name.endswith("CausalLM") and "Jamba" not in model_name:
                g2 = m.generate(ids, max_new_tokens=3, do_sample=False, pad_token_id=0,
                                cache_implementation="static")
        print(model_name, g.tolist(), None if g2 is None else g2.tolist())
    except Exception as e:  # noqa: BLE001 - a model that fails is reported, the sweep goes on
        print(model_name, "ERROR", type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
        traceback.print_exc()
    sys.stdout.flush()
